"""The explorer shows what the API says (issue 28 item 8), in Chromium against ``svc
serve`` on a store holding real files only (no demo note on real data; the demo's note is
checked in ``test_dashboard``):

- Gangnam's (11680) commercial sales, officetel sales and officetel leases of 2025-06:
  bulk contracts ringed and counted, a quarter with months never loaded drawn hollow and
  named, monthly leases charted on the converted deposit per pyeong with the unit in the
  label;
- the same officetel lease answer dated 2025-01 (its 339 items moved to January), so that
  cohort has 2025-01 and 2025-06 and nothing between: never-loaded months offered, drawn
  as gaps and named (issue 42);
- Jung-gu's (11140) 2025-06 sales with one malformed row, one cancelled and one partial
  share: the rejected row and the district's own exclusions named (issue 42).

One server holds them all: each test reads its own district and cohort.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Person, signin_server, unique_email
from tests.conftest import LiveServer, Templates
from tests.http.realestate_support import FIXTURES, NRG_GANGNAM, OFFI_RENT, OFFI_TRADE

Json = dict[str, Any]


@pytest.fixture(scope="module")
def site(
    browser_paths: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    templates: Templates,
) -> Iterator[LiveServer]:
    path = tmp_path_factory.mktemp("explorer") / "real.db"
    url = f"sqlite:///{path}"
    june = Path(OFFI_RENT).read_bytes()
    january = june.replace(b"<dealMonth>6</dealMonth>", b"<dealMonth>1</dealMonth>")
    junggu = FIXTURES / "rtms" / "nrg_11140_202506_rejected.xml"
    templates.fill(url)  # a copy of the migrated store
    files = (
        (NRG_GANGNAM.name, Path(NRG_GANGNAM).read_bytes()),
        (OFFI_TRADE.name, Path(OFFI_TRADE).read_bytes()),
        (OFFI_RENT.name, june),
        ("OFFICETEL_RENT_11680_202501.xml", january),
        (junggu.name, junggu.read_bytes()),
    )
    with signin_server(url, [(None, name, body) for name, body in files]) as server:
        yield server


def api(person: Person, path: str) -> Json:
    """An API answer fetched by the signed-in page (its cookie)."""
    out: Json = person.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.json()).then(done);",
        person.base + path,
    )
    return out


def choose(person: Person, label: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(person.by_label(label)).select_by_value(value)


def show(person: Person) -> list[Any]:
    """Press "Show chart" and wait for the table to be redrawn; its rows."""
    person.driver.execute_script("document.querySelector('#points-table tbody').replaceChildren()")
    person.button("Show chart").click()
    person.wait.until(
        lambda d: d.find_elements("css selector", "#points-table tbody tr[data-period]")
    )
    return list(person.driver.find_elements("css selector", "#points-table tbody tr"))


def test_the_explorer_marks_bulk_contracts_unloaded_months_and_converted_deposits(
    person: Person,
) -> None:
    person.enter(unique_email("explorer"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#x-district option"))
    assert person.by_label("District").get_attribute("value") == "11680"

    # Office sales of 2025-06: one company's purchase of 12 floors is one bulk contract.
    choose(person, "Period kind", "month")
    person.wait.until(lambda d: person.text("#coverage-table").count("2025-06") >= 1)
    choose(person, "Property type", "office")
    choose(person, "Transaction type", "sale")
    [row] = show(person)
    answer = api(
        person,
        "/api/v1/real-estate/pulse?sigungu_code=11680&period=2025-06"
        "&property_type=office&transaction_type=sale",
    )["data"][0]
    assert answer["bulk_contracts"] >= 1
    assert row.get_attribute("data-bulk") == str(answer["bulk_contracts"])
    contracts = f"{answer['contract_count']} ({answer['bulk_contracts']} bulk)"
    assert contracts in row.text and str(answer["sample_count"]) in row.text
    assert person.driver.find_elements("css selector", "#chart svg circle.chart-bulk")
    limits = person.text("#limits-list")
    assert "bulk contract" in limits and "Synthetic" not in limits
    assert not person.text("#chart-note").startswith("Synthetic")
    person.shot("explorer-bulk")

    # The quarter holds June only: drawn hollow, named incomplete with its months.
    choose(person, "Period kind", "quarter")
    person.wait.until(lambda d: "2025-Q2" in person.text("#x-periods"))
    [row] = show(person)
    assert row.get_attribute("data-status") == "incomplete"
    assert "incomplete: 1 of 3 months loaded" in row.text
    assert person.driver.find_elements("css selector", "#chart svg circle.chart-incomplete")
    assert "2025-04, 2025-05" in person.text("#chart-note")

    # Monthly officetel leases, new ones, per pyeong: the converted deposit, labelled.
    choose(person, "Period kind", "month")
    person.wait.until(lambda d: "2025-06" in person.text("#x-periods"))
    choose(person, "Property type", "officetel")
    choose(person, "Transaction type", "monthly_lease")
    assert person.by_label("Lease kind (leases only)").is_enabled()
    choose(person, "Lease kind (leases only)", "new")
    choose(person, "Chart", "pyeong")
    # the cohort also holds 2025-01 (for the gap tests): chart June alone
    periods = person.by_label("Periods (up to 12; the latest are chosen for you)")
    person.driver.execute_script(
        "arguments[0].forEach(o => { o.selected = o.value === '2025-06'; });",
        periods.find_elements("tag name", "option"),
    )
    [row] = show(person)
    label = person.text("#chart svg .chart-unit")
    assert "converted deposit" in label and "per pyeong" in label
    answer = api(
        person,
        "/api/v1/real-estate/pulse?sigungu_code=11680&period=2025-06"
        "&property_type=officetel&transaction_type=monthly_lease&lease_kind=new"
        "&area_unit=pyeong",
    )["data"][0]
    median = answer["median_converted_deposit_per_pyeong"]
    assert f"{median:,} KRW" in row.text
    link = person.driver.find_element("link text", "Download CSV of this series")
    href = str(link.get_attribute("href"))
    assert "lease_kind=new" in href and "area_unit=pyeong" in href
    person.shot("explorer-leases")

    # Sales have no lease kind to choose.
    choose(person, "Transaction type", "sale")
    assert not person.by_label("Lease kind (leases only)").is_enabled()
    assert person.console_errors() == []


def test_never_loaded_months_are_offered_drawn_as_gaps_and_named(
    person: Person,
) -> None:
    """Issue 42: the period list offers the whole range, the chart leaves each never-loaded
    month as a gap on its axis (no line joins January to June) and the note names them."""
    person.enter(unique_email("gaps"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#x-district option"))
    choose(person, "Period kind", "month")
    choose(person, "Property type", "officetel")
    choose(person, "Transaction type", "monthly_lease")
    person.wait.until(lambda d: "2025-03 (no data)" in person.text("#x-periods"))
    offered = [
        o.get_attribute("value")
        for o in person.driver.find_elements("css selector", "#x-periods option")
    ]
    assert offered == ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"]
    rows = show(person)
    never = ["2025-02", "2025-03", "2025-04", "2025-05"]
    assert [r.get_attribute("data-period") for r in rows] == offered
    assert [
        r.get_attribute("data-period")
        for r in rows
        if r.get_attribute("data-status") == "not_loaded"
    ] == never
    gaps = person.driver.find_elements(
        "css selector", "#chart svg rect.chart-gap.chart-unloaded[data-period]"
    )
    assert [g.get_attribute("data-period") for g in gaps] == never
    labels = person.driver.find_elements("css selector", "#chart svg .chart-gap-label")
    assert [label.text for label in labels] == ["not loaded"] * len(never)
    # two runs of one month each: no median line joins them across the gap
    lines = person.driver.find_elements("css selector", "#chart svg polyline.chart-median")
    assert len(lines) == 2
    xs = [
        float(str(c.get_attribute("cx")))
        for c in person.driver.find_elements("css selector", "#chart svg circle.chart-point")
    ]
    gap_xs = [float(str(g.get_attribute("x"))) for g in gaps]
    assert xs[0] < min(gap_xs) and max(gap_xs) < xs[1]  # the gaps sit between, on the axis
    note = person.text("#chart-note")
    assert "not loaded" in note and ", ".join(never) in note
    person.shot("explorer-unloaded-gaps")
    assert person.console_errors() == []


def test_the_explorer_names_rejected_rows_and_the_districts_own_exclusions(
    person: Person,
) -> None:
    """Issue 42 items 4 and 5: Jung-gu's mixed-use sales of 2025-06 are 2 contracts of a
    source with 3; the note says one was rejected, and what the API says lists Jung-gu's
    own exclusions (one cancelled deal, one partial share), not the store's."""
    person.enter(unique_email("rejected"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#x-district option"))
    choose(person, "District", "11140")
    person.wait.until(lambda d: "mixed_use" in person.text("#coverage-table"))
    choose(person, "Period kind", "month")
    choose(person, "Property type", "mixed_use")
    choose(person, "Transaction type", "sale")
    person.wait.until(lambda d: "2025-06" in person.text("#x-periods"))
    [row] = show(person)
    assert "2" in row.text
    note = person.text("#chart-note")
    assert "rejected at load as malformed (in no figure): 1 in 2025-06" in note
    limits = person.text("#limits-list")
    assert "None was excluded at ingest from this answer's districts, months and types" in limits
    choose(person, "Property type", "office")
    person.wait.until(lambda d: "2025-06" in person.text("#x-periods"))
    show(person)
    limits = person.text("#limits-list")
    assert "from this answer's districts, months and types: 1 cancelled deals." in limits
    assert "1 partial-share" not in limits  # the partial share is a retail deal
    person.shot("explorer-rejected-and-exclusions")
    assert person.console_errors() == []
