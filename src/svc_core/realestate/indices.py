"""Index rows: R-ONE survey statistics of a district, with the cap rate (SPEC "Index row").

``annualized_cap_rate`` is ``value_pct`` x 4 on quarterly ``income_yield`` rows (a
quarterly NOI yield), rounded to 6 decimals, and ``value_pct`` itself on an annual one
(R-ONE's annual income yield is a year's already); null on every other metric. When a district and its
renumbering alias both hold a value for the same series and period, the requested
code's own value is kept.

Each value belongs to a series: its survey class, the era of its table and the table
(``survey_class``, ``era``, ``source_table``, added after SPEC's fields). An answer
gives one row per property type, metric and period (SPEC's row), from the preferred
series (``preference``): the property type's primary class, then ``CLASS_ORDER``; the
board's linked ``(시계열)`` series before an era table, an era table before a value of
no known era. ``series=all`` gives every series instead. ``rent_level`` (thousand won
per m² a month), ``net_operating_income`` (thousand won per m² a quarter, or a year for
an annual value) and ``floor_utility_ratio`` (a percentage), not SPEC's metrics, are
given only when asked for by ``metric_type``; a floor table's value is a ``rent_level``
or ``floor_utility_ratio`` row with its ``floor``, beside the rent of all floors. Each row
says its ``unit`` (``metric_unit``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from svc_core.envelope import Answer
from svc_core.errors import NotFound
from svc_core.json_schema import doc, enum, nullable, number, string
from svc_core.models import METRIC_TYPES, PROPERTY_TYPES, IndexObservation
from svc_core.periods import YEAR_PATTERN, IndexWindow
from svc_core.realestate.common import Context, district_name, layer_meta
from svc_core.realestate.loaded import NOT_LOADED, unknown_district
from svc_core.realestate.query import IndicesQuery
from svc_core.realestate.row_docs import PROPERTY_TYPE
from svc_core.same_named import SameNamed
from svc_core.sources.rone import CLASS_ORDER, PRIMARY_CLASS

INDEX_SOURCES = ("rone_official",)
OPT_IN_METRICS = frozenset({"rent_level", "net_operating_income", "floor_utility_ratio"})
"""Metrics outside SPEC's list: in an answer only when ``metric_type`` names them."""
LINKED_ERA = "linked"
INCOME_YIELD_PERIODS_PER_YEAR = 4
METRIC_UNITS: dict[str, str] = {
    "vacancy_rate": "%",
    "income_yield": "%",
    "capital_yield": "%",
    "total_return": "%",
    "rent_index": "index points",
    "sale_price_index": "index points",
    "rent_level": "천원/㎡/month",
    "net_operating_income": "천원/㎡/quarter",
    "floor_utility_ratio": "%",
}
"""The unit of each metric's ``value_pct`` (a quarter's value; ``metric_unit``)."""
RONE_KEY_SETTING = "SVC_RONE_KEY"
"""Where ``svc sync rone`` reads its key (``commands.sync_rone``)."""
RONE_HINT = (
    "Get a key at R-ONE's open API portal (www.reb.or.kr/r-one/openapi), then run "
    "SVC_RONE_KEY=... svc sync rone; see docs/sync.md."
)
INDICES_HINT = (
    "Indices exist for districts mapped from R-ONE market areas and for the periods the "
    "survey published; try period=last_8q or a year such as 2025."
)


@attrs.frozen(kw_only=True)
class IndexValue:
    """One stored index value as the rows see it (``period_end_date`` as ``YYYY-MM-DD``)."""

    sigungu_code: str
    sigungu: str
    property_type: str
    metric_type: str
    period: str
    period_end_date: str
    value_pct: float
    source: str = "rone_official"
    synthetic: bool = False
    survey_class: str = ""
    era: str = ""
    source_table: str = ""
    floor: str = ""


_FROM_OBSERVATION = SameNamed(IndexValue, IndexObservation)


def index_value_of(obs: IndexObservation) -> IndexValue:
    """The rows' view of a parsed observation (its fields of the same name as they are)."""
    return _FROM_OBSERVATION(obs, period_end_date=obs.period_end_date.isoformat())


PLACE = string(
    "5-digit district (sigungu) code, or A + the R-ONE CLS_ID of a market area (every "
    "area is served under its own code, mapped to districts or not).",
    pattern="^([0-9]{5}|A[0-9]{1,12})$",
)
"""The schema of an index row's ``sigungu_code``."""


@attrs.frozen(kw_only=True)
class IndexRow:
    """One index value of the requested district, fields in SPEC order."""

    sigungu_code: str = attrs.field(metadata=doc(PLACE))
    sigungu: str = attrs.field(metadata=doc(string()))
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE))
    metric_type: str = attrs.field(metadata=doc(enum(METRIC_TYPES)))
    period: str = attrs.field(metadata=doc(string(pattern=f"^{YEAR_PATTERN}(-Q[1-4])?$")))
    period_end_date: str = attrs.field(metadata=doc(string(format="date")))
    value_pct: float = attrs.field(
        metadata=doc(
            number(
                "The value as published, in the row's unit: a percentage (vacancy, yields, "
                "floor_utility_ratio); index points for rent_index and sale_price_index; "
                "thousand won (천원) per m² a month for rent_level; thousand won per m² a "
                "quarter (a year on an annual row) for net_operating_income."
            )
        )
    )
    annualized_cap_rate: float | None = attrs.field(
        metadata=doc(
            nullable(
                number(
                    "income_yield rows: value_pct x 4 on a quarter's row, value_pct on an "
                    "annual (YYYY) row, which is a year's yield already."
                )
            )
        )
    )
    survey_class: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The R-ONE survey class the value is of: 오피스 (office); 중대형 상가, 소규모 "
                    "상가 or 일반 상가 (retail); 집합 상가 (commercial_complex). Null when not "
                    "known (a value loaded from a file that does not say)."
                )
            )
        )
    )
    era: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The era of the R-ONE table the value comes from: `linked` for the "
                    "board's linked (시계열) series, else the table's era (`2024Q3~`, "
                    "`2022~`, `2021`, `2020`, `2019`, `2013~2016`). Null when not known "
                    "(loaded before svc recorded eras, or from a file read without its table "
                    "name)."
                )
            )
        )
    )
    source_table: str | None = attrs.field(
        metadata=doc(nullable(string("The R-ONE STATBL_ID of that table; null when not known.")))
    )
    floor: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "rent_level and floor_utility_ratio rows of a floor table (층별임대료 및 "
                    "층별효용비율): the floor as R-ONE names it (지하1층, 1층 ... 6층이상); null "
                    "for the rent of all floors and on every other metric."
                )
            )
        )
    )
    unit: str = attrs.field(
        metadata=doc(
            string(
                "The unit of value_pct: `%`, `index points`, `천원/㎡/month` (rent_level), "
                "`천원/㎡/quarter` or `천원/㎡/year` (net_operating_income of a quarter or a "
                "year)."
            )
        )
    )


CAP_RATE_METHOD = (
    "annualized_cap_rate = value_pct x 4 on quarterly income_yield rows: R-ONE's quarterly "
    "income (NOI) yield annualized by simple multiplication, not compounded; on an annual "
    "income_yield row (period YYYY) value_pct itself, the year's yield as R-ONE publishes "
    "it; null on other metrics."
)
"""How ``annualized_cap_rate`` is computed, stated in every indices envelope."""


def metric_unit(metric_type: str, period: str) -> str:
    """The unit of a metric's value in ``period`` (``YYYY-Qn`` or ``YYYY``): net operating
    income is a flow, a quarter's or (an annual value) a year's."""
    unit = METRIC_UNITS.get(metric_type, "%")
    if metric_type == "net_operating_income" and len(period) == 4:
        return "천원/㎡/year"
    return unit


def cap_rate(metric_type: str, value_pct: float, period: str = "") -> float | None:
    """The annualized cap rate of an ``income_yield``: a quarter's x 4, a year's
    (``period`` ``YYYY``) as it is; None for other metrics."""
    if metric_type != "income_yield":
        return None
    if len(period) == 4:
        return round(value_pct, 6)
    return round(value_pct * INCOME_YIELD_PERIODS_PER_YEAR, 6)


def preference(code: str, v: IndexValue) -> tuple[int, int, int]:
    """How much an answer for ``code`` prefers ``v`` (smaller first): the code's own
    value before an alias's, the primary class, the linked series, a known era."""
    if v.survey_class in ("", PRIMARY_CLASS.get(v.property_type)):
        class_rank = 0
    elif v.survey_class in CLASS_ORDER:
        class_rank = 1 + CLASS_ORDER.index(v.survey_class)
    else:
        class_rank = len(CLASS_ORDER) + 1
    era_rank = 0 if v.era == LINKED_ERA else 1 if v.era else 2
    return (0 if v.sigungu_code == code else 1, class_rank, era_rank)


def chosen_values(
    code: str, found: Iterable[IndexValue], *, every_series: bool = False
) -> list[IndexValue]:
    """One value per (property type, metric, period and floor: a floor rent is a value
    of its own), the most preferred (of equally preferred ones the last); with
    ``every_series`` one per series too (class and era), the code's own before an
    alias's."""
    chosen: dict[tuple[str, ...], IndexValue] = {}
    for v in found:
        key: tuple[str, ...] = (v.property_type, v.metric_type, v.period, v.floor)
        if every_series:
            key += (v.survey_class, v.era)
        if key not in chosen or preference(code, v) <= preference(code, chosen[key]):
            chosen[key] = v
    return sorted(chosen.values(), key=lambda v: preference(code, v)[1:])


def index_rows(code: str, values: Iterable[IndexValue]) -> list[IndexRow]:
    """Rows of ``values`` reported under ``code``, by property type, metric and period."""
    rows = [
        IndexRow(
            sigungu_code=code,
            sigungu=district_name(code, v.sigungu),
            property_type=v.property_type,
            metric_type=v.metric_type,
            period=v.period,
            period_end_date=v.period_end_date,
            value_pct=float(v.value_pct),
            annualized_cap_rate=cap_rate(v.metric_type, float(v.value_pct), v.period),
            survey_class=v.survey_class or None,
            era=v.era or None,
            source_table=v.source_table or None,
            floor=v.floor or None,
            unit=metric_unit(v.metric_type, v.period),
        )
        for v in values
    ]
    rows.sort(  # stable: the series of one period stay in the order of preference
        key=lambda r: (
            PROPERTY_TYPES.index(r.property_type),
            METRIC_TYPES.index(r.metric_type),
            r.period,
            r.floor or "",
        )
    )
    return rows


def indices_answer(
    found: Sequence[IndexValue],
    query: IndicesQuery,
    window: IndexWindow,
    context: Context,
    *,
    synthetic: bool,
    loaded: bool = True,
) -> Answer:
    """``GET /api/v1/real-estate/indices``'s answer from the window's values (of the
    district and its aliases); ``NotFound`` (404, with the envelope) when there is none:
    ``reason`` ``not_loaded`` when the store holds no R-ONE value at all (``loaded``
    False), ``unknown_district`` for a code no district has. ``synthetic`` is the
    store's flag, used when nothing is found."""
    if query.metric_type is None:
        found = [v for v in found if v.metric_type not in OPT_IN_METRICS]
    kept = chosen_values(query.sigungu_code, found, every_series=query.series == "all")
    rows = index_rows(query.sigungu_code, kept)
    echo = {
        "sigungu_code": query.sigungu_code,
        "property_type": query.property_type,
        "metric_type": query.metric_type,
        "period": query.period,
        "series": query.series,
        "window_from": window.window_from,
        "window_to": window.window_to,
    }
    meta = layer_meta(
        context,
        count=len(rows),
        source_mix=dict(Counter(v.source for v in kept)),
        synthetic=any(v.synthetic for v in kept) if kept else synthetic,
        sources=INDEX_SOURCES,
        query=echo,
        extra={
            "cap_rate_method": CAP_RATE_METHOD,
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
        },
    )
    if not rows and not loaded:
        raise NotFound(
            "No R-ONE index values are loaded in this store: they come from the Korea Real "
            "Estate Board's open API, loaded by `svc sync rone` with an R-ONE key "
            f"({RONE_KEY_SETTING}), or by `svc ingest rone-index` of a downloaded file.",
            hint=RONE_HINT,
            meta=meta,
            extra={"reason": NOT_LOADED},
        )
    unknown = unknown_district(query.sigungu_code) if query.sigungu_code[:1] != "A" else None
    if not rows and unknown is not None:
        raise NotFound(unknown.message, hint=unknown.hint, meta=meta, extra=unknown.extra)
    if not rows:
        raise NotFound(
            f"No index values for district {query.sigungu_code} in {query.period}"
            + (f" ({window.window_from} to {window.window_to})." if window.periods else "."),
            hint=INDICES_HINT,
            meta=meta,
        )
    return Answer(data=rows, meta=meta)
