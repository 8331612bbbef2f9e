"""The marketplace vertical: listing records, cohort aggregates and k-anonymity.

A *cohort* is the set of listings of one region, category and month, optionally narrowed
to one product type. A listing belongs to a month's cohorts iff it has an activity row for
that month. Price statistics use the *effective price*: the discounted price when present,
else the list price.

Privacy (``K`` = 3; the full argument is in ``docs/marketplace.md``). Every answer is a
function of published rows only, and no published number is computed over, or can be
differenced down to, a group of 1 or 2 listings:

1. Primary: a cohort with fewer than ``K`` listings is never published.
2. Complementary, within a cell (region, category, period): the combined cohort is
   published only when the listings outside the published product-type cohorts number
   0 or at least ``K``; so combined minus rental never exposes 1 or 2 meeting listings.
3. Prices across months: a listing's price is the same in every month it is active, so
   two months' price statistics could be differenced. Within a (region, category), the
   price fields of a published row are withheld (null) when its listing set differs from
   an earlier price-published set by 1 or 2 listings (symmetric difference). Within one
   cell, prices are published for all rows or for at most one (any two determine the
   third). Decisions run month by month, so adding a later month never changes an
   earlier answer.
4. ``demand_index`` divides by the category average over *published* cohorts only, so it
   is computable from published rows and adds no information.

Rounding (Python ``round``, half to even): prices 2 decimals, rates 4, demand index 1.

Long because the privacy argument (rules 1 to 4) must be checked as a whole: the
publication, complement and differencing rules and the rows they guard live together.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from svc_core import params
from svc_core.cohorts.confidence import worst
from svc_core.cohorts.stats import quantile
from svc_core.envelope import API_VERSION, SERVICE
from svc_core.errors import InvalidParams
from svc_core.instants import iso
from svc_core.models import one_of, optional
from svc_core.params import Param
from svc_core.periods import MAX_YEAR, MIN_YEAR, MONTH_PATTERN, parse_month

CATEGORIES: tuple[str, ...] = (
    "office",
    "meeting_room",
    "warehouse",
    "retail",
    "studio",
    "share_office",
    "event_space",
    "party_room",
    "residence",
    "other",
)
PRODUCT_TYPES: tuple[str, ...] = ("rental", "meeting")
K_ANONYMITY = 3
"""Smallest number of listings any published number may describe."""
HIGH_CONFIDENCE = 20
MEDIUM_CONFIDENCE = 8
MAX_PRICE = 1e12
"""Upper bound of a price (KRW): far above any listing, exact in a float."""
MAX_HOURS = 1e6
MAX_COUNT = 10**12
MAX_REGION_LENGTH = 64
PERIOD_HINT = "Use a month YYYY-MM (month 01 to 12), e.g. 2026-09."
DIMENSIONS_HINT = "List regions, categories and periods with GET /api/v1/markets/dimensions."

LISTING_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
PERIOD = re.compile(r"([0-9]{4})-(0[1-9]|1[0-2])")


def _listing_id(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if type(value) is not str or LISTING_ID.fullmatch(value) is None:
        raise ValueError(f"{attribute.name} must match {LISTING_ID.pattern}: {value!r}")


_NOT_IN_NAMES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories refused in names: controls, format (bidi overrides, zero-width),
surrogates, private use, unassigned, line and paragraph separators."""


def is_region(value: object) -> bool:
    """A region name: NFC text of 1 to 64 characters, no surrounding blanks or controls."""
    return (
        type(value) is str
        and 0 < len(value) <= MAX_REGION_LENGTH
        and value == value.strip()
        and unicodedata.is_normalized("NFC", value)
        and not any(unicodedata.category(c) in _NOT_IN_NAMES for c in value)
    )


def _region(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not is_region(value):
        raise ValueError(f"{attribute.name} must be NFC text of 1 to 64 characters: {value!r}")


def is_period(value: object) -> bool:
    """``YYYY-MM`` with month 01 to 12 and a year the period grammar accepts."""
    if type(value) is not str:
        return False
    m = PERIOD.fullmatch(value)
    return m is not None and MIN_YEAR <= int(m.group(1)) <= MAX_YEAR


def _period(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not is_period(value):
        raise ValueError(f"{attribute.name} must be YYYY-MM (month 01 to 12): {value!r}")


def _to_float(value: Any) -> Any:
    """ints become floats; anything else (bool, str, None) is left for the validator."""
    if type(value) is int:
        return float(value)
    return value


def _bounded(high: float) -> Any:
    def check(_: object, attribute: attrs.Attribute[float], value: float) -> None:
        if type(value) is not float or not (math.isfinite(value) and 0 <= value <= high):
            raise ValueError(f"{attribute.name} must be a number from 0 to {high:g}: {value!r}")

    return check


def _count(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{attribute.name} must be an integer from 0 to {MAX_COUNT}: {value!r}")


@attrs.frozen(kw_only=True)
class Listing:
    """A marketplace listing. Prices are KRW in the listing's billing unit."""

    listing_id: str = attrs.field(validator=_listing_id)
    region: str = attrs.field(validator=_region)
    category: str = attrs.field(validator=one_of(CATEGORIES))
    product_type: str = attrs.field(validator=one_of(PRODUCT_TYPES))
    list_price: float = attrs.field(converter=_to_float, validator=_bounded(MAX_PRICE))
    discounted_price: float | None = attrs.field(
        default=None, converter=_to_float, validator=optional(_bounded(MAX_PRICE))
    )

    @property
    def effective_price(self) -> float:
        """The price a customer pays: discounted when present, else the list price."""
        return self.list_price if self.discounted_price is None else self.discounted_price


@attrs.frozen(kw_only=True)
class Activity:
    """One listing's activity in one month; ``booked_hours <= available_hours``."""

    listing_id: str = attrs.field(validator=_listing_id)
    period: str = attrs.field(validator=_period)
    views: int = attrs.field(validator=_count)
    bookings: int = attrs.field(validator=_count)
    booked_hours: float = attrs.field(converter=_to_float, validator=_bounded(MAX_HOURS))
    available_hours: float = attrs.field(converter=_to_float, validator=_bounded(MAX_HOURS))

    def __attrs_post_init__(self) -> None:
        if self.booked_hours > self.available_hours:
            raise ValueError("booked_hours must not exceed available_hours")


@attrs.frozen(kw_only=True)
class ListingMonth:
    """A listing with its activity in one month: one member of that month's cohorts."""

    listing: Listing
    activity: Activity

    def __attrs_post_init__(self) -> None:
        if self.listing.listing_id != self.activity.listing_id:
            raise ValueError("activity and listing must have the same listing_id")

    @property
    def period(self) -> str:
        return self.activity.period


def join_months(listings: Iterable[Listing], activities: Iterable[Activity]) -> list[ListingMonth]:
    """Pair each activity row with its listing; rows of unknown listings are dropped.

    A later listing with the same id replaces an earlier one (the store's upsert).
    """
    by_id = {listing.listing_id: listing for listing in listings}
    return [
        ListingMonth(listing=by_id[a.listing_id], activity=a)
        for a in activities
        if a.listing_id in by_id
    ]


@attrs.frozen(kw_only=True)
class MarketRow:
    """A marketplace pulse row (SPEC field order). ``product_type`` None = all combined.

    Price fields are None when withheld for privacy (rule 3 of the module docstring).
    """

    region: str
    category: str
    period: str
    product_type: str | None
    avg_price: float | None
    median_price: float | None
    min_price: float | None
    max_price: float | None
    price_p25: float | None
    price_p75: float | None
    sample_size: int
    total_views: int
    total_bookings: int
    demand_index: float | None
    booking_conv_rate: float | None
    occupancy_proxy: float | None
    confidence: str

    @property
    def key(self) -> CohortKey:
        return (self.region, self.category, self.period, self.product_type)

    def as_dict(self) -> dict[str, Any]:
        """The row as SPEC's JSON object, fields in SPEC order."""
        return attrs.asdict(self)


CohortKey = tuple[str, str, str, str | None]
"""(region, category, period, product_type or None for the combined cohort)."""


def confidence_for(sample_size: int) -> str:
    """``high`` from 20 listings, ``medium`` from 8, else ``low``."""
    if sample_size >= HIGH_CONFIDENCE:
        return "high"
    if sample_size >= MEDIUM_CONFIDENCE:
        return "medium"
    return "low"


def _ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator`` unrounded (SPEC defines the ratio, not a rounding of
    it: a 4-decimal rate was off by up to 0.6 % and could not be undone), None for 0/0."""
    return None if denominator == 0 else numerator / denominator


@attrs.frozen(kw_only=True)
class _Cohort:
    key: CohortKey
    members: tuple[ListingMonth, ...]
    ids: frozenset[str]

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def views(self) -> int:
        return sum(m.activity.views for m in self.members)


def _cohort(key: CohortKey, members: Iterable[ListingMonth]) -> _Cohort:
    items = tuple(sorted(members, key=lambda m: m.listing.listing_id))
    return _Cohort(key=key, members=items, ids=frozenset(m.listing.listing_id for m in items))


def _safe_difference(size: int) -> bool:
    """A group this large may be derivable: none at all, or at least K listings."""
    return size == 0 or size >= K_ANONYMITY


def _cells(months: Iterable[ListingMonth]) -> dict[tuple[str, str, str], list[ListingMonth]]:
    cells: dict[tuple[str, str, str], list[ListingMonth]] = {}
    seen: set[tuple[str, str]] = set()
    for m in months:
        mark = (m.listing.listing_id, m.period)
        if mark in seen:
            raise ValueError(f"listing {mark[0]} has two activity rows for {mark[1]}")
        seen.add(mark)
        cells.setdefault((m.listing.region, m.listing.category, m.period), []).append(m)
    return cells


def _published_in_cell(cell: tuple[str, str, str], members: list[ListingMonth]) -> list[_Cohort]:
    """Rules 1 and 2: the cohorts of one cell that may be published (rental, meeting, all)."""
    region, category, period = cell
    out: list[_Cohort] = []
    for product_type in PRODUCT_TYPES:
        part = [m for m in members if m.listing.product_type == product_type]
        if len(part) >= K_ANONYMITY:
            out.append(_cohort((region, category, period, product_type), part))
    residual = len(members) - sum(c.size for c in out)
    if len(members) >= K_ANONYMITY and _safe_difference(residual):
        out.append(_cohort((region, category, period, None), members))
    return out


def _price_published(cohorts: list[_Cohort], history: list[frozenset[str]]) -> list[_Cohort]:
    """Rule 3: the cohorts of one cell whose price statistics may be published."""

    def clear(c: _Cohort) -> bool:
        return all(
            abs(len(c.ids) - len(h)) >= K_ANONYMITY or _safe_difference(len(c.ids ^ h))
            for h in history
        )

    passing = [c for c in cohorts if clear(c)]
    if len(passing) == len(cohorts):
        return passing
    return passing[:1]


def _row(cohort: _Cohort, *, prices: bool, baseline: tuple[int, int]) -> MarketRow:
    region, category, period, product_type = cohort.key
    acts = [m.activity for m in cohort.members]
    views = sum(a.views for a in acts)
    bookings = sum(a.bookings for a in acts)
    booked = math.fsum(a.booked_hours for a in acts)
    available = math.fsum(a.available_hours for a in acts)
    n = cohort.size
    base_views, base_listings = baseline
    demand = None
    if base_views > 0:
        demand = (
            100 * views * base_listings / (n * base_views)
        )  # one division: exact when it can be
    values = sorted(m.listing.effective_price for m in cohort.members)

    def price(value: float) -> float | None:
        return round(value, 2) if prices else None

    return MarketRow(
        region=region,
        category=category,
        period=period,
        product_type=product_type,
        avg_price=price(math.fsum(values) / n),
        median_price=price(quantile(values, 0.5)),
        min_price=price(values[0]),
        max_price=price(values[-1]),
        price_p25=price(quantile(values, 0.25)),
        price_p75=price(quantile(values, 0.75)),
        sample_size=n,
        total_views=views,
        total_bookings=bookings,
        demand_index=demand,
        booking_conv_rate=_ratio(bookings, views),
        occupancy_proxy=_ratio(booked, available),
        confidence=confidence_for(n),
    )


_PRODUCT_ORDER = {"rental": 0, "meeting": 1, None: 2}


def _order(key: CohortKey) -> tuple[str, int, str, int]:
    region, category, period, product_type = key
    return (region, CATEGORIES.index(category), period, _PRODUCT_ORDER[product_type])


def publishable_rows(months: Iterable[ListingMonth]) -> list[MarketRow]:
    """Every pulse row that may be published, ordered by region, category, period, product.

    ``months`` must hold every listing-month the answers may draw on: all regions (the
    demand index compares them) and all earlier months (rule 3 looks back). A listing may
    have at most one activity row per month (ValueError otherwise).
    """
    cells = _cells(months)
    published: dict[tuple[str, str, str], list[_Cohort]] = {
        cell: _published_in_cell(cell, members) for cell, members in cells.items()
    }

    priced: set[CohortKey] = set()
    history: dict[tuple[str, str], list[frozenset[str]]] = {}
    for cell in sorted(published, key=lambda c: c[2]):
        past = history.setdefault((cell[0], cell[1]), [])
        chosen = _price_published(published[cell], past)
        priced.update(c.key for c in chosen)
        past.extend({c.ids for c in chosen})

    baselines: dict[tuple[str, str, str | None], tuple[int, int]] = {}
    for cohorts in published.values():
        for c in cohorts:
            _, category, period, product_type = c.key
            views, listings = baselines.get((category, period, product_type), (0, 0))
            baselines[(category, period, product_type)] = (views + c.views, listings + c.size)

    rows = [
        _row(c, prices=c.key in priced, baseline=baselines[(c.key[1], c.key[2], c.key[3])])
        for cohorts in published.values()
        for c in cohorts
    ]
    return sorted(rows, key=lambda r: _order(r.key))


def aggregate(
    listings_with_activity: Iterable[ListingMonth],
    *,
    region: str,
    category: str,
    period: str,
    product_type: str | None,
) -> MarketRow | None:
    """The pulse row of one cohort, or None when it is empty or may not be published.

    Pass every listing-month of ``category`` (all regions, all months up to ``period``):
    the privacy rules and the demand index look across them. Other categories and later
    months are ignored.
    """
    relevant = [
        m for m in listings_with_activity if m.listing.category == category and m.period <= period
    ]
    wanted: CohortKey = (region, category, period, product_type)
    return next((r for r in publishable_rows(relevant) if r.key == wanted), None)


@attrs.frozen(kw_only=True)
class DimensionValue:
    value: str
    sample_count: int


@attrs.frozen(kw_only=True)
class MarketDimensions:
    """SPEC's marketplace dimensions: values with the number of published combinations.

    A combination is a (region, category, period) with at least one published row;
    ``sample_count`` counts combinations, never listings.
    """

    regions: tuple[DimensionValue, ...]
    categories: tuple[DimensionValue, ...]
    periods: tuple[DimensionValue, ...]

    @property
    def total_combinations(self) -> int:
        """regions × categories × periods over the listed values."""
        return len(self.regions) * len(self.categories) * len(self.periods)

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        """The ``data`` object of ``GET /api/v1/markets/dimensions``."""
        return {
            "regions": [attrs.asdict(v) for v in self.regions],
            "categories": [attrs.asdict(v) for v in self.categories],
            "periods": [attrs.asdict(v) for v in self.periods],
        }


def _values(counts: Mapping[str, int], order: Sequence[str]) -> tuple[DimensionValue, ...]:
    return tuple(DimensionValue(value=v, sample_count=counts[v]) for v in order)


def dimensions(rows: Iterable[MarketRow]) -> MarketDimensions:
    """Dimensions of published rows (pass ``publishable_rows`` output).

    Regions are sorted by name, categories follow the enumeration, periods ascend. Only
    values with at least one published combination are listed.
    """
    combos = {(r.region, r.category, r.period) for r in rows}
    regions: dict[str, int] = {}
    categories: dict[str, int] = {}
    periods: dict[str, int] = {}
    for region, category, period in combos:
        regions[region] = regions.get(region, 0) + 1
        categories[category] = categories.get(category, 0) + 1
        periods[period] = periods.get(period, 0) + 1
    return MarketDimensions(
        regions=_values(regions, sorted(regions)),
        categories=_values(categories, [c for c in CATEGORIES if c in categories]),
        periods=_values(periods, sorted(periods)),
    )


@attrs.frozen(kw_only=True)
class MarketQuery:
    """The resolved parameters of ``GET /api/v1/markets/pulse``."""

    region: str = attrs.field(validator=_region)
    category: str = attrs.field(validator=one_of(CATEGORIES))
    period: str = attrs.field(validator=_period)
    product_type: str | None = attrs.field(default=None, validator=optional(one_of(PRODUCT_TYPES)))

    def as_dict(self) -> dict[str, str | None]:
        """The ``_meta.query`` echo."""
        return attrs.asdict(self)


REGION_PARAM = Param(
    name="region",
    description=f"A region from GET /api/v1/markets/dimensions, at most {MAX_REGION_LENGTH} "
    "characters.",
    required=True,
    hint=DIMENSIONS_HINT,
    example="강남",
)
CATEGORY_PARAM = Param(
    name="category",
    description="Listing category.",
    kind="enum",
    choices=CATEGORIES,
    required=True,
    example="office",
)
PERIOD_PARAM = Param(
    name="period",
    description="A month YYYY-MM.",
    required=True,
    doc_pattern=MONTH_PATTERN,
    hint=PERIOD_HINT,
    example="2026-09",
)
PRODUCT_TYPE_PARAM = Param(
    name="product_type",
    description="rental or meeting; both combined when absent.",
    kind="enum",
    choices=PRODUCT_TYPES,
)
MARKET_PARAMS: tuple[Param, ...] = (
    REGION_PARAM,
    CATEGORY_PARAM,
    PERIOD_PARAM,
    PRODUCT_TYPE_PARAM,
)
"""The query of ``GET /api/v1/markets/pulse``, declared once."""
QUERY_PARAMS: tuple[str, ...] = tuple(p.name for p in MARKET_PARAMS)


def market_query(pairs: Sequence[tuple[str, str]]) -> MarketQuery:
    """Validate the pulse query strictly; ``InvalidParams`` (or ``InvalidPeriod``) on error.

    Parameters are checked in declaration order, so the first bad one is reported."""
    q = params.strict_query(pairs, QUERY_PARAMS)
    region = unicodedata.normalize("NFC", str(REGION_PARAM.read(q)))
    if not is_region(region):
        raise InvalidParams(
            "Query parameter 'region' must be a region name of at most 64 characters.",
            hint=DIMENSIONS_HINT,
        )
    if not q.get("category"):
        raise InvalidParams(
            "Query parameter 'category' is required.", hint=f"One of: {', '.join(CATEGORIES)}."
        )
    category = str(CATEGORY_PARAM.read(q))
    period = parse_month(str(PERIOD_PARAM.read(q)), hint=PERIOD_HINT).label
    product_type = PRODUCT_TYPE_PARAM.read(q)
    return MarketQuery(
        region=region,
        category=category,
        period=period,
        product_type=None if product_type is None else str(product_type),
    )


def market_meta(
    *,
    generated_at: datetime,
    count: int,
    confidence: str | None,
    auth_method: str,
    query: MarketQuery,
    rate_limit: Mapping[str, int | None],
    request_id: str | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of ``GET /api/v1/markets/pulse`` (SPEC "Marketplace pulse row").

    ``rate_limit`` is ``svc_core.envelope.rate_limit`` of the caller; ``request_id`` is
    added when given (SPEC common behaviour 3).
    """
    meta: dict[str, Any] = {
        "service": SERVICE,
        "api_version": API_VERSION,
        "generated_at": iso(generated_at, "generated_at"),
        "count": count,
        "confidence": confidence,
        "auth_method": auth_method,
        "query": query.as_dict(),
        "rate_limit": dict(rate_limit),
    }
    if request_id is not None:
        meta["request_id"] = request_id
    return meta


def rows_confidence(rows: Iterable[MarketRow]) -> str | None:
    """The weakest confidence among rows (``_meta.confidence``); None without rows."""
    return worst(r.confidence for r in rows)


def market_dimensions_meta(
    *,
    generated_at: datetime,
    total_combinations: int,
    auth_method: str,
    rate_limit: Mapping[str, int | None],
    request_id: str | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of ``GET /api/v1/markets/dimensions`` (SPEC "Marketplace dimensions")."""
    meta: dict[str, Any] = {
        "service": SERVICE,
        "api_version": API_VERSION,
        "generated_at": iso(generated_at, "generated_at"),
        "total_combinations": total_combinations,
        "auth_method": auth_method,
        "rate_limit": dict(rate_limit),
    }
    if request_id is not None:
        meta["request_id"] = request_id
    return meta
