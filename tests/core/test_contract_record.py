"""Listing records of transactions (``record.transaction_record``) and their grouping into
contracts (``contract_record.contract_records``): grouping keeps every unit and every
won, whatever the order of the records, and a contract's price per m² is its total price
over its total area."""

from __future__ import annotations

import datetime
import math
import random
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import attrs
from hypothesis import given
from hypothesis import strategies as st

from svc_core.cohorts.contracts import contract_id
from svc_core.models import DEAL_TYPES, LEASE_KINDS, PARTY_TYPES, Transaction
from svc_core.realestate.contract_record import (
    CONTRACT_COLUMNS,
    contract_records,
    price_per_m2,
)
from svc_core.realestate.record import TRANSACTION_COLUMNS, TransactionRecord, transaction_record

AREAS = st.none() | st.integers(1, 10**6).map(lambda cents: cents / 100)
PRICES = st.integers(0, 10**12)


@st.composite
def deals(draw: st.DrawFn) -> Transaction:
    """A deal on one of a few lots, days and parties, so that contracts of several units
    come up as often as contracts of one."""
    kind = draw(st.sampled_from(("sale", "sale", "sale", "chartered_lease", "monthly_lease")))
    sale = kind == "sale"
    return Transaction(
        source="rtms_official",
        sigungu_code="11680",
        sigungu="강남구",
        dong=draw(st.sampled_from(("논현동", "역삼동", None))),
        property_type=draw(st.sampled_from(("office", "officetel"))),
        transaction_type=kind,
        deal_date=draw(st.sampled_from((datetime.date(2025, 6, 23), datetime.date(2025, 6, 24)))),
        price_krw=draw(PRICES),
        monthly_rent_krw=draw(st.integers(1, 10**7)) if kind == "monthly_lease" else None,
        area_m2=draw(AREAS),
        natural_key="placeholder",
        building_type="unit",
        floor=draw(st.none() | st.integers(-5, 60)),
        jibun=draw(st.sampled_from(("61-3", "1**", None))),
        deal_type=draw(st.sampled_from((*DEAL_TYPES, None))),
        buyer_type=draw(st.sampled_from((*PARTY_TYPES, None))),
        lease_kind=None if sale else draw(st.sampled_from((*LEASE_KINDS, None))),
    )


RECORDS = st.lists(deals(), max_size=20).map(
    lambda txs: [
        transaction_record(attrs.evolve(tx, natural_key=f"k{i:03d}")) for i, tx in enumerate(txs)
    ]
)


@given(RECORDS)
def test_grouping_keeps_every_unit_and_every_won(records: list[TransactionRecord]) -> None:
    contracts = contract_records(records)
    assert sum(c.units for c in contracts) == len(records)
    assert [c.contract_id for c in contracts] == list(dict.fromkeys(r.contract_id for r in records))
    sales = [c.price_krw for c in contracts if c.transaction_type == "sale"]
    assert sum(p or 0 for p in sales) == sum(r.price_krw or 0 for r in records)
    assert sum(c.deposit_krw or 0 for c in contracts) == sum(r.deposit_krw or 0 for r in records)
    rents = sum(c.monthly_rent_krw or 0 for c in contracts)
    assert rents == sum(r.monthly_rent_krw or 0 for r in records)
    keys = [k for c in contracts for k in c.natural_keys]
    assert Counter(keys) == Counter(r.natural_key for r in records)
    for contract in contracts:
        mine = [r for r in records if r.contract_id == contract.contract_id]
        assert contract.natural_keys == tuple(sorted(r.natural_key for r in mine))
        assert contract.units == len(mine)
        assert {r.contract_date for r in mine} == {contract.contract_date}


@given(RECORDS, st.randoms(use_true_random=False))
def test_the_contracts_do_not_depend_on_the_order_of_the_records(
    records: list[TransactionRecord], rnd: random.Random
) -> None:
    shuffled = list(records)
    rnd.shuffle(shuffled)
    assert set(contract_records(shuffled)) == set(contract_records(records))


@given(RECORDS)
def test_a_contracts_price_per_m2_is_its_total_price_over_its_total_area(
    records: list[TransactionRecord],
) -> None:
    for contract in contract_records(records):
        mine = [r for r in records if r.contract_id == contract.contract_id]
        ratios = [
            Fraction(r.price_krw if r.price_krw is not None else r.deposit_krw or 0)
            / Fraction(repr(r.area_m2))
            for r in mine
            if r.area_m2
        ]
        if not ratios:
            assert contract.price_per_m2 is None and contract.area_m2 is None
            continue
        assert contract.price_per_m2 is not None and contract.area_m2 is not None
        assert math.floor(min(ratios)) <= contract.price_per_m2 <= math.ceil(max(ratios))
        total = sum((Decimal(repr(r.area_m2)) for r in mine if r.area_m2), Decimal(0))
        assert Decimal(repr(contract.area_m2)) == total
        if len(ratios) == len(mine):
            price = contract.price_krw if contract.price_krw is not None else contract.deposit_krw
            assert contract.price_per_m2 == round(Fraction(price or 0) / Fraction(total))


@given(st.lists(st.tuples(PRICES, AREAS), max_size=12))
def test_price_per_m2_lies_between_the_units_prices_per_m2(
    pairs: list[tuple[int, float | None]],
) -> None:
    ratios = [Fraction(p) / Fraction(repr(a)) for p, a in pairs if a]
    value = price_per_m2(pairs)
    if not ratios:
        assert value is None
    else:
        assert value is not None
        assert math.floor(min(ratios)) <= value <= math.ceil(max(ratios))


@given(deals())
def test_a_transactions_record_says_what_the_transaction_says(tx: Transaction) -> None:
    record = transaction_record(tx, excluded_reason="cancelled", load_id="load-1")
    assert record.contract_id == contract_id(tx)
    assert record.contract_date == tx.deal_date.isoformat()
    assert (record.price_krw, record.deposit_krw) == (
        (tx.price_krw, None) if tx.transaction_type == "sale" else (None, tx.price_krw)
    )
    assert record.area_m2 == tx.area_m2
    assert record.excluded and record.excluded_reason == "cancelled"
    assert record.load_id == "load-1"
    for name in ("deal_type", "buyer_type", "lease_kind", "floor", "jibun"):
        assert getattr(record, name) == getattr(tx, name)


def test_the_columns_are_the_fields_in_order() -> None:
    assert TRANSACTION_COLUMNS[:2] == ("natural_key", "contract_date")
    assert TRANSACTION_COLUMNS[TRANSACTION_COLUMNS.index("excluded_reason") + 1] == "contract_id"
    assert CONTRACT_COLUMNS[0] == "contract_id" and "units" in CONTRACT_COLUMNS
