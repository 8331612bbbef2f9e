"""The explorer on land and factory/warehouse sales (issue 45), in Chromium against ``svc
serve`` on the real 양평군 (41830) land samples of 2024-08 and 2024-09 and the
factory/warehouse month built from the service's format: the property types offered are
the models', the land category and zone filters appear for land (offering what
``/dimensions`` lists with data), the use filter for factories, and a land chart is
priced per m² of land with the API's figures."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode

import pytest

from svc_core.models import PROPERTY_TYPES
from tests.browser.conftest import Person, signin_server, unique_email
from tests.browser.test_explorer_figures import api, choose, show
from tests.conftest import LiveServer, Templates
from tests.http.test_realestate_land import INDU, LAND


@pytest.fixture(scope="module")
def site(
    browser_paths: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    templates: Templates,
) -> Iterator[LiveServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('explorer-land') / 'land.db'}"
    templates.fill(url)
    files = [
        (kind, p.name, p.read_bytes())
        for p, kind in (*((p, "rtms-land") for p in LAND.values()), (INDU, "rtms-industrial"))
    ]
    with signin_server(url, files) as server:
        yield server


def shown(person: Person, label: str) -> bool:
    return bool(person.by_label(label).find_element("xpath", "..").is_displayed())


def offered(person: Person, label: str) -> list[str]:
    select = person.by_label(label)
    values = [o.get_attribute("value") for o in select.find_elements("css selector", "option")]
    return [str(v) for v in values]


def test_the_explorer_charts_land_per_m2_of_land_with_its_filters(person: Person) -> None:
    person.enter(unique_email("land"), "/dashboard/explorer")
    person.wait.until(lambda d: person.visible("#x-district option"))
    assert person.by_label("District").get_attribute("value") == "41830"
    assert offered(person, "Property type") == list(PROPERTY_TYPES)

    choose(person, "Property type", "office")
    for label in ("Use (factories and warehouses)", "Land category (지목)", "Zone (용도지역)"):
        assert not shown(person, label), label

    choose(person, "Property type", "industrial")
    assert shown(person, "Use (factories and warehouses)")
    assert offered(person, "Use (factories and warehouses)") == [
        "",
        "factory",
        "warehouse",
        "other",
    ]
    assert not shown(person, "Land category (지목)")
    assert shown(person, "Zone (용도지역)")  # factories publish their zone too

    dims = api(person, "/api/v1/real-estate/dimensions")["data"]
    choose(person, "Property type", "land")
    choose(person, "Period kind", "month")
    person.wait.until(lambda d: "2024-09" in person.text("#x-periods"))
    assert not shown(person, "Use (factories and warehouses)")
    assert not shown(person, "Building type")  # a land deal has no building
    categories = [c["value"] for c in dims["land_categories"] if c["property_type"] == "land"]
    assert offered(person, "Land category (지목)") == ["", *categories]
    zones = [z["value"] for z in dims["zonings"] if z["property_type"] == "land"]
    assert offered(person, "Zone (용도지역)") == ["", *zones]

    choose(person, "Land category (지목)", "임야")
    rows = show(person)
    assert [r.get_attribute("data-period") for r in rows] == ["2024-08", "2024-09"]
    for row in rows:
        month = row.get_attribute("data-period")
        query = {
            "sigungu_code": "41830",
            "period": month,
            "property_type": "land",
            "transaction_type": "sale",
            "land_category": "임야",
        }
        [answer] = api(person, f"/api/v1/real-estate/pulse?{urlencode(query)}")["data"]
        assert answer["land_category_mix"] == {"임야": answer["sample_count"]}
        cells = row.text.split()
        assert cells[1] == f"{answer['sample_count']:,}"
        assert cells[2].startswith(f"{answer['contract_count']:,}")
    note = person.text("#chart-note")
    assert "land · sale (임야) · price per m² of land" in note
    assert person.driver.find_elements("css selector", "#chart svg path, #chart svg circle")
    assert "per m² of land" in person.driver.find_element("css selector", "#chart svg").text
    person.shot("explorer-land")
