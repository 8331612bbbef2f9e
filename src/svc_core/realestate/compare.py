"""Districts compared (issue 46, item 1): ``GET /api/v1/real-estate/compare``.

One cohort (a property type and a transaction type, both required: a ranking of office
sales against officetel leases would compare nothing), one period, several districts:
the ``sigungu_codes`` given (up to ``MAX_DISTRICTS``) or every district in use of a
province (``sido``). Each district's figures are its pulse row, computed by pulse itself
(the server calls its pulse service once per district), in m² and in pyeong; a district
with nothing to say is listed with pulse's reason (``not_loaded``,
``too_few_transactions``, ``unknown_district``), never dropped.

Ranking (``rank_rows``): the districts with a value of the ``sort`` field come first,
ranked 1, 2, ... by it (``order``: ``desc``, the highest first, by default; ties by
district code), then those with figures but no such value (no contract reports an
area), then those without figures, both by code and without a rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc_core.cohorts.confidence import LEVELS, worst
from svc_core.envelope import CONTRACT_METHODOLOGY, Answer
from svc_core.errors import InvalidParams
from svc_core.json_schema import boolean, doc, enum, field_schemas, integer, nullable, obj, string
from svc_core.params import Param, names, strict_query
from svc_core.periods import PeriodWindow, resolve_pulse_period
from svc_core.realestate.common import Context, district_name, layer_meta
from svc_core.realestate.loaded import NOT_FOUND_REASONS
from svc_core.realestate.median_change import Change, Interval
from svc_core.realestate.pulse_row import PulseRow
from svc_core.realestate.query import (
    BUILDING_TYPE,
    LAND_FILTERS,
    LEASE_KIND,
    PROPERTY_TYPE,
    PULSE_PERIOD,
    TRANSACTION_TYPE,
    Cohort,
    cohort_of,
)
from svc_core.realestate.region_search import province_districts
from svc_core.realestate.row_docs import KRW, SIGUNGU_CODE
from svc_core.realestate.row_docs import PROPERTY_TYPE as PROPERTY_TYPE_SCHEMA
from svc_core.realestate.row_docs import TRANSACTION_TYPE as TRANSACTION_TYPE_SCHEMA
from svc_core.regions import region

MAX_DISTRICTS = 50
SORTS: tuple[str, ...] = ("median_per_m2", "median", "median_monthly_rent", "contract_count")
"""What districts are ranked by: the median per m² (a sale's price, a lease's deposit),
the median (price or deposit), the median monthly rent (monthly leases), the contracts."""
ORDERS: tuple[str, ...] = ("desc", "asc")
CODES_HINT = (
    "Give sigungu_codes=11680,11650 (5-digit codes, comma-separated, at most 50; find "
    "codes with GET /api/v1/real-estate/regions) or sido=서울 (a province), not both."
)
ONE_COHORT = (
    "A comparison ranks one cohort: give property_type and transaction_type (office sales, "
    "officetel monthly leases, ...)."
)

SIGUNGU_CODES = Param(
    name="sigungu_codes",
    description=f"Comma-separated 5-digit district codes, at most {MAX_DISTRICTS}, no "
    "spaces (a code repeated counts once); or give sido.",
    pattern=f"[0-9]{{5}}(,[0-9]{{5}}){{0,{MAX_DISTRICTS - 1}}}",
    message=f"must be 1 to {MAX_DISTRICTS} comma-separated 5-digit district codes.",
    hint=CODES_HINT,
    example="11680,11650,11140",
)
SIDO = Param(
    name="sido",
    description="A province: every district of it in use is compared. Its full, short or "
    "romanised name: 서울특별시, 서울, Seoul, 경기, Gyeonggi-do.",
    max_length=40,
    hint=CODES_HINT,
    example="서울",
)
SORT = Param(
    name="sort",
    description="What districts are ranked by: `median_per_m2` (the median price per m² of "
    "a sale, the median deposit per m² of a lease), `median` (median_price: a lease's "
    "deposit), `median_monthly_rent`, `contract_count`.",
    kind="enum",
    choices=SORTS,
    default="median_per_m2",
)
ORDER = Param(
    name="order",
    description="`desc` (the highest first) or `asc`.",
    kind="enum",
    choices=ORDERS,
    default="desc",
)
COMPARE_PARAMS: tuple[Param, ...] = (
    SIGUNGU_CODES,
    SIDO,
    attrs.evolve(
        PROPERTY_TYPE, required=True, description="Property type (required).", hint=ONE_COHORT
    ),
    attrs.evolve(
        TRANSACTION_TYPE,
        required=True,
        description="Transaction type (required).",
        hint=ONE_COHORT,
    ),
    PULSE_PERIOD,
    BUILDING_TYPE,
    LEASE_KIND,
    *LAND_FILTERS,
    SORT,
    ORDER,
)
COMPARE_NAMES = names(COMPARE_PARAMS)


@attrs.frozen(kw_only=True)
class CompareQuery:
    """``GET /api/v1/real-estate/compare``: ``cohort`` (its district empty) over
    ``period`` in each district of ``codes`` (as given, or a province's: ``sido``)."""

    codes: tuple[str, ...]
    sido: str | None
    cohort: Cohort
    period: str = "last_6m"
    sort: str = "median_per_m2"
    order: str = "desc"

    def district(self, code: str) -> Cohort:
        """The cohort of district ``code``."""
        return attrs.evolve(self.cohort, sigungu_code=code)


def _codes(values: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    listed, sido = values["sigungu_codes"], values["sido"]
    if (listed is None) == (sido is None):
        raise InvalidParams(
            "Give either sigungu_codes or sido."
            if listed is None
            else "Give sigungu_codes or sido, not both.",
            hint=CODES_HINT,
        )
    if listed is not None:
        return tuple(dict.fromkeys(str(listed).split(","))), None
    found = province_districts(str(sido))
    if not found:
        raise InvalidParams(f"No province in use is named {str(sido)[:40]!r}.", hint=CODES_HINT)
    return tuple(r.code for r in found), found[0].sido


def parse_compare(query: Mapping[str, str]) -> CompareQuery:
    """A ``CompareQuery`` from query parameters; ``InvalidParams``/``InvalidPeriod`` (400)."""
    if not COMPARE_NAMES.issuperset(query):
        strict_query(list(query.items()), COMPARE_NAMES)
    values = {p.name: p.read(query) for p in COMPARE_PARAMS}
    if values["lease_kind"] is not None and values["transaction_type"] == "sale":
        raise InvalidParams(
            "Query parameter 'lease_kind' applies to leases and cannot go with "
            "transaction_type=sale.",
            hint="Leave lease_kind out, or compare a lease transaction_type.",
        )
    codes, sido = _codes(values)
    period = str(values["period"])
    resolve_pulse_period(period, None)  # the grammar; the window needs the data
    return CompareQuery(
        codes=codes,
        sido=sido,
        cohort=cohort_of({**values, "sigungu_code": ""}),
        period=period,
        sort=str(values["sort"]),
        order=str(values["order"]),
    )


def _per_area(text: str) -> dict[str, Any]:
    return doc(nullable(integer(f"{text}; null when no contract reports an area.")))


def _change(text: str) -> dict[str, Any]:
    return doc(nullable(obj(field_schemas(Change), description=f"{text}; null without figures.")))


@attrs.frozen(kw_only=True)
class CompareRow:
    """One district of a comparison: its rank, the figures of its pulse row (per m² and
    per pyeong) or the reason it has none."""

    rank: int | None = attrs.field(
        metadata=doc(
            nullable(
                integer(
                    "1 for the first by the sort field; null for a district without a value "
                    "of it (listed after the ranked ones).",
                    minimum=1,
                )
            )
        )
    )
    sigungu_code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sigungu: str = attrs.field(metadata=doc(string("District name.")))
    sido: str | None = attrs.field(metadata=doc(nullable(string("Province name."))))
    reason: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "Why the district has no figures, as pulse says it: not_loaded (no month "
                    "of the period loaded completely for it), too_few_transactions (loaded, "
                    "but fewer than 2 contracts), unknown_district; null with figures.",
                    enum=[*NOT_FOUND_REASONS, None],
                )
            )
        )
    )
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE_SCHEMA))
    transaction_type: str = attrs.field(metadata=doc(TRANSACTION_TYPE_SCHEMA))
    period: str = attrs.field(metadata=doc(string("The period, as pulse labels it.")))
    sort_value: int | None = attrs.field(
        metadata=doc(nullable(integer("The value of the sort field the rank follows.")))
    )
    interval_low: int | None = attrs.field(
        metadata=doc(
            nullable(
                integer(
                    "Low bound of the 95% exact order-statistic interval of the sorted "
                    "median (null for contract_count, or with fewer than 6 contracts)."
                )
            )
        )
    )
    interval_high: int | None = attrs.field(
        metadata=doc(nullable(integer("High bound of that interval.")))
    )
    sample_count: int | None = attrs.field(metadata=doc(nullable(integer("Rows (units)."))))
    contract_count: int | None = attrs.field(metadata=doc(nullable(integer("Contracts."))))
    bulk_contracts: int | None = attrs.field(
        metadata=doc(nullable(integer("Contracts of more than one row.")))
    )
    avg_price: int | None = attrs.field(metadata=doc(nullable(KRW)))
    p25_price: int | None = attrs.field(metadata=doc(nullable(KRW)))
    median_price: int | None = attrs.field(metadata=doc(nullable(KRW)))
    p75_price: int | None = attrs.field(metadata=doc(nullable(KRW)))
    median_monthly_rent: int | None = attrs.field(
        metadata=doc(nullable(integer("KRW per month; monthly_lease only.")))
    )
    p25_price_per_m2: int | None = attrs.field(metadata=_per_area("KRW per m², sales"))
    median_price_per_m2: int | None = attrs.field(metadata=_per_area("KRW per m², sales"))
    p75_price_per_m2: int | None = attrs.field(metadata=_per_area("KRW per m², sales"))
    p25_price_per_pyeong: int | None = attrs.field(metadata=_per_area("KRW per pyeong, sales"))
    median_price_per_pyeong: int | None = attrs.field(metadata=_per_area("KRW per pyeong, sales"))
    p75_price_per_pyeong: int | None = attrs.field(metadata=_per_area("KRW per pyeong, sales"))
    median_deposit_per_m2: int | None = attrs.field(metadata=_per_area("KRW per m², leases"))
    median_deposit_per_pyeong: int | None = attrs.field(
        metadata=_per_area("KRW per pyeong, leases")
    )
    confidence: str | None = attrs.field(metadata=doc(nullable(enum(LEVELS))))
    complete: bool | None = attrs.field(
        metadata=doc(nullable(boolean("As pulse: every month of the period loaded completely.")))
    )
    provisional: bool | None = attrs.field(
        metadata=doc(nullable(boolean("As pulse: the period is within the reporting lag.")))
    )
    months_loaded: int | None = attrs.field(metadata=doc(nullable(integer("As pulse."))))
    months_expected: int | None = attrs.field(metadata=doc(nullable(integer("As pulse."))))
    change_vs_previous: Change | None = attrs.field(
        metadata=_change("As pulse: the median against the previous period")
    )
    change_vs_year_ago: Change | None = attrs.field(
        metadata=_change("As pulse: the median against a year earlier")
    )
    change_vs_previous_per_m2: Change | None = attrs.field(
        metadata=_change("As pulse: the median per m² against the previous period")
    )
    change_vs_year_ago_per_m2: Change | None = attrs.field(
        metadata=_change("As pulse: the median per m² against a year earlier")
    )
    transactions_url: str | None = attrs.field(
        metadata=doc(nullable(string("As pulse: the deals behind the figures.", format="uri")))
    )


COMPARE_COLUMNS = tuple(f.name for f in attrs.fields(CompareRow))
"""The CSV columns: the row fields in order."""


@attrs.frozen
class District:
    """What pulse said of one district: its row in m² and in pyeong, or the reason it
    has none."""

    code: str
    row: PulseRow | None = None
    pyeong: PulseRow | None = None
    reason: str | None = None


def _sorted_by(row: PulseRow, sort: str) -> tuple[int | None, Interval | None]:
    """The value of ``sort`` of a row, and the 95% interval when it is a median."""
    if sort == "contract_count":
        return row.contract_count, None
    if sort == "median_monthly_rent":
        return row.median_monthly_rent, None
    if sort == "median":
        return row.median_price, row.medians.price.alone
    sale = row.transaction_type == "sale"
    value = row.median_price_per_m2 if sale else row.median_deposit_per_m2
    return value, row.medians.per_area.alone


def compare_row(district: District, query: CompareQuery) -> CompareRow:
    """The unranked row of one district."""
    found = region(district.code)
    row, pyeong = district.row, district.pyeong
    figures: dict[str, Any] = dict.fromkeys(_FIGURES)
    value = interval = None
    if row is not None:
        value, interval = _sorted_by(row, query.sort)
        for name in _FIGURES:
            if not name.endswith("_per_pyeong"):
                figures[name] = getattr(row, name)
            elif pyeong is not None:
                figures[name] = getattr(pyeong, name.replace("_per_pyeong", "_per_m2"))
    bounded = interval is not None and value is not None
    return CompareRow(
        rank=None,
        sigungu_code=district.code,
        sigungu=district_name(district.code, row.sigungu if row else None),
        sido=found.sido if found else None,
        reason=district.reason,
        property_type=str(query.cohort.property_type),
        transaction_type=str(query.cohort.transaction_type),
        period=row.period if row else query.period,
        sort_value=value,
        interval_low=interval.low if bounded and interval else None,
        interval_high=interval.high if bounded and interval else None,
        **figures,
    )


_FIGURES = tuple(
    f.name
    for f in attrs.fields(CompareRow)
    if f.name
    not in {
        "rank",
        "sigungu_code",
        "sigungu",
        "sido",
        "reason",
        "property_type",
        "transaction_type",
        "period",
        "sort_value",
        "interval_low",
        "interval_high",
    }
)
"""The fields a district's pulse row fills (``*_per_pyeong`` from its pyeong row)."""


def rank_rows(rows: Sequence[CompareRow], order: str) -> list[CompareRow]:
    """``rows`` in ranking order with their ranks (module docstring)."""
    valued = sorted((r for r in rows if r.sort_value is not None), key=lambda r: r.sigungu_code)
    valued.sort(key=lambda r: r.sort_value or 0, reverse=order == "desc")
    rest = sorted(
        (r for r in rows if r.sort_value is None),
        key=lambda r: (r.reason is not None, r.sigungu_code),
    )
    return [attrs.evolve(r, rank=n) for n, r in enumerate(valued, 1)] + rest


def compare_answer(
    districts: Sequence[District],
    query: CompareQuery,
    window: PeriodWindow,
    context: Context,
    *,
    synthetic: bool,
) -> Answer:
    """The answer: every district's row, ranked, and the envelope."""
    rows = rank_rows([compare_row(d, query) for d in districts], query.order)
    with_figures = [d.row for d in districts if d.row is not None]
    reasons: dict[str, int] = {}
    for d in districts:
        if d.reason is not None:
            reasons[d.reason] = reasons.get(d.reason, 0) + 1
    mix: dict[str, int] = {}
    for row in with_figures:
        for source, n in row.source_mix.items():
            mix[source] = mix.get(source, 0) + n
    cohort = query.cohort
    echo = {
        "sigungu_codes": list(query.codes),
        "sido": query.sido,
        "property_type": cohort.property_type,
        "transaction_type": cohort.transaction_type,
        "period": query.period,
        "window_from": window.window_from,
        "window_to": window.window_to,
        "building_type": cohort.building_type,
        "lease_kind": cohort.lease_kind,
        **{p.name: getattr(cohort, p.name) for p in LAND_FILTERS},
        "sort": query.sort,
        "order": query.order,
    }
    meta = layer_meta(
        context,
        count=len(rows),
        source_mix=mix,
        synthetic=synthetic,
        grade=worst(r.confidence for r in with_figures),
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        query=echo,
        extra={
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
            "ranked": sum(r.rank is not None for r in rows),
            "without_figures": dict(sorted(reasons.items())),
            "incomplete_districts": [r.sigungu_code for r in rows if r.complete is False],
            "methodology": CONTRACT_METHODOLOGY,
        },
    )
    return Answer(data=rows, meta=meta)
