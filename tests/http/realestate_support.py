"""Helpers of the real-estate tests: loading the real samples, calling the API, and an
independent reading of the raw MOLIT files to compute expected values by hand.

The expected-value helpers deliberately share no code with svc: a regular expression
reads the XML, ``statistics.quantiles(..., method="inclusive")`` gives the type-7
quartiles, ``fractions.Fraction`` the exact means.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from werkzeug.test import Client, TestResponse

from svc_server import ingest
from svc_server.app import SvcApp, create_app
from svc_server.config import Config
from svc_server.runtime.deps import new_id
from svc_server.services import consumers
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW, TEST_SECRET, FakeClock

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MOLIT = FIXTURES / "molit"
RE = "/api/v1/real-estate"

NRG_GANGNAM = MOLIT / "NRG_11680_202506.xml"
NRG_JONGNO_PAGE = MOLIT / "NRG_11110_202505.xml"
OFFI_TRADE = MOLIT / "OFFICETEL_11680_202506.xml"
OFFI_RENT = MOLIT / "OFFICETEL_RENT_11680_202506.xml"
MOLIT_FILES: tuple[tuple[str, Path], ...] = (
    ("rtms-commercial", NRG_GANGNAM),
    ("rtms-commercial", NRG_JONGNO_PAGE),
    ("rtms-officetel-trade", OFFI_TRADE),
    ("rtms-officetel-rent", OFFI_RENT),
)

LAYER_FIELDS = (
    "service",
    "api_version",
    "vertical",
    "tier",
    "auth_method",
    "data_sources",
    "coverage_estimate",
    "coverage_estimate_method",
    "coverage_note",
    "lease_data_status",
    "lease_data_note",
    "known_limitations",
    "disclosure_url",
    "confidence",
    "source_mix",
    "generated_at",
    "count",
    "query",
    "rate_limit",
    "request_id",
)
PULSE_FIELDS = (
    "sigungu_code",
    "sigungu",
    "gu",
    "dong",
    "property_type",
    "transaction_type",
    "period",
    "sample_count",
    "avg_price",
    "p25_price",
    "median_price",
    "p75_price",
    "avg_monthly_rent",
    "p25_monthly_rent",
    "median_monthly_rent",
    "p75_monthly_rent",
    "avg_area_m2",
    "confidence",
    "source_mix",
    "source_means",
    "confidence_factors",
)
"""SPEC's pulse row, in order: every row starts with exactly these."""
LEASE_FIELDS = (
    "lease_kind",
    "lease_kind_mix",
    "deal_type",
    "buyer_type",
    "p25_deposit_per_m2",
    "median_deposit_per_m2",
    "p75_deposit_per_m2",
    "avg_converted_deposit",
    "p25_converted_deposit",
    "median_converted_deposit",
    "p75_converted_deposit",
    "p25_converted_deposit_per_m2",
    "median_converted_deposit_per_m2",
    "p75_converted_deposit_per_m2",
)
"""Issue 28's additions to the pulse row."""
CONTRACT_PULSE_FIELDS = ("contract_count", "bulk_contracts", "largest_contract_units")
"""Issue 28's additions, right after SPEC's fields."""
ADDED_PULSE_FIELDS = (
    "building_type",
    "building_type_mix",
    "p25_price_per_m2",
    "median_price_per_m2",
    "p75_price_per_m2",
    "median_land_price_per_m2",
    *LEASE_FIELDS,
    "complete",
    "provisional",
    "transactions_url",
    "months_loaded",
    "months_expected",
    "building_use_mix",
    "industrial_use",
    "land_category",
    "zoning",
    "industrial_use_mix",
    "land_category_mix",
    "zoning_mix",
)
"""Issue 14's additions, after SPEC's fields (issue 28's lease fields before complete, its
months_loaded, months_expected and building_use_mix, then issue 45's filters and mixes)."""
CHANGE_FIELDS = (
    "change_vs_previous",
    "change_vs_year_ago",
    "change_vs_previous_per_m2",
    "change_vs_year_ago_per_m2",
)
"""Issue 46's changes over time, last."""
ROW_FIELDS = (*PULSE_FIELDS, *CONTRACT_PULSE_FIELDS, *ADDED_PULSE_FIELDS, *CHANGE_FIELDS)
PYEONG_ROW_FIELDS = tuple(
    name.replace("_per_m2", "_per_pyeong") if name.endswith("_per_m2") else name
    for name in ROW_FIELDS
)
"""A row of an ``area_unit=pyeong`` answer: the per-area fields named for the unit."""
SPEC_COVERAGE_FIELDS = (
    "sigungu_code",
    "sigungu",
    "gu",
    "dong",
    "property_type",
    "transaction_type",
    "earliest_period",
    "latest_period",
    "period_count",
    "periods_with_data",
    "total_samples",
    "samples_per_period_median",
    "data_sources",
)
"""SPEC's coverage row, in order: every row starts with exactly these."""
CONTRACT_COVERAGE_FIELDS = ("contract_count", "bulk_contracts")
"""Issue 28's additions, right after SPEC's fields."""
ADDED_COVERAGE_FIELDS = ("building_type", "building_type_mix", "complete", "provisional")
"""Issue 14's additions, after issue 28's."""
COVERAGE_FIELDS = (*SPEC_COVERAGE_FIELDS, *CONTRACT_COVERAGE_FIELDS, *ADDED_COVERAGE_FIELDS)
INDEX_FIELDS = (
    "sigungu_code",
    "sigungu",
    "property_type",
    "metric_type",
    "period",
    "period_end_date",
    "value_pct",
    "annualized_cap_rate",
)
"""SPEC's index row, in order: every row starts with exactly these."""
ADDED_INDEX_FIELDS = ("survey_class", "era", "source_table", "floor", "unit")
"""Issue 27's additions, after SPEC's fields: the series a value belongs to; issue 43's
``unit`` of the value."""
ALL_INDEX_FIELDS = (*INDEX_FIELDS, *ADDED_INDEX_FIELDS)


# loading ------------------------------------------------------------------------------------


def load(store: Store, kind: str, path: Path, **kwargs: Any) -> Any:
    """Ingest one file the way ``svc ingest`` does."""
    return ingest.ingest(store, kind, path.read_bytes(), path=str(path), now=RE_NOW, **kwargs)


def load_molit(store: Store) -> None:
    """The four real MOLIT responses."""
    for kind, path in MOLIT_FILES:
        load(store, kind, path)


@contextmanager
def open_molit_store(url: str) -> Iterator[Store]:
    """A migrated store holding the four real MOLIT responses, closed afterwards."""
    store = open_store(url, pool_size=4)
    store.migrate()
    load_molit(store)
    try:
        yield store
    finally:
        store.close()


# calling the API ----------------------------------------------------------------------------


def make_app(store: Store, clock: Callable[[], float] | None = None) -> SvcApp:
    config = Config(
        secret_key=TEST_SECRET,
        cookie_secure=False,
        public_url="https://api.example.com",
    )
    return create_app(config, store=store, clock=clock or FakeClock(RE_NOW))


class Api:
    """A werkzeug client calling the real-estate API with one consumer's key."""

    def __init__(self, app: SvcApp, plan: str = "pro") -> None:
        out = consumers.create_consumer(
            app.store, plan=plan, now=RE_NOW, entropy=os.urandom(16), ids=new_id
        )
        self.app = app
        self.consumer_id = str(out.consumer_id)
        self.key = str(out.api_key)
        self.client = Client(app)

    def get(
        self,
        endpoint: str,
        params: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        **headers: str,
    ) -> TestResponse:
        query = urlencode(list(params.items()) if isinstance(params, Mapping) else list(params))
        path = f"{RE}/{endpoint}" + (f"?{query}" if query else "")
        return self.client.get(path, headers={"X-API-Key": self.key, **headers})

    def ok(self, endpoint: str, params: Mapping[str, str] | None = None, **headers: str) -> Any:
        """The JSON body of a call that must answer 200."""
        response = self.get(endpoint, params or {}, **headers)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()

    def usage(self) -> int:
        return self.app.store.accounts.usage(self.consumer_id, "2026-09", "live")


def assert_error(response: TestResponse, status: int, code: str) -> dict[str, Any]:
    """A JSON error body with SPEC's shape; returns the ``error`` object."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    error = body["error"]
    assert error["code"] == code
    assert error["message"]
    assert error["request_id"] == response.headers["X-Request-ID"]
    return dict(error)


def assert_layer_envelope(meta: Mapping[str, Any], *, tier: str = "pro") -> None:
    """Every field of SPEC's layer envelope, with its constants and types."""
    for name in LAYER_FIELDS:
        assert name in meta, name
    assert meta["service"] == "svc"
    assert meta["api_version"] == "v1"
    assert meta["vertical"] == "real_estate"
    assert meta["tier"] == tier
    assert meta["auth_method"] == "api_key"
    assert meta["coverage_estimate"] is None
    assert meta["disclosure_url"] == "https://api.example.com/disclosure"
    assert meta["confidence"] in (None, "low", "medium", "high")
    assert isinstance(meta["data_sources"], list) and meta["data_sources"]
    assert isinstance(meta["known_limitations"], list)
    assert meta["lease_data_status"] in ("absent", "reported", "not_mandated")
    assert isinstance(meta["count"], int)
    assert set(meta["rate_limit"]) == {"limit_per_min", "remaining"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["generated_at"])


# an independent reading of the raw files ----------------------------------------------------


def xml_items(path: Path) -> list[dict[str, str]]:
    """Every ``<item>`` of an RTMS XML response as {tag: text}, by regular expression."""
    text = path.read_text(encoding="utf-8")
    return [
        dict(re.findall(r"<(\w+)>([^<]*)</\1>", item))
        for item in re.findall(r"<item>(.*?)</item>", text, flags=re.S)
    ]


def is_partial(path: Path) -> bool:
    """The file is one page of several: its ``totalCount`` exceeds the items it holds,
    so every figure built from its district-month must say ``complete: false``."""
    text = path.read_text(encoding="utf-8")
    total = re.search(r"<totalCount>\s*(\d+)\s*</totalCount>", text)
    return total is not None and int(total.group(1)) > len(re.findall(r"<item>", text))


def included(items: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """Items that are neither cancelled nor partial-share deals."""
    return [
        i
        for i in items
        if i.get("cdealType", "").strip() != "O" and i.get("shareDealingType", "").strip() != "지분"
    ]


def manwon(text: str) -> int:
    return int(text.replace(",", "").strip()) * 10_000


def expected_stats(values: list[int]) -> dict[str, int]:
    """Mean and type-7 quartiles, each rounded half to even to a whole number."""
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {
        "avg": round(Fraction(sum(values), len(values))),
        "p25": round(Fraction(q1)),
        "median": round(Fraction(q2)),
        "p75": round(Fraction(q3)),
    }


def type7(values: Iterable[Fraction]) -> tuple[int, int, int]:
    """Type-7 quartiles of exact values by the textbook formula (the oracle the figures
    are checked against), each rounded half to even to a whole number."""
    xs = sorted(values)
    out = []
    for p in (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)):
        h = (len(xs) - 1) * p
        lo = math.floor(h)
        hi = min(lo + 1, len(xs) - 1)
        out.append(round(xs[lo] + (h - lo) * (xs[hi] - xs[lo])))
    return out[0], out[1], out[2]


def mean_area(areas: list[str]) -> str:
    total = sum((Decimal(a) for a in areas), Decimal(0)) / len(areas)
    return str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))


M2_PER_PYEONG = Fraction("3.305785")
BUILDING_TYPES = {"일반": "whole_building", "집합": "unit"}


def building_type(item: Mapping[str, str]) -> str | None:
    """The documented building type of a raw item: officetels (``excluUseAr``) are units,
    a commercial deal's ``buildingType`` 일반/집합 is a whole building/unit."""
    if "excluUseAr" in item:
        return "unit"
    return BUILDING_TYPES.get(item.get("buildingType", "").strip())


def type_mix(items: Iterable[Mapping[str, str]]) -> dict[str, int]:
    """Samples per building type (``unknown`` when the item does not say)."""
    counts: dict[str, int] = {}
    for item in items:
        kind = building_type(item) or "unknown"
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def _area(area: str | Fraction | None) -> Fraction | None:
    if isinstance(area, str):
        return Fraction(area.strip()) if area.strip() else None
    return area


def per_area(
    pairs: Iterable[tuple[int, str | Fraction | None]], *, per: Fraction = Fraction(1)
) -> tuple[int, int, int] | None:
    """Type-7 quartiles of price / area per deal or contract (the area text as published,
    or a contract's total, ``per`` m²), each rounded half to even; None when no deal has
    an area."""
    ratios = sorted(
        Fraction(price) * per / exact
        for price, area in pairs
        if (exact := _area(area)) is not None and exact > 0
    )
    if not ratios:
        return None
    if len(ratios) == 1:
        return (round(ratios[0]),) * 3
    q1, q2, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return round(q1), round(q2), round(q3)


# contracts (issue 28), from the raw tags ------------------------------------------------------

CONTRACT_TAGS = (
    "sggCd",
    "umdNm",
    "jibun",
    "dealYear",
    "dealMonth",
    "dealDay",
    "dealingGbn",
    "slerGbn",
    "buyerGbn",
    "buildingUse",
    "buildYear",
    "buildingType",
)
"""The raw tags the documented grouping rule compares (source, district, legal dong, lot,
contract date, deal type, seller and buyer type, building use, build year, building
type; the property type follows from the file and buildingUse/buildingType)."""


def contract_groups(items: Iterable[dict[str, str]], file: str) -> list[list[dict[str, str]]]:
    """The documented rule written out again on raw items of one file (``file`` names its
    kind: NRG, OFFICETEL or OFFICETEL_RENT): sale items naming their lot that agree on
    every ``CONTRACT_TAGS`` value are one contract; a lease item, or one without a lot, is
    a contract of its own. Groups in order of their first item."""
    groups: dict[object, list[dict[str, str]]] = {}
    for n, item in enumerate(items):
        lot = item.get("jibun", "").strip()
        if "RENT" in file or not lot:
            key: object = ("own", n)
        else:
            values = [item.get(tag, "").strip() for tag in CONTRACT_TAGS]
            key = (file, *(int(v) if v.isdigit() else v for v in values))
        groups.setdefault(key, []).append(item)
    return list(groups.values())


def total_area(group: Iterable[dict[str, str]], tag: str) -> Fraction | None:
    """A contract's area: the exact sum of its items' published ``tag`` areas; None when
    an item lacks one."""
    areas = [item.get(tag, "").strip() for item in group]
    if not all(areas):
        return None
    return sum((Fraction(a) for a in areas), Fraction(0))


def contract_price(group: Iterable[dict[str, str]], tag: str = "dealAmount") -> int:
    return sum(manwon(item[tag]) for item in group)


def mean_contract_area(areas: Iterable[Fraction | None]) -> str | None:
    """The mean of the known contract areas, two decimals half to even."""
    known = [a for a in areas if a is not None]
    if not known:
        return None
    exact = sum(known, Fraction(0)) / len(known)
    value = Decimal(exact.numerator) / Decimal(exact.denominator)
    return str(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
