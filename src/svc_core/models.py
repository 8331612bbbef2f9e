"""Records of the real-estate vertical: transactions, index observations, load reports.

``Transaction`` and ``IndexObservation`` are frozen attrs values whose validators make an
invalid record impossible to build; every reader in ``svc_core.sources`` produces them and
the store writes them as they are. ``LoadReport`` is the mutable tally a reader fills and
the store completes (``loaded``, ``duplicate``).

Amounts are whole KRW (the sources' 만원 times 10,000). ``natural_key`` identifies a
record across loads, so loading the same file twice stores nothing new.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from typing import Any

import attrs

PROPERTY_TYPES: tuple[str, ...] = (
    "office",
    "retail",
    "commercial_complex",
    "mixed_use",
    "officetel",
    "industrial",
    "land",
)
"""``industrial``: factory and warehouse sales (RTMS InduTrade); ``land``: land sales (RTMS
LandTrade)."""
TRANSACTION_TYPES: tuple[str, ...] = ("sale", "chartered_lease", "monthly_lease")
BUILDING_TYPES: tuple[str, ...] = ("whole_building", "unit")
"""RTMS ``buildingType``: ``일반`` (a whole building) and ``집합`` (a unit of a multi-unit
building); officetels are units."""
INDUSTRIAL_USES: tuple[str, ...] = ("factory", "warehouse", "other")
"""What an ``industrial`` building is used for, from RTMS ``buildingUse``: ``공장`` (factory),
``창고``/``창고시설`` (warehouse), anything else (``자동차 관련시설``, ``위험물 저장 및
처리시설``, ...: other)."""
DEAL_TYPES: tuple[str, ...] = ("brokered", "direct")
"""RTMS ``dealingGbn``: ``중개거래`` (through a broker) and ``직거래`` (direct); published for
contracts from 2021-11-01."""
PARTY_TYPES: tuple[str, ...] = ("individual", "company", "public_body", "other")
"""RTMS ``slerGbn``/``buyerGbn``: ``개인``, ``법인``, ``공공기관``, ``기타``; published for
contracts from 2024-01-01."""
LEASE_KINDS: tuple[str, ...] = ("new", "renewal")
"""RTMS ``contractType`` of a lease: ``신규`` (a new lease) and ``갱신`` (a renewal, capped by
law at +5 %)."""
METRIC_TYPES: tuple[str, ...] = (
    "vacancy_rate",
    "income_yield",
    "capital_yield",
    "total_return",
    "rent_index",
    "sale_price_index",
    "rent_level",
    "net_operating_income",
    "floor_utility_ratio",
)
SOURCES: tuple[str, ...] = (
    "rtms_official",
    "rone_index_derived",
    "public_assessment",
    "rone_official",
)
"""Source ids svc knows. Other ids matching ``SOURCE_ID`` may arrive through samples CSV."""

SOURCE_ID = re.compile(r"[a-z][a-z0-9_]{1,39}")
SIGUNGU_CODE = re.compile(r"[0-9]{5}")
INDEX_PLACE = re.compile(r"[0-9]{5}|A[0-9]{1,12}")
"""Where an index value is served: a district code, or ``A`` + the R-ONE ``CLS_ID`` of a
market area that the area map maps to no district."""
TERM_MONTH = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")
INDEX_PERIOD = re.compile(r"[0-9]{4}(-Q[1-4])?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_AMOUNT_KRW = 10**15
"""Upper bound of any amount (1,000 trillion KRW): far above any deal, far below 2**63."""
MAX_KEY_LENGTH = 200
MAX_REJECTION_LINES = 5
"""Line numbers kept per rejection reason in a ``LoadReport``."""

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _pattern(regex: re.Pattern[str]) -> Validator:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is not str or regex.fullmatch(value) is None:
            raise ValueError(f"{attribute.name} must match {regex.pattern}, got {value!r}")

    return check


def one_of(choices: tuple[str, ...]) -> Validator:
    """An attrs validator: the value is one of ``choices``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in choices:
            raise ValueError(f"{attribute.name} must be one of {', '.join(choices)}: {value!r}")

    return check


def _text(max_length: int) -> Validator:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is not str or not 0 < len(value) <= max_length or value != value.strip():
            raise ValueError(
                f"{attribute.name} must be non-empty text without surrounding blanks, "
                f"at most {max_length} characters"
            )
        if _CONTROL.search(value) is not None:
            raise ValueError(f"{attribute.name} must not contain control characters")

    return check


def _maybe_text(max_length: int) -> Validator:
    """``""`` or what ``_text`` accepts."""
    inner = _text(max_length)

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value != "":
            inner(instance, attribute, value)

    return check


def optional(inner: Validator) -> Validator:
    """An attrs validator: None, or what ``inner`` accepts."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None:
            inner(instance, attribute, value)

    return check


def _amount(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not int or not 0 <= value <= MAX_AMOUNT_KRW:
        raise ValueError(f"{attribute.name} must be an integer from 0 to {MAX_AMOUNT_KRW}")


def _area(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not float or not (math.isfinite(value) and 0 < value < 1e7):
        raise ValueError(f"{attribute.name} must be a positive finite float below 1e7 m²")


def _whole(low: int, high: int) -> Validator:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"{attribute.name} must be an integer from {low} to {high}")

    return check


def _date(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not datetime.date or not 1990 <= value.year <= 2100:
        raise ValueError(f"{attribute.name} must be a datetime.date from 1990 to 2100")


def _finite(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not float or not math.isfinite(value):
        raise ValueError(f"{attribute.name} must be a finite float")


@attrs.frozen(kw_only=True)
class Transaction:
    """One reported deal (sale) or lease contract.

    ``price_krw`` is the sale price for ``sale`` and the deposit for leases;
    ``monthly_rent_krw`` is set (and positive) exactly for ``monthly_lease``. ``area_m2``
    is the area the source reports (building, unit or exclusive area). ``dong`` is the
    legal dong when the source names it. ``building_type`` is ``whole_building`` or
    ``unit`` when the source says (None when unknown) and ``land_area_m2`` the land area
    of a whole building; neither is part of ``natural_key``. ``building_use`` (용도),
    ``floor``, ``build_year`` and ``jibun`` (the lot number as published, masked digits
    such as ``1**`` kept) describe the deal as the source publishes it (None when it does
    not); they are shown, never summarised.

    What the source publishes of the parties and the contract, None when it does not (a
    blank before the date a field was introduced means "not collected"): ``deal_type``
    (``DEAL_TYPES``), ``seller_type`` and ``buyer_type`` (``PARTY_TYPES``), ``land_use``
    (the zoning as published), ``broker_district`` (the brokers' districts as published,
    comma-separated), ``building_name`` (an officetel's name); for leases ``lease_kind``
    (``LEASE_KINDS``), ``term_start``/``term_end`` (``YYYY-MM`` of the contract term),
    ``renewal_right_used`` (True when the tenant used the renewal right, False for a
    renewal without it, None otherwise) and the previous lease's deposit and rent of a
    renewal. ``natural_key`` is unchanged: it already hashes every published field.

    Land and industrial sales: ``land_category`` is a land deal's category (지목) as
    published, ``zoning`` the zone of ``land_use`` by its full legal name
    (``svc_core.sources.land.zone_of``: the short and the long spelling name one zone),
    ``industrial_use`` a factory or warehouse sale's use (``INDUSTRIAL_USES``).
    """

    source: str = attrs.field(validator=_pattern(SOURCE_ID))
    sigungu_code: str = attrs.field(validator=_pattern(SIGUNGU_CODE))
    sigungu: str = attrs.field(validator=_text(40))
    dong: str | None = attrs.field(validator=optional(_text(40)))
    property_type: str = attrs.field(validator=one_of(PROPERTY_TYPES))
    transaction_type: str = attrs.field(validator=one_of(TRANSACTION_TYPES))
    deal_date: datetime.date = attrs.field(validator=_date)
    price_krw: int = attrs.field(validator=_amount)
    monthly_rent_krw: int | None = attrs.field(validator=optional(_amount))
    area_m2: float | None = attrs.field(validator=optional(_area))
    natural_key: str = attrs.field(validator=_text(MAX_KEY_LENGTH))
    building_type: str | None = attrs.field(
        default=None, validator=optional(one_of(BUILDING_TYPES))
    )
    land_area_m2: float | None = attrs.field(default=None, validator=optional(_area))
    building_use: str | None = attrs.field(default=None, validator=optional(_text(40)))
    floor: int | None = attrs.field(default=None, validator=optional(_whole(-99, 999)))
    build_year: int | None = attrs.field(default=None, validator=optional(_whole(1800, 2100)))
    jibun: str | None = attrs.field(default=None, validator=optional(_text(40)))
    deal_type: str | None = attrs.field(default=None, validator=optional(one_of(DEAL_TYPES)))
    seller_type: str | None = attrs.field(default=None, validator=optional(one_of(PARTY_TYPES)))
    buyer_type: str | None = attrs.field(default=None, validator=optional(one_of(PARTY_TYPES)))
    land_use: str | None = attrs.field(default=None, validator=optional(_text(40)))
    broker_district: str | None = attrs.field(default=None, validator=optional(_text(200)))
    building_name: str | None = attrs.field(default=None, validator=optional(_text(100)))
    lease_kind: str | None = attrs.field(default=None, validator=optional(one_of(LEASE_KINDS)))
    term_start: str | None = attrs.field(default=None, validator=optional(_pattern(TERM_MONTH)))
    term_end: str | None = attrs.field(default=None, validator=optional(_pattern(TERM_MONTH)))
    renewal_right_used: bool | None = attrs.field(
        default=None, validator=optional(attrs.validators.instance_of(bool))
    )
    previous_deposit_krw: int | None = attrs.field(default=None, validator=optional(_amount))
    previous_monthly_rent_krw: int | None = attrs.field(default=None, validator=optional(_amount))
    land_category: str | None = attrs.field(default=None, validator=optional(_text(20)))
    zoning: str | None = attrs.field(default=None, validator=optional(_text(40)))
    industrial_use: str | None = attrs.field(
        default=None, validator=optional(one_of(INDUSTRIAL_USES))
    )

    def __attrs_post_init__(self) -> None:
        if self.transaction_type == "monthly_lease":
            if not self.monthly_rent_krw:
                raise ValueError("a monthly_lease needs a positive monthly_rent_krw")
        elif self.monthly_rent_krw is not None:
            raise ValueError(f"a {self.transaction_type} has no monthly_rent_krw")
        if self.transaction_type == "sale" and self.lease_kind is not None:
            raise ValueError("a sale has no lease_kind")

    @property
    def period_month(self) -> str:
        """The contract month as ``YYYY-MM``."""
        return f"{self.deal_date.year:04d}-{self.deal_date.month:02d}"


@attrs.frozen(kw_only=True)
class IndexObservation:
    """One published statistic (R-ONE survey) for a district, property type and period.

    ``period`` is ``YYYY-Qn`` or ``YYYY``; ``period_end_date`` is its last day.
    ``value_pct`` is the value as published (a percentage, index points for the
    ``*_index`` metrics, thousand won per m² for ``rent_level`` and
    ``net_operating_income``; ``floor_utility_ratio`` is a percentage).
    """

    sigungu_code: str = attrs.field(validator=_pattern(INDEX_PLACE))
    sigungu: str = attrs.field(validator=_text(40))
    property_type: str = attrs.field(validator=one_of(PROPERTY_TYPES))
    metric_type: str = attrs.field(validator=one_of(METRIC_TYPES))
    period: str = attrs.field(validator=_pattern(INDEX_PERIOD))
    period_end_date: datetime.date = attrs.field(validator=_date)
    value_pct: float = attrs.field(validator=_finite)
    source: str = attrs.field(default="rone_official", validator=_pattern(SOURCE_ID))
    natural_key: str = attrs.field(validator=_text(MAX_KEY_LENGTH))
    survey_class: str = attrs.field(default="", validator=_maybe_text(20))
    """The R-ONE survey class (``오피스``, ``중대형 상가``, ...); ``""`` when not known."""
    era: str = attrs.field(default="", validator=_maybe_text(20))
    """The era of the table the value comes from (``linked``, ``2024Q3~``, ``2022~``,
    ``2021``, ``2013~2016``); ``""`` when not known (a file read without its table)."""
    source_table: str = attrs.field(default="", validator=_maybe_text(40))
    """The R-ONE ``STATBL_ID`` of that table; ``""`` when not known."""
    floor: str = attrs.field(default="", validator=_maybe_text(20))
    """The floor of a floor table's value as published (``rent_level`` or
    ``floor_utility_ratio`` of one floor); ``""`` for a value of all floors."""

    def __attrs_post_init__(self) -> None:
        year = int(self.period[:4])
        if len(self.period) == 4:
            end = datetime.date(year, 12, 31)
        else:
            q = int(self.period[-1])
            month = 3 * q
            end = datetime.date(year, month, 31 if month in (3, 12) else 30)
        if self.period_end_date != end:
            raise ValueError(f"period_end_date of {self.period} must be {end.isoformat()}")


@attrs.frozen(kw_only=True)
class Rejection:
    """A record a reader refused: where (1-based line or item ordinal), why, and detail."""

    line: int
    reason: str
    detail: str


@attrs.define(kw_only=True)
class LoadReport:
    """What happened to the records of one source file.

    ``read`` counts records seen. ``excluded`` counts records dropped by rule (cancelled
    deals, partial-share deals, rows without a value, ...) by reason; ``rejected`` counts
    malformed records by reason and ``rejections`` keeps the first
    ``MAX_REJECTION_LINES`` of each reason with their line. The store fills ``loaded``
    (new records written), ``duplicate`` (records already stored) and ``retracted``
    (records stored by an earlier load that this file reports as cancelled, now removed).

    ``total_count``, ``page_no`` and ``num_of_rows`` carry the RTMS API paging header when
    the file is one page of a larger answer. ``unit`` names what a rejection's number
    counts: ``line`` (CSV) or ``item`` (the ordinal of an API answer's item, XML or JSON).
    """

    path: str = "<bytes>"
    unit: str = attrs.field(default="line", validator=attrs.validators.in_(("line", "item")))
    read: int = 0
    loaded: int = 0
    duplicate: int = 0
    retracted: int = 0
    excluded: dict[str, int] = attrs.field(factory=dict)
    rejected: dict[str, int] = attrs.field(factory=dict)
    rejections: list[Rejection] = attrs.field(factory=list)
    total_count: int | None = None
    page_no: int | None = None
    num_of_rows: int | None = None

    def exclude(self, reason: str) -> None:
        self.excluded[reason] = self.excluded.get(reason, 0) + 1

    def reject(self, line: int, reason: str, detail: str) -> None:
        seen = self.rejected.get(reason, 0)
        self.rejected[reason] = seen + 1
        if seen < MAX_REJECTION_LINES:
            self.rejections.append(Rejection(line=line, reason=reason, detail=detail))

    @property
    def excluded_total(self) -> int:
        return sum(self.excluded.values())

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    @property
    def accepted(self) -> int:
        """Records that passed the reader (read minus excluded minus rejected)."""
        return self.read - self.excluded_total - self.rejected_total

    @property
    def is_partial(self) -> bool:
        """True when the file holds fewer items than the API's ``totalCount``."""
        return self.total_count is not None and self.read < self.total_count

    @property
    def page_count(self) -> int | None:
        if self.total_count is None or not self.num_of_rows:
            return None
        return max(1, math.ceil(self.total_count / self.num_of_rows))

    def summary(self) -> str:
        """One line for logs and the CLI: counts by outcome and reason, and paging."""
        parts = [f"{self.path}: read {self.read}"]
        for label, counts in (("excluded", self.excluded), ("rejected", self.rejected)):
            if counts:
                detail = ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items()))
                parts.append(f"{label} {sum(counts.values())} ({detail})")
        parts.append(f"loaded {self.loaded}, duplicate {self.duplicate}")
        if self.retracted:
            parts.append(f"retracted {self.retracted}")
        page = self.page_info()
        if page is not None:
            parts.append(page)
        return "; ".join(parts)

    def page_info(self) -> str | None:
        """``page 1 of 4 (10 of 32 items)`` for a partial page, None when not paged."""
        if not self.is_partial:
            return None
        pages = self.page_count
        page = f"page {self.page_no if self.page_no is not None else '?'}"
        if pages is not None:
            page += f" of {pages}"
        return f"{page} ({self.read} of {self.total_count} items)"
