"""One contract of ``GET /api/v1/real-estate/transactions?group=contract``
(``ContractRecord``): the records of one contract (``svc_core.cohorts.contracts``: the units of a
bulk sale) as one record, with their count, total price and total area (issue 28).

``contract_records`` groups listing records by ``contract_id``; the server gives it
whole contracts (a contract never straddles a selection: its rows share every field a
listing filters on) and the library any records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from urllib.parse import quote, urlencode

import attrs

from svc_core.json_schema import array, doc, integer, nullable, number, string
from svc_core.realestate.record import (
    BUILDING_TYPE,
    BUILDING_USE,
    BUYER_TYPE,
    CONTRACT_DATE,
    CONTRACT_ID,
    DEAL_TYPE,
    DONG,
    SELLER_TYPE,
    SIGUNGU,
    TransactionRecord,
)
from svc_core.realestate.row_docs import (
    BUILD_YEAR,
    JIBUN,
    KRW_OR_NULL,
    PROPERTY_TYPE,
    SIGUNGU_CODE,
    SOURCE,
    TRANSACTION_TYPE,
)
from svc_core.same_named import SameNamed


@attrs.frozen(kw_only=True)
class ContractRecord:
    """One contract: the fields its records share (from ``contract_id`` to
    ``buyer_type``: the first record's, equal in every record the grouping rule puts
    together), then what adds up over its ``units`` records.

    ``price_krw`` is the total sale price (None for leases), ``deposit_krw`` and
    ``monthly_rent_krw`` the total deposit and rent of a lease (None when not a lease or
    no rent); ``area_m2`` the total of the known areas (building area, or an officetel's
    exclusive area; None when no record has one); ``price_per_m2`` the total price (a
    lease: deposit) of the records with an area over their total area, rounded half to
    even to whole KRW (equal to ``price_krw / area_m2`` when every record has an area).
    ``floors`` are the distinct published floors, ascending; ``natural_keys`` the records'
    keys, ascending; ``transactions_url`` lists them (``contract_id`` filter).
    """

    contract_id: str = attrs.field(metadata=doc(CONTRACT_ID))
    contract_date: str = attrs.field(metadata=doc(CONTRACT_DATE))
    sigungu_code: str = attrs.field(metadata=doc(SIGUNGU_CODE))
    sigungu: str = attrs.field(metadata=doc(SIGUNGU))
    dong: str | None = attrs.field(metadata=doc(DONG))
    property_type: str = attrs.field(metadata=doc(PROPERTY_TYPE))
    transaction_type: str = attrs.field(metadata=doc(TRANSACTION_TYPE))
    building_type: str | None = attrs.field(metadata=doc(BUILDING_TYPE))
    building_use: str | None = attrs.field(metadata=doc(BUILDING_USE))
    jibun: str | None = attrs.field(metadata=doc(JIBUN))
    build_year: int | None = attrs.field(metadata=doc(BUILD_YEAR))
    deal_type: str | None = attrs.field(metadata=doc(DEAL_TYPE))
    seller_type: str | None = attrs.field(metadata=doc(SELLER_TYPE))
    buyer_type: str | None = attrs.field(metadata=doc(BUYER_TYPE))
    source: str = attrs.field(metadata=doc(SOURCE))
    units: int = attrs.field(metadata=doc(integer("Records (units) of the contract.", minimum=1)))
    price_krw: int | None = attrs.field(
        metadata=doc(nullable(integer("Sales: the total price of the units.", minimum=0)))
    )
    deposit_krw: int | None = attrs.field(
        metadata=doc(nullable(integer("Leases: the deposit.", minimum=0)))
    )
    monthly_rent_krw: int | None = attrs.field(metadata=doc(KRW_OR_NULL))
    area_m2: float | None = attrs.field(
        metadata=doc(
            nullable(
                number(
                    "Total of the units' known areas (building area; an officetel's exclusive "
                    "area); null when no unit has one.",
                    exclusiveMinimum=0,
                )
            )
        )
    )
    price_per_m2: int | None = attrs.field(
        metadata=doc(
            nullable(
                integer(
                    "Total price (a lease: deposit) of the units with an area over their "
                    "total area, rounded half to even to KRW: price_krw / area_m2 when every "
                    "unit has an area; null when none has.",
                    minimum=0,
                )
            )
        )
    )
    floors: tuple[int, ...] = attrs.field(
        metadata=doc(
            array(integer(), "The units' distinct published floors, ascending (empty when none).")
        )
    )
    natural_keys: tuple[str, ...] = attrs.field(
        metadata=doc(
            array(string(), "The natural keys of the contract's records, ascending.", minItems=1)
        )
    )
    transactions_url: str | None = attrs.field(
        metadata=doc(
            nullable(
                string(
                    "The contract's records: /api/v1/real-estate/transactions with its "
                    "sigungu_code, contract month as period and contract_id.",
                    format="uri",
                )
            )
        )
    )


CONTRACT_COLUMNS = tuple(f.name for f in ContractRecord.__attrs_attrs__)
"""CSV columns of ``group=contract``: the contract's fields in order."""


def _area(value: float) -> Decimal:
    """The area as published: the shortest decimal that reads back as the float."""
    return Decimal(repr(value))


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _price(record: TransactionRecord) -> int:
    """A sale's price, a lease's deposit."""
    return record.price_krw if record.price_krw is not None else record.deposit_krw or 0


def price_per_m2(pairs: Iterable[tuple[int, float | None]]) -> int | None:
    """Total price over total area of the ``(price, area)`` pairs with a positive area,
    rounded half to even to whole KRW; None when none has one."""
    with_area = [(price, _area(area)) for price, area in pairs if area]
    if not with_area:
        return None
    area = sum((a for _, a in with_area), Decimal(0))
    return round(Fraction(sum(p for p, _ in with_area)) / Fraction(area))


def contract_link(base: str, record: TransactionRecord) -> str:
    """The URL listing the records of ``record``'s contract: ``base`` (the address of
    ``/api/v1/real-estate/transactions``) with its district, contract month and id."""
    pairs = [
        ("sigungu_code", record.sigungu_code),
        ("period", record.contract_date[:7]),
        ("contract_id", record.contract_id),
    ]
    return f"{base}?{urlencode(pairs, quote_via=quote)}"


_FROM_RECORD = SameNamed(ContractRecord, TransactionRecord)


def contract_of(records: Sequence[TransactionRecord], base: str | None = None) -> ContractRecord:
    """The contract of ``records`` (non-empty, one ``contract_id``): the first record's
    fields of the same name, the totals over them; ``base`` is the listing's address for
    ``transactions_url`` (None: no link)."""
    first = records[0]
    sale = first.transaction_type == "sale"
    areas = [r.area_m2 for r in records if r.area_m2]
    return _FROM_RECORD(
        first,
        units=len(records),
        price_krw=_sum(r.price_krw for r in records) if sale else None,
        deposit_krw=None if sale else _sum(r.deposit_krw for r in records),
        monthly_rent_krw=_sum(r.monthly_rent_krw for r in records),
        area_m2=float(sum((_area(a) for a in areas), Decimal(0))) if areas else None,
        price_per_m2=price_per_m2((_price(r), r.area_m2) for r in records),
        floors=tuple(sorted({r.floor for r in records if r.floor is not None})),
        natural_keys=tuple(sorted(r.natural_key for r in records)),
        transactions_url=None if base is None else contract_link(base, first),
    )


def contract_records(
    records: Iterable[TransactionRecord], *, transactions_url: str | None = None
) -> list[ContractRecord]:
    """``records`` grouped by ``contract_id``, one ``ContractRecord`` each, in the order
    their first record comes; ``transactions_url`` is the listing's address the records
    link to (None: no link)."""
    groups: dict[str, list[TransactionRecord]] = {}
    for record in records:
        groups.setdefault(record.contract_id, []).append(record)
    return [contract_of(group, transactions_url) for group in groups.values()]
