"""The query parameters of the real-estate endpoints, declared once, and typed queries.

Each endpoint's parameters are a tuple of ``svc_core.params.Param`` (``PULSE_PARAMS``,
``SERIES_PARAMS``, ...): the same declarations validate requests and describe the API.
``parse_pulse`` and its siblings read a mapping of strings (a strict-parsed query) into a
frozen query, validating every parameter in declaration order, so the first malformed
one is the one reported. Period texts are checked here too (``InvalidPeriod``); rolling
windows are resolved later against the latest month with data, which only the data
knows. Nothing here looks at the caller's plan: a query is validated completely (400)
before any tier gate (403).

Long because every real-estate endpoint's parameters are declared here, once, next to the
cohort they select (the transactions listing adds its own in ``listing``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc_core.cohorts.stats import AREA_UNITS
from svc_core.errors import InvalidParams
from svc_core.models import (
    BUILDING_TYPES,
    DEAL_TYPES,
    INDUSTRIAL_USES,
    LEASE_KINDS,
    METRIC_TYPES,
    PARTY_TYPES,
    PROPERTY_TYPES,
    TRANSACTION_TYPES,
)
from svc_core.params import Param, Value, names, read_all, strict_query
from svc_core.periods import (
    MONTH_LIST_PATTERN,
    MONTH_PATTERN,
    QUARTER_LIST_PATTERN,
    QUARTER_PATTERN,
    YEAR_PATTERN,
    expand_series,
    resolve_index_period,
    resolve_pulse_period,
)
from svc_core.sources.land import LAND_CATEGORIES, zone_of

GEO_PRECISIONS: tuple[str, ...] = ("sigungu", "dong")
GRANULARITIES: tuple[str, ...] = ("quarter", "month")
COVERAGE_LIMIT_DEFAULT = 200
COVERAGE_LIMIT_MAX = 500
DIMENSIONS_HINT = (
    "See GET /api/v1/real-estate/dimensions for the districts and types that have data, "
    "and GET /api/v1/real-estate/coverage for the periods with data."
)
CODE_HINT = "List valid codes with GET /api/v1/real-estate/dimensions."
DONG_HINT = "List dongs with GET /api/v1/real-estate/dimensions?geo_precision=dong."
DONG_MESSAGE = "must be a legal dong name such as 역삼동."
DONG_MAX_LENGTH = 40


def _sigungu(*, required: bool) -> Param:
    return Param(
        name="sigungu_code",
        description="5-digit district code; list them with GET /api/v1/real-estate/dimensions.",
        required=required,
        pattern="[0-9]{5}",
        message="must be a 5-digit district code such as 11680.",
        hint=CODE_HINT,
        example="11680",
    )


SIGUNGU_REQUIRED = _sigungu(required=True)
INDEX_PLACE = attrs.evolve(
    SIGUNGU_REQUIRED,
    description=(
        "5-digit district code, or A + the R-ONE CLS_ID of a market area, any area R-ONE "
        "publishes, mapped to districts or not (A510004 for 서울>강남, A500002 for 서울)."
    ),
    pattern="([0-9]{5}|A[0-9]{1,12})",
    message="must be a 5-digit district code such as 11680 or a market-area code such as A510006.",
)
"""The required district code, or a market area's code (indices)."""
SIGUNGU_OPTIONAL = _sigungu(required=False)
PROPERTY_TYPE = Param(
    name="property_type",
    description="Property type; all types when absent.",
    kind="enum",
    choices=PROPERTY_TYPES,
)
TRANSACTION_TYPE = Param(
    name="transaction_type",
    description="Transaction type; all types when absent.",
    kind="enum",
    choices=TRANSACTION_TYPES,
)
BUILDING_TYPE = Param(
    name="building_type",
    description="`whole_building` (RTMS 일반) or `unit` (RTMS 집합; officetels are units); "
    "both when absent, and deals whose type is unknown count only then.",
    kind="enum",
    choices=BUILDING_TYPES,
)
LEASE_KIND = Param(
    name="lease_kind",
    description="`new` (RTMS 신규, a new lease) or `renewal` (갱신: under the tenant's renewal "
    "right its rent may rise at most 5 %); leases only (400 with transaction_type=sale or "
    "deal_type/buyer_type). Both when absent, and leases whose kind is unknown count only "
    "then.",
    kind="enum",
    choices=LEASE_KINDS,
)
DEAL_TYPE = Param(
    name="deal_type",
    description="`brokered` (RTMS 중개거래) or `direct` (직거래); sales only (400 with a lease "
    "transaction_type or lease_kind). RTMS publishes it for contracts from 2021-11; earlier "
    "deals have none and count only without this filter.",
    kind="enum",
    choices=DEAL_TYPES,
)
BUYER_TYPE = Param(
    name="buyer_type",
    description="The buyer as RTMS publishes it (buyerGbn): `individual` (개인), `company` "
    "(법인), `public_body` (공공기관) or `other` (기타); sales only (400 with a lease "
    "transaction_type or lease_kind). Published for contracts from 2024-01; earlier deals "
    "have none and count only without this filter.",
    kind="enum",
    choices=PARTY_TYPES,
)
INDUSTRIAL_USE = Param(
    name="industrial_use",
    description="Factory and warehouse sales (property_type industrial, RTMS InduTrade) by "
    "use: `factory` (buildingUse 공장), `warehouse` (창고시설) or `other` (자동차 관련시설, "
    "위험물 저장 및 처리시설, ...). Every deal when absent; other property types have none.",
    kind="enum",
    choices=INDUSTRIAL_USES,
)
LAND_CATEGORY = Param(
    name="land_category",
    description="Land sales (property_type land, RTMS LandTrade) of one land category "
    "(지목) as published: 대 (building site), 전 (dry field), 답 (paddy), 임야 (forest), "
    "공장용지, 창고용지, 도로, ... Every deal when absent; other property types have none.",
    kind="enum",
    choices=LAND_CATEGORIES,
)
ZONING = Param(
    name="zoning",
    description="Deals in one zone (용도지역), by its full legal name (보전관리지역, "
    "일반상업지역, 개발제한구역) or the commercial service's short form (일반상업): both name "
    "one zone. Land, commercial and factory/warehouse sales publish it; every deal when "
    "absent.",
    max_length=40,
    pattern=r"\S+",
    message="must be a zone such as 계획관리지역 or 일반상업.",
    hint="List the zones with data with GET /api/v1/real-estate/dimensions.",
    example="계획관리지역",
)
AREA_UNIT = Param(
    name="area_unit",
    description="Unit of the per-area prices: `m2` (fields named `*_per_m2`), or "
    "`pyeong` (1 pyeong = 3.305785 m²; the same fields named `*_per_pyeong`, and no "
    "`*_per_m2` field, in JSON and CSV alike).",
    kind="enum",
    choices=AREA_UNITS,
    default="m2",
)
GEO_PRECISION = Param(
    name="geo_precision",
    description="`dong` splits rows by legal dong and needs the pro plan or higher "
    "(else 403 TIER_RESTRICTED).",
    kind="enum",
    choices=GEO_PRECISIONS,
    default="sigungu",
)
DONG = Param(
    name="dong",
    description="One legal dong such as 역삼동; needs geo_precision=dong "
    "(else 400 INVALID_PARAMS).",
    max_length=DONG_MAX_LENGTH,
    pattern=r"\S(.*\S)?",
    message=DONG_MESSAGE,
    hint=DONG_HINT,
    example="역삼동",
)
PULSE_PERIOD = Param(
    name="period",
    description="A rolling window (ending at the latest month with data), a month YYYY-MM "
    "or a quarter YYYY-Qn.",
    default="last_6m",
    doc_pattern=f"last_3m|last_6m|last_12m|{MONTH_PATTERN}|{QUARTER_PATTERN}",
    example="last_6m",
)
# The series periods keep an empty value (``?periods=``) as given: the period grammar
# refuses it with its own message ("The periods list is empty.").
PERIODS = Param(
    name="periods",
    description="Comma-separated periods, no spaces, at most 12, all YYYY-MM or all "
    "YYYY-Qn. Give this or from_period and to_period.",
    allow_empty=False,
    doc_pattern=f"{MONTH_LIST_PATTERN}|{QUARTER_LIST_PATTERN}",
    example="2026-Q1,2026-Q2",
)
FROM_PERIOD = Param(
    name="from_period",
    description="First period of an inclusive range (with to_period; at most 12 periods).",
    allow_empty=False,
    doc_pattern=f"{MONTH_PATTERN}|{QUARTER_PATTERN}",
)
TO_PERIOD = Param(
    name="to_period",
    description="Last period of the range (with from_period).",
    allow_empty=False,
    doc_pattern=f"{MONTH_PATTERN}|{QUARTER_PATTERN}",
)
GRANULARITY = Param(
    name="granularity",
    description="Period labels as quarters (YYYY-Qn) or months (YYYY-MM).",
    kind="enum",
    choices=GRANULARITIES,
    default="quarter",
)
LIMIT = Param(
    name="limit",
    description="Most rows returned.",
    kind="integer",
    low=1,
    high=COVERAGE_LIMIT_MAX,
    default=COVERAGE_LIMIT_DEFAULT,
)
METRIC_TYPE = Param(
    name="metric_type",
    description="One metric; when absent, every metric but rent_level (thousand won per "
    "m² a month), net_operating_income (thousand won per m²) and floor_utility_ratio "
    "(a percentage): additions to SPEC's metrics, given only when asked for.",
    kind="enum",
    choices=METRIC_TYPES,
)
INDEX_SERIES = ("preferred", "all")
SERIES = Param(
    name="series",
    description="`preferred`: one row per property type, metric and period, from the "
    "preferred series (the property type's primary survey class; the linked (시계열) "
    "series before an era table); `all`: a row per series (survey class and era), each "
    "saying which.",
    kind="enum",
    choices=INDEX_SERIES,
    default="preferred",
)
INDEX_PERIOD = Param(
    name="period",
    description="A rolling window of quarters, a quarter YYYY-Qn or a year YYYY.",
    default="last_4q",
    doc_pattern=f"last_4q|last_8q|{QUARTER_PATTERN}|{YEAR_PATTERN}",
    example="last_4q",
)

FILTERS = (PROPERTY_TYPE, TRANSACTION_TYPE, GEO_PRECISION, DONG)
TYPED_FILTERS = (*FILTERS, BUILDING_TYPE)
LAND_FILTERS = (INDUSTRIAL_USE, LAND_CATEGORY, ZONING)
"""What RTMS publishes of a deal's land and use, as filters of pulse, series, coverage and
the listing."""
DEAL_FILTERS = (LEASE_KIND, DEAL_TYPE, BUYER_TYPE, *LAND_FILTERS)
"""What RTMS publishes of a contract and of its land, as filters of pulse, series and the
listing."""
ROW_FILTERS = (BUILDING_TYPE, *DEAL_FILTERS)
"""The filters a pulse row echoes (None: every deal) and its link to the listing carries."""
PULSE_PARAMS: tuple[Param, ...] = (
    SIGUNGU_REQUIRED,
    *TYPED_FILTERS,
    *DEAL_FILTERS,
    PULSE_PERIOD,
    AREA_UNIT,
)
SERIES_PARAMS: tuple[Param, ...] = (
    SIGUNGU_REQUIRED,
    *TYPED_FILTERS,
    *DEAL_FILTERS,
    PERIODS,
    FROM_PERIOD,
    TO_PERIOD,
    AREA_UNIT,
)
COVERAGE_PARAMS: tuple[Param, ...] = (
    SIGUNGU_OPTIONAL,
    *TYPED_FILTERS,
    *LAND_FILTERS,
    GRANULARITY,
    LIMIT,
)
INDICES_PARAMS: tuple[Param, ...] = (
    INDEX_PLACE,
    PROPERTY_TYPE,
    METRIC_TYPE,
    INDEX_PERIOD,
    SERIES,
)
DIMENSIONS_PARAMS: tuple[Param, ...] = (GEO_PRECISION,)
PULSE_NAMES = names(PULSE_PARAMS)
SERIES_NAMES = names(SERIES_PARAMS)
COVERAGE_NAMES = names(COVERAGE_PARAMS)
INDICES_NAMES = names(INDICES_PARAMS)


@attrs.frozen(kw_only=True)
class Cohort:
    """Which transactions rows are built from: a district (``''`` = any district), the
    type filters (None = every type) and the geography. ``dong`` narrows to one legal
    dong and is set only at ``geo_precision="dong"``. ``building_type`` keeps one
    building type (None = every deal, whatever its type); ``lease_kind``, ``deal_type``
    and ``buyer_type`` keep the deals RTMS says are of that kind, ``industrial_use``,
    ``land_category`` and ``zoning`` (a full zone name) those of that use, category or
    zone (None = every deal)."""

    sigungu_code: str
    property_type: str | None = None
    transaction_type: str | None = None
    geo_precision: str = "sigungu"
    dong: str | None = None
    building_type: str | None = None
    lease_kind: str | None = None
    deal_type: str | None = None
    buyer_type: str | None = None
    industrial_use: str | None = None
    land_category: str | None = None
    zoning: str | None = None

    def __attrs_post_init__(self) -> None:
        # One check rather than a validator per field: every request builds a cohort.
        code = self.sigungu_code
        if (
            (code != "" and not (len(code) == 5 and code.isascii() and code.isdigit()))
            or (self.property_type is not None and self.property_type not in PROPERTY_TYPES)
            or (
                self.transaction_type is not None and self.transaction_type not in TRANSACTION_TYPES
            )
            or self.geo_precision not in GEO_PRECISIONS
            or (self.building_type is not None and self.building_type not in BUILDING_TYPES)
            or (self.lease_kind is not None and self.lease_kind not in LEASE_KINDS)
            or (self.deal_type is not None and self.deal_type not in DEAL_TYPES)
            or (self.buyer_type is not None and self.buyer_type not in PARTY_TYPES)
            or (self.industrial_use is not None and self.industrial_use not in INDUSTRIAL_USES)
            or (self.land_category is not None and self.land_category not in LAND_CATEGORIES)
            or (self.zoning is not None and self.zoning != zone_of(self.zoning))
        ):
            raise ValueError(f"not a cohort the API can ask for: {self!r}")

    @property
    def dong_level(self) -> bool:
        return self.geo_precision == "dong"

    def place(self) -> str:
        """Where the cohort is, for messages: ``district 11680`` or ``dong 역삼동 of
        district 11680``."""
        district = f"district {self.sigungu_code}"
        return f"dong {self.dong} of {district}" if self.dong else district

    def echo(self) -> dict[str, Any]:
        """The cohort part of ``_meta.query``."""
        return {
            "sigungu_code": self.sigungu_code or None,
            "property_type": self.property_type,
            "transaction_type": self.transaction_type,
            "geo_precision": self.geo_precision,
            "dong": self.dong,
        }

    def deal_echo(self) -> dict[str, Any]:
        """The contract filters in ``_meta.query`` (pulse, series and the listing)."""
        return {
            "lease_kind": self.lease_kind,
            "deal_type": self.deal_type,
            "buyer_type": self.buyer_type,
            **self.land_filters(),
        }

    def land_filters(self) -> dict[str, str | None]:
        """The use, land category and zone the cohort keeps, by the names of the stored
        columns (None: every deal)."""
        return {
            "industrial_use": self.industrial_use,
            "land_category": self.land_category,
            "zoning": self.zoning,
        }


@attrs.frozen(kw_only=True)
class PulseQuery:
    """``GET /api/v1/real-estate/pulse``: one cohort over one period (a rolling window
    such as ``last_6m``, a month ``YYYY-MM`` or a quarter ``YYYY-Qn``)."""

    cohort: Cohort
    period: str = "last_6m"
    area_unit: str = "m2"


@attrs.frozen(kw_only=True)
class SeriesQuery:
    """``GET /api/v1/real-estate/pulse/series``: one cohort over up to 12 calendar
    periods. ``periods`` are the expanded labels, oldest first; ``periods_text``,
    ``from_period`` and ``to_period`` are the parameters as sent (the range is echoed in
    ``_meta.query``)."""

    cohort: Cohort
    periods: tuple[str, ...]
    periods_text: str | None = None
    from_period: str | None = None
    to_period: str | None = None
    area_unit: str = "m2"


@attrs.frozen(kw_only=True)
class CoverageQuery:
    """``GET /api/v1/real-estate/coverage``: which periods have data, per cohort."""

    cohort: Cohort
    granularity: str = "quarter"
    limit: int = COVERAGE_LIMIT_DEFAULT


@attrs.frozen(kw_only=True)
class IndicesQuery:
    """``GET /api/v1/real-estate/indices``: R-ONE values of one district."""

    sigungu_code: str
    property_type: str | None = None
    metric_type: str | None = None
    period: str = "last_4q"
    series: str = "preferred"
    """``preferred`` (one row per property type, metric and period) or ``all``."""


@attrs.frozen(kw_only=True)
class DimensionsQuery:
    """``GET /api/v1/real-estate/dimensions``: what has data in the ``last_6m`` window."""

    geo_precision: str = "sigungu"


def _known(allowed: frozenset[str], query: Mapping[str, str]) -> None:
    """Refuse unknown names first, as the router does, so a library caller gets the same
    answer as an HTTP client (the set test is cheap; ``strict_query`` words the error)."""
    if not allowed.issuperset(query):
        strict_query(list(query.items()), allowed)


def _read(decls: Sequence[Param], query: Mapping[str, str]) -> dict[str, Value]:
    """Every declared parameter's value, unknown names refused first."""
    _known(names(decls), query)
    return read_all(decls, query)


def _text(value: Value) -> str | None:
    return None if value is None else str(value)


def _check_dong(value: Value) -> None:
    """What the ASCII pattern cannot say: no Unicode blank at either end, printable."""
    if isinstance(value, str) and (value != value.strip() or not value.isprintable()):
        raise InvalidParams(f"Query parameter 'dong' {DONG_MESSAGE}", hint=DONG_HINT)


def _required_code(query: Mapping[str, str]) -> None:
    """A missing district points at the dimensions; a malformed one at the code list."""
    if not query.get("sigungu_code"):
        raise InvalidParams("Query parameter 'sigungu_code' is required.", hint=DIMENSIONS_HINT)


def cohort_of(values: Mapping[str, Value]) -> Cohort:
    """The cohort read values name (the district, types, precision and every filter
    declared; a filter not declared is None)."""
    geo = str(values.get("geo_precision") or "sigungu")
    return Cohort(
        sigungu_code=_text(values["sigungu_code"]) or "",
        property_type=_text(values["property_type"]),
        transaction_type=_text(values["transaction_type"]),
        geo_precision=geo,
        dong=_text(values.get("dong")) if geo == "dong" else None,
        building_type=_text(values.get("building_type")),
        lease_kind=_text(values.get("lease_kind")),
        deal_type=_text(values.get("deal_type")),
        buyer_type=_text(values.get("buyer_type")),
        industrial_use=_text(values.get("industrial_use")),
        land_category=_text(values.get("land_category")),
        zoning=zone_of(_text(values.get("zoning"))),
    )


SIDES_HINT = (
    "lease_kind describes leases, deal_type and buyer_type sales: give one side's filters "
    "(and a matching transaction_type) or leave them out."
)


def _check_sides(values: Mapping[str, Value]) -> None:
    """A lease filter and a sale filter (or the other transaction type) select nothing:
    RTMS publishes lease kinds for leases only and deal and buyer types for sales only."""
    ttype = values.get("transaction_type")
    lease = values.get("lease_kind") is not None
    sale = [n for n in ("deal_type", "buyer_type") if values.get(n) is not None]
    if lease and (sale or ttype == "sale"):
        other = f"'{sale[0]}'" if sale else "transaction_type=sale"
        raise InvalidParams(
            f"Query parameter 'lease_kind' applies to leases and cannot go with {other}.",
            hint=SIDES_HINT,
        )
    if sale and ttype is not None and ttype != "sale":
        raise InvalidParams(
            f"Query parameter '{sale[0]}' applies to sales and cannot go with "
            f"transaction_type={ttype}.",
            hint=SIDES_HINT,
        )


def _cohort_values(decls: Sequence[Param], query: Mapping[str, str]) -> dict[str, Value]:
    values: dict[str, Value] = {}
    for decl in decls:
        values[decl.name] = decl.read(query)
        if decl is DONG:
            _check_dong(values["dong"])
    if values.get("dong") is not None and values.get("geo_precision") != "dong":
        raise InvalidParams(
            "Query parameter 'dong' needs geo_precision=dong.",
            hint="Add geo_precision=dong (pro plan or higher) or leave dong out.",
        )
    _check_sides(values)
    return values


def read_cohort(
    decls: Sequence[Param], query: Mapping[str, str]
) -> tuple[Cohort, dict[str, Value]]:
    """The cohort and every declared value of an endpoint whose district is required
    (what ``parse_pulse`` reads first); ``InvalidParams`` (400)."""
    _known(names(decls), query)
    _required_code(query)
    values = _cohort_values(decls, query)
    return cohort_of(values), values


def parse_pulse(query: Mapping[str, str]) -> PulseQuery:
    """A ``PulseQuery`` from query parameters; ``InvalidParams``/``InvalidPeriod`` (400)."""
    _known(PULSE_NAMES, query)
    _required_code(query)
    values = _cohort_values(PULSE_PARAMS, query)
    period = str(values["period"])
    resolve_pulse_period(period, None)  # the grammar; the window needs the data
    return PulseQuery(cohort=cohort_of(values), period=period, area_unit=str(values["area_unit"]))


def parse_series(query: Mapping[str, str]) -> SeriesQuery:
    """A ``SeriesQuery`` from query parameters; ``InvalidParams``/``InvalidPeriod`` (400)."""
    _known(SERIES_NAMES, query)
    _required_code(query)
    values = _cohort_values(SERIES_PARAMS, query)
    texts = (_text(values["periods"]), _text(values["from_period"]), _text(values["to_period"]))
    return SeriesQuery(
        cohort=cohort_of(values),
        periods=expand_series(*texts),
        periods_text=texts[0],
        from_period=texts[1],
        to_period=texts[2],
        area_unit=str(values["area_unit"]),
    )


def parse_coverage(query: Mapping[str, str]) -> CoverageQuery:
    """A ``CoverageQuery`` from query parameters; ``InvalidParams`` (400)."""
    _known(COVERAGE_NAMES, query)
    values = _cohort_values(COVERAGE_PARAMS, query)
    limit = values["limit"]
    assert isinstance(limit, int)  # an integer declaration with a default
    return CoverageQuery(
        cohort=cohort_of(values), granularity=str(values["granularity"]), limit=limit
    )


def parse_indices(query: Mapping[str, str]) -> IndicesQuery:
    """An ``IndicesQuery`` from query parameters; ``InvalidParams``/``InvalidPeriod`` (400)."""
    _known(INDICES_NAMES, query)
    _required_code(query)
    values = read_all(INDICES_PARAMS, query)
    period = str(values["period"])
    resolve_index_period(period, None)
    return IndicesQuery(
        sigungu_code=str(values["sigungu_code"]),
        property_type=_text(values["property_type"]),
        metric_type=_text(values["metric_type"]),
        period=period,
        series=str(values["series"]),
    )


def parse_dimensions(query: Mapping[str, str]) -> DimensionsQuery:
    """A ``DimensionsQuery`` from query parameters; ``InvalidParams`` (400)."""
    values = _read(DIMENSIONS_PARAMS, query)
    return DimensionsQuery(geo_precision=str(values["geo_precision"]))
