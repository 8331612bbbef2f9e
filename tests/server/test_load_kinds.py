"""A load reads back only the source kinds its records have (``changes.kind_types``), and
what every kind holds stays exact: loads of commercial sales, officetel sales and
officetel leases of one district-month, in several orders, with loads of one property
type alone, a retraction and changed leases, on SQLite and PostgreSQL.

After them, checked against the stored records themselves (not against svc's own
figures): each (source kind, district, month)'s change records chain (a record's
``digest_before`` is the previous one's ``digest_after``, the first starts empty, the
last equals the digest of everything stored now), the building-use counts and the
district-level roll-up (samples, contracts, bulk contracts) equal a count of the
records. A load that read back only part of a kind breaks the chain; one that recounted
a property type's uses for some of its transaction types breaks the counts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate import changes
from svc_server import ingest
from svc_server.store import Store
from tests.conftest import RE_NOW
from tests.http.realestate_support import NRG_GANGNAM, OFFI_RENT, OFFI_TRADE

ITEM = re.compile(r"<item>.*?</item>", re.S)
PAIRS = [(p, t) for p in PROPERTY_TYPES for t in TRANSACTION_TYPES]


def items_of(path: Path, keep: Callable[[str], bool], change: Callable[[str], str]) -> bytes:
    """The file with only the items ``keep`` keeps, each passed through ``change``."""
    text = path.read_text(encoding="utf-8")
    head, tail = text[: text.index("<item>")], text[text.rindex("</item>") + len("</item>") :]
    kept = [change(m.group(0)) for m in ITEM.finditer(text) if keep(m.group(0))]
    return (head + "".join(kept) + tail).encode()


def repriced(item: str) -> str:
    """The item as another deal: its price (or deposit) one unit higher."""
    return re.sub(
        r"<(dealAmount|deposit)>([0-9,]+)</\1>",
        lambda m: f"<{m.group(1)}>{int(m.group(2).replace(',', '')) + 1:,}</{m.group(1)}>",
        item,
        count=1,
    )


def offices_repriced() -> bytes:
    """Commercial sales of one property type alone (office buildings), as new deals, none
    cancelled (a cancellation may name any record: its load reads every kind back)."""
    return items_of(
        NRG_GANGNAM,
        lambda i: "<buildingUse>업무</buildingUse>" in i and "<cdealType>O</cdealType>" not in i,
        repriced,
    )


def one_sale_cancelled() -> bytes:
    text = OFFI_TRADE.read_text(encoding="utf-8")
    return text.replace("<cdealType> </cdealType>", "<cdealType>O</cdealType>", 1).encode()


def leases_repriced() -> bytes:
    """Officetel leases with every third one a new deal."""
    n = iter(range(10_000))
    return items_of(OFFI_RENT, lambda _: True, lambda i: repriced(i) if next(n) % 3 == 0 else i)


LOADS: dict[str, tuple[str, Callable[[], bytes]]] = {
    "commercial": ("rtms-commercial", NRG_GANGNAM.read_bytes),
    "officetel sales": ("rtms-officetel-trade", OFFI_TRADE.read_bytes),
    "officetel leases": ("rtms-officetel-rent", OFFI_RENT.read_bytes),
    "offices alone": ("rtms-commercial", offices_repriced),
    "a sale cancelled": ("rtms-officetel-trade", one_sale_cancelled),
    "leases changed": ("rtms-officetel-rent", leases_repriced),
}


def rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store.data.transaction(write=False) as tx:
        return [tuple(r.values()) for r in tx.fetchall(sql)]


def assert_chained(store: Store) -> int:
    """Each key's change records chain to the digest of what is stored now; the number
    of records."""
    found = rows(
        store,
        "SELECT source_kind, sigungu_code, month, digest_before, digest_after "
        "FROM change_records ORDER BY id",
    )
    chains: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for kind, code, month, before, after in found:
        chains.setdefault((kind, code, month), []).append((before, after))
    with store.data.transaction(write=False) as tx:
        now = store.realestate.content_digests(tx, {(code, month) for _, code, month in chains})
    for key, chain in chains.items():
        befores = [before for before, _ in chain]
        afters = [changes.EMPTY_DIGEST, *(after for _, after in chain)]
        assert befores == afters[:-1], key
        assert afters[-1] == now.get(key, changes.EMPTY_DIGEST), key
    return len(found)


def assert_counts_are_the_records(store: Store) -> None:
    uses = rows(
        store,
        "SELECT sigungu_code, property_type, month, building_use, samples FROM use_months "
        "ORDER BY 1, 2, 3, 4",
    )
    counted = rows(
        store,
        "SELECT sigungu_code, property_type, month, COALESCE(building_use, '') AS u, "
        "COUNT(*) AS n FROM transactions GROUP BY sigungu_code, property_type, month, "
        "COALESCE(building_use, '') ORDER BY 1, 2, 3, 4",
    )
    assert uses == counted
    rollup = rows(
        store,
        "SELECT sigungu_code, property_type, transaction_type, month, source, building_type, "
        "samples, contracts, bulk_contracts FROM cohort_months WHERE dong = '' "
        "ORDER BY 1, 2, 3, 4, 5, 6",
    )
    recount = rows(
        store,
        "SELECT sigungu_code, property_type, transaction_type, month, source, b, "
        "SUM(n) AS samples, COUNT(*) AS contracts, "
        "SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END) AS bulk FROM ("
        "SELECT sigungu_code, property_type, transaction_type, month, source, "
        "COALESCE(building_type, '') AS b, COALESCE(contract_id, natural_key) AS c, "
        "COUNT(*) AS n FROM transactions GROUP BY sigungu_code, property_type, "
        "transaction_type, month, source, COALESCE(building_type, ''), "
        "COALESCE(contract_id, natural_key)) AS units "
        "GROUP BY sigungu_code, property_type, transaction_type, month, source, b "
        "ORDER BY 1, 2, 3, 4, 5, 6",
    )
    assert [r[:6] + tuple(int(v) for v in r[6:]) for r in rollup] == [
        r[:6] + tuple(int(v) for v in r[6:]) for r in recount
    ]


@pytest.mark.parametrize(
    "order",
    [
        list(LOADS),
        [
            "officetel leases",
            "leases changed",
            "commercial",
            "officetel sales",
            "offices alone",
            "a sale cancelled",
        ],
        ["offices alone", "officetel sales", "commercial", "a sale cancelled"],
    ],
    ids=["in order", "leases first", "offices first"],
)
def test_every_kind_stays_exact_whatever_kind_a_load_reads_back(
    store: Store, order: list[str]
) -> None:
    now = RE_NOW
    for name in order:
        kind, data = LOADS[name]
        report = ingest.ingest(store, kind, data(), path=f"{name}.xml", now=now)
        assert report.loaded + report.retracted > 0, name  # every load changes something
        now += 60
    # one record per load and kind it changed; several kinds share the district-month
    assert assert_chained(store) >= len(order)
    assert_counts_are_the_records(store)
    kinds = {r[0] for r in rows(store, "SELECT DISTINCT source_kind FROM change_records")}
    assert len(kinds) == len({LOADS[name][0] for name in order})


@settings(max_examples=200)
@given(st.lists(st.sampled_from(PAIRS), max_size=8))
def test_kind_types_hold_every_pair_of_the_kinds_they_name(pairs: list[tuple[str, str]]) -> None:
    ptypes, ttypes = changes.kind_types(pairs)
    kinds = {changes.source_kind(p, t) for p, t in pairs}
    wanted = {(p, t) for p, t in PAIRS if changes.source_kind(p, t) in kinds}
    # every record of those kinds is read ...
    assert all(p in ptypes and t in ttypes for p, t in wanted)
    # ... and nothing else is named: each type read belongs to a pair of those kinds
    assert set(ptypes) == {p for p, _ in wanted}
    assert set(ttypes) == {t for _, t in wanted}
    assert list(ptypes) == [p for p in PROPERTY_TYPES if p in ptypes]
    assert list(ttypes) == [t for t in TRANSACTION_TYPES if t in ttypes]


def test_the_content_digest_is_the_one_earlier_records_were_written_with(store: Store) -> None:
    """The digest is SHA-256 of ``table:[(column, value), ...]`` lines (columns sorted),
    kept records then excluded ones, in month and natural-key order: the chain of a store
    written by an earlier svc continues only while the function stays the same."""
    now = RE_NOW
    for kind, data in LOADS.values():
        ingest.ingest(store, kind, data(), path="f.xml", now=now)
        now += 60
    expected: dict[tuple[str, str, str], Any] = {}
    with store.data.transaction(write=False) as tx:
        for table in ("transactions", "excluded_transactions"):
            for row in tx.fetchall(f"SELECT * FROM {table} ORDER BY month, natural_key"):
                kind = changes.source_kind(row["property_type"], row["transaction_type"])
                key = (kind, row["sigungu_code"], row["month"])
                line = f"{table}:{sorted(row.items())!r}\n"
                expected.setdefault(key, hashlib.sha256()).update(line.encode())
        assert rows(store, "SELECT COUNT(*) FROM excluded_transactions")[0][0] > 0
        got = store.realestate.content_digests(tx, {(c, m) for _, c, m in expected})
    assert got == {key: h.hexdigest() for key, h in expected.items()}
