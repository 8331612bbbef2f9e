"""The explorer's compare view and change columns (issue 46 item 5), in Chromium against
``svc serve`` on the real samples: Gangnam's (11680) and Jongno's (11110, one page of
May) commercial sales, plus the illustrative year-earlier copy of Gangnam's file
(``tests/http/test_realestate_changes_over_time``), so June's rows have a change against
June 2024.

Screenshots: ``explorer-changes`` (the points table with its change columns) and
``explorer-compare`` (Seoul's districts ranked, bars with their interval, the table).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, Person, signin_server, unique_email
from tests.browser.test_explorer_figures import api, choose, show
from tests.conftest import LiveServer, Templates
from tests.http.realestate_support import NRG_GANGNAM, NRG_JONGNO_PAGE
from tests.http.test_realestate_changes_over_time import LAST_YEAR

SEOUL_DISTRICTS = 25


@pytest.fixture(scope="module")
def site(
    browser_paths: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    templates: Templates,
) -> Iterator[LiveServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('compare') / 'real.db'}"
    templates.fill(url)
    files = (
        (NRG_GANGNAM.name, Path(NRG_GANGNAM).read_bytes()),
        (NRG_JONGNO_PAGE.name, Path(NRG_JONGNO_PAGE).read_bytes()),
        ("NRG_11680_202406.xml", LAST_YEAR),
    )
    with signin_server(url, [(None, name, body) for name, body in files]) as server:
        yield server


def test_the_explorer_shows_changes_and_compares_districts(person: Person) -> None:
    person.enter(unique_email("compare"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#x-district option"))
    choose(person, "District", "11680")
    choose(person, "Period kind", "month")
    person.wait.until(lambda d: "2025-06" in person.text("#x-periods"))
    choose(person, "Property type", "commercial_complex")
    choose(person, "Transaction type", "sale")
    periods = person.by_label("Periods (up to 12; the latest are chosen for you)")
    person.driver.execute_script(
        "arguments[0].forEach(o => { o.selected = ['2024-06', '2025-06'].includes(o.value); });",
        periods.find_elements("tag name", "option"),
    )
    rows = {r.get_attribute("data-period"): r for r in show(person)}
    assert set(rows) == {"2024-06", "2025-06"}
    june = rows["2025-06"]
    answer = api(
        person,
        "/api/v1/real-estate/pulse?sigungu_code=11680&period=2025-06"
        "&property_type=commercial_complex&transaction_type=sale",
    )["data"][0]
    change = answer["change_vs_year_ago_per_m2"]
    assert change["change_pct"] is not None
    cells = june.find_elements("css selector", "td")
    assert cells[-1].text.startswith(
        f"{'+' if change['change_pct'] > 0 else ''}{change['change_pct']} % on 2024-06"
    )
    assert (
        f"{change['contract_count']} vs {change['base_contract_count']} contracts" in cells[-1].text
    )
    assert "on 2025-05: not loaded" in cells[-2].text
    person.shot("explorer-changes")

    # Seoul's districts ranked: Gangnam and Jongno have figures, the others are listed.
    choose(person, "Province", "서울")
    choose(person, "Period", "last_3m")
    person.button("Compare").click()
    person.wait.until(
        lambda d: (
            len(d.find_elements("css selector", "#compare-table tbody tr[data-code]"))
            == SEOUL_DISTRICTS
        )
    )
    table = person.driver.find_elements("css selector", "#compare-table tbody tr[data-code]")
    by_code = {r.get_attribute("data-code"): r for r in table}
    answer = api(
        person,
        "/api/v1/real-estate/compare?sido=%EC%84%9C%EC%9A%B8&period=last_3m"
        "&property_type=commercial_complex&transaction_type=sale",
    )
    ranked = [r for r in answer["data"] if r["rank"] is not None]
    assert [r.get_attribute("data-code") for r in table[: len(ranked)]] == [
        r["sigungu_code"] for r in ranked
    ]
    assert by_code["11710"].get_attribute("data-status") == "not_loaded"
    assert "not loaded" in by_code["11710"].text
    bars = person.driver.find_elements(
        "css selector", "#compare-chart svg rect.compare-bar[data-code]"
    )
    assert len(bars) == len(ranked) >= 1
    if any(r["interval_low"] is not None for r in ranked):
        assert person.driver.find_elements("css selector", "#compare-chart svg line.compare-band")
    assert "listed, not dropped" in person.text("#compare-note")
    assert (
        person.driver.find_element("id", "compare-csv")
        .get_attribute("href")
        .endswith(
            "property_type=commercial_complex&transaction_type=sale&period=last_3m"
            "&sort=median_per_m2&sido=%EC%84%9C%EC%9A%B8"
        )
    )
    person.shot("explorer-compare")
    section = person.driver.find_element("id", "compare-h").find_element("xpath", "..")
    section.screenshot(str(ARTIFACTS / "explorer-compare-view.png"))
    table = person.driver.find_element("id", "points-table")
    table.screenshot(str(ARTIFACTS / "explorer-change-columns.png"))
    assert not person.console_errors()
