"""The deals behind a figure: ``GET /api/v1/real-estate/transactions``.

The listing takes pulse's filters (``sigungu_code`` required, ``period``, the types,
``building_type``, ``dong`` at dong precision), or instead of ``period`` an inclusive
range of months ``from``/``to`` (what a pulse row's ``transactions_url`` names, so the
link keeps its meaning after later loads), and returns the records a pulse row of the
same filters is computed from, one by one, as the source published them: the same
districts (with renumbering aliases), months, types and dong, and no excluded record
unless ``include_excluded=true``, which adds the records the loader excluded, each with
its reason. Records come in a stable order (contract date, natural key, kept before
excluded) and in pages of ``limit`` (1 to 1,000, default 100) with an opaque cursor
(``svc_core.realestate.cursor``). ``contract_id`` narrows it to the records of one
contract; ``group=contract`` returns one record per contract instead
(``contract_record``), ordered by contract date then contract id, and refuses
``include_excluded`` (excluded records belong to no figure's contracts).

This module holds the parameters (declared once, as in ``query``), the typed query and
the envelope; the records are ``record`` and ``contract_record``; the server reads the
store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from svc_core import periods
from svc_core.cohorts.contracts import ID_DIGITS
from svc_core.envelope import Answer
from svc_core.errors import InvalidParams, InvalidPeriod
from svc_core.params import Param, Value
from svc_core.realestate import cursor
from svc_core.realestate.common import Context, layer_meta
from svc_core.realestate.contract_record import ContractRecord
from svc_core.realestate.listing_row import ListingRow
from svc_core.realestate.query import (
    BUILDING_TYPE,
    DEAL_FILTERS,
    FILTERS,
    PULSE_PERIOD,
    SIGUNGU_REQUIRED,
    Cohort,
    read_cohort,
)
from svc_core.realestate.record import TransactionRecord

LIMIT_DEFAULT = 100
LIMIT_MAX = 1000
CSV_CAP = 100_000
"""Most records one CSV answer streams; a larger selection is refused (400) with a hint
to narrow it."""

INCLUDE_EXCLUDED = Param(
    name="include_excluded",
    description="Also return the records the loader excluded (cancelled deals, partial "
    "shares), each with `excluded: true` and its `excluded_reason`; they never enter any "
    "figure.",
    kind="boolean",
    default=False,
)
CONTRACT_ID = Param(
    name="contract_id",
    description="Only the records of this contract (a record's `contract_id`, as a "
    "`group=contract` record's `transactions_url` passes it); the other filters still "
    "apply, so give the contract's district and a period holding its contract date.",
    pattern=f"c[0-9a-f]{{{ID_DIGITS}}}",
    message=f"must be a contract id: c and {ID_DIGITS} lowercase hex digits.",
    hint="Pass the contract_id of a record of this listing unchanged.",
    allow_empty=False,
)
GROUPS: tuple[str, ...] = ("record", "contract")
GROUP = Param(
    name="group",
    description="`record` (one record per published row) or `contract` (one record per "
    "contract: the units of one bulk sale together, with `units`, totals and "
    "`price_per_m2`; ordered by contract date, then contract id). `contract` with "
    "`include_excluded=true` is a 400 INVALID_PARAMS.",
    kind="enum",
    choices=GROUPS,
    default="record",
)
GROUP_EXCLUDED_HINT = (
    "Leave include_excluded out to group the kept records, or list the excluded records "
    "with group=record."
)
LIMIT = Param(
    name="limit",
    description=f"Records (contracts with group=contract) per page, 1 to {LIMIT_MAX} "
    "(JSON only: CSV streams the whole "
    f"selection, at most {CSV_CAP:,} records).",
    kind="integer",
    low=1,
    high=LIMIT_MAX,
    default=LIMIT_DEFAULT,
    allow_empty=False,
)
CURSOR = Param(
    name="cursor",
    description="Where the page starts: the `_meta.next_cursor` of the previous page, "
    "unchanged (absent: the first page). A cursor from another query is refused (400).",
    pattern=cursor.CURSOR_PATTERN,
    max_length=cursor.CURSOR_MAX_LENGTH,
    message="is not a cursor this API returned.",
    hint=cursor.CURSOR_HINT,
    allow_empty=False,
)
RANGE_MAX_MONTHS = 36
"""The longest ``from``/``to`` range, in months (a pulse row spans at most 12)."""
RANGE_HINT = (
    f"Send from=2025-01&to=2025-06 (months YYYY-MM, inclusive, at most {RANGE_MAX_MONTHS}) "
    "or period, not both."
)
MONTH_FROM = Param(
    name="from",
    description="First month (YYYY-MM) of an inclusive range of months, instead of period: "
    f"with to, at most {RANGE_MAX_MONTHS} months (a pulse row's transactions_url names its "
    "months so). from without to, from after to, a longer range or from/to together with "
    "period are 400 INVALID_PARAMS.",
    pattern=periods.MONTH_PATTERN,
    message="must be a month YYYY-MM such as 2025-06.",
    hint=RANGE_HINT,
    example="2025-01",
    allow_empty=False,
)
MONTH_TO = Param(
    name="to",
    description="Last month (YYYY-MM) of the range, inclusive (with from).",
    pattern=periods.MONTH_PATTERN,
    message="must be a month YYYY-MM such as 2025-06.",
    hint=RANGE_HINT,
    example="2025-06",
    allow_empty=False,
)
TRANSACTIONS_PARAMS: tuple[Param, ...] = (
    SIGUNGU_REQUIRED,
    *FILTERS,
    BUILDING_TYPE,
    *DEAL_FILTERS,
    PULSE_PERIOD,
    CONTRACT_ID,
    MONTH_FROM,
    MONTH_TO,
    INCLUDE_EXCLUDED,
    GROUP,
    LIMIT,
    CURSOR,
)


@attrs.frozen(kw_only=True)
class TransactionsQuery:
    """``GET /api/v1/real-estate/transactions``: the records of one cohort over one period
    (pulse's ``period`` values) or the months ``month_from``..``month_to`` (both set, or
    neither; of one contract with ``contract_id``), one per contract when ``group`` is
    ``contract``, a page of ``limit`` from ``cursor`` (None: the first)."""

    cohort: Cohort
    period: str = "last_6m"
    month_from: str | None = None
    month_to: str | None = None
    include_excluded: bool = False
    limit: int = LIMIT_DEFAULT
    cursor: str | None = None
    contract_id: str | None = None
    group: str = "record"

    @property
    def by_contract(self) -> bool:
        """One record per contract (``group=contract``)."""
        return self.group == "contract"

    def window(self, latest: periods.Month | None) -> periods.PeriodWindow:
        """The months the query reads: its range, or its period resolved against
        ``latest`` (the latest month with data)."""
        if self.month_from is not None and self.month_to is not None:
            return periods.month_window(
                self.month_from, self.month_to, max_months=RANGE_MAX_MONTHS, hint=RANGE_HINT
            )
        return periods.resolve_pulse_period(self.period, latest)


def _range(query: Mapping[str, str], values: Mapping[str, Value]) -> tuple[str, str] | None:
    """``from``/``to`` when given (checked: together, without ``period``, in order, at
    most ``RANGE_MAX_MONTHS``), else None."""
    first, last = values["from"], values["to"]
    if first is None and last is None:
        return None
    if query.get("period"):
        raise InvalidPeriod("Give period or from and to, not both.", hint=RANGE_HINT)
    if first is None or last is None:
        missing = "from" if first is None else "to"
        raise InvalidPeriod(f"{missing} is missing: from and to go together.", hint=RANGE_HINT)
    periods.month_window(str(first), str(last), max_months=RANGE_MAX_MONTHS, hint=RANGE_HINT)
    return str(first), str(last)


def parse_transactions_query(query: Mapping[str, str]) -> TransactionsQuery:
    """A ``TransactionsQuery`` from query parameters; ``InvalidParams``/``InvalidPeriod``
    (400). The cursor's shape is checked here, its content against the selection by
    ``cursor.decode`` once the period is resolved."""
    cohort, values = read_cohort(TRANSACTIONS_PARAMS, query)
    period = str(values["period"])
    periods.resolve_pulse_period(period, None)  # the grammar; the window needs the data
    months = _range(query, values)
    limit = values["limit"]
    assert isinstance(limit, int)  # an integer declaration with a default
    text = values["cursor"]
    contract = values["contract_id"]
    parsed = TransactionsQuery(
        cohort=cohort,
        period=period,
        month_from=months[0] if months else None,
        month_to=months[1] if months else None,
        include_excluded=bool(values["include_excluded"]),
        limit=limit,
        cursor=None if text is None else str(text),
        contract_id=None if contract is None else str(contract),
        group=str(values["group"]),
    )
    if parsed.by_contract and parsed.include_excluded:
        raise InvalidParams(
            "group=contract groups the records figures count; include_excluded=true "
            "cannot be combined with it.",
            hint=GROUP_EXCLUDED_HINT,
        )
    return parsed


def selection_fingerprint(query: TransactionsQuery, months: Sequence[str]) -> str:
    """What a cursor is bound to: the filters, the months the period resolved to and the
    grouping (named only when not the default, so cursors of plain listings made before
    they existed stay valid)."""
    cohort = query.cohort
    selection: dict[str, object] = {
        "sigungu_code": cohort.sigungu_code,
        "property_type": cohort.property_type,
        "transaction_type": cohort.transaction_type,
        "geo_precision": cohort.geo_precision,
        "dong": cohort.dong,
        "building_type": cohort.building_type,
        # only when given, so cursors of queries without them stay valid
        **{k: v for k, v in cohort.deal_echo().items() if v is not None},
        "include_excluded": query.include_excluded,
        "months": list(months),
    }
    if query.contract_id is not None:
        selection["contract_id"] = query.contract_id
    if query.by_contract:
        selection["group"] = query.group
    return cursor.fingerprint(selection)


def sort_key(row: ListingRow) -> cursor.SortKey:
    """Where a listing row sits in the listing order."""
    return row.deal_date, row.natural_key, row.is_excluded


def contract_sort_key(row: ListingRow) -> cursor.SortKey:
    """Where the contract of a row of the contract listing sits in its order: contract
    date, then the store's contract key (``contract_key``: the contract id, or the natural
    key of a row stored before its contract was known)."""
    return row.deal_date, row.contract_key, 0


def echo(query: TransactionsQuery, window: periods.PeriodWindow) -> dict[str, Any]:
    """``_meta.query`` of a listing."""
    return {
        **query.cohort.echo(),
        "building_type": query.cohort.building_type,
        **query.cohort.deal_echo(),
        "period": None if query.month_from else query.period,
        "from": query.month_from,
        "to": query.month_to,
        "window_from": window.window_from,
        "window_to": window.window_to,
        "include_excluded": query.include_excluded,
        "contract_id": query.contract_id,
        "group": query.group,
        "limit": query.limit,
        "cursor": query.cursor,
    }


Served = TransactionRecord | ContractRecord
"""A record of the listing: a row, or a contract with ``group=contract``."""


def source_mix(records: Iterable[Served]) -> dict[str, int]:
    """Kept records (or contracts) per source (excluded records are no sample of
    anything)."""
    return dict(
        Counter(r.source for r in records if isinstance(r, ContractRecord) or not r.excluded)
    )


def listing_meta(
    query: TransactionsQuery,
    window: periods.PeriodWindow,
    context: Context,
    *,
    synthetic: bool,
    next_cursor: str | None,
    count: int,
    mix: Mapping[str, int],
    extra: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The envelope of a listing: the layer envelope of ``count`` records whose kept ones
    come from the sources in ``mix``, ``next_cursor`` (None on the last page) and
    ``extra`` (``unloaded_periods``; ``rejected_records`` with ``include_excluded``)."""
    cohort = query.cohort
    return layer_meta(
        context,
        count=count,
        source_mix=mix,
        synthetic=synthetic,
        property_type=cohort.property_type,
        transaction_type=cohort.transaction_type,
        query=echo(query, window),
        extra={
            "next_cursor": next_cursor,
            "data_as_of": context.data_as_of,
            "data_version": context.data_version,
            **(extra or {}),
        },
    )


def transactions_answer(
    records: Sequence[Served],
    query: TransactionsQuery,
    window: periods.PeriodWindow,
    context: Context,
    *,
    synthetic: bool,
    next_cursor: str | None,
    extra: Mapping[str, object] | None = None,
) -> Answer:
    """One page of the listing; an empty selection is a 200 with no records (its
    ``unloaded_periods``, in ``extra``, say which months were never loaded)."""
    meta = listing_meta(
        query,
        window,
        context,
        synthetic=synthetic,
        next_cursor=next_cursor,
        count=len(records),
        mix=source_mix(records),
        extra=extra,
    )
    return Answer(data=list(records), meta=meta)
