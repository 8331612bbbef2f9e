"""Contracts: the rows of one bulk sale counted as one contract (issue 28).

RTMS reports a sale of several units of one building, to one buyer on one day, as one row
per unit and publishes no contract id: in Gangnam's 2025-06 commercial sales, 17 rows are
floors of one Nonhyeon-dong building bought by one company. Market reports count such a
sale once, so svc groups rows into contracts by this rule:

**Rule.** Two sale rows are one contract when they agree on every field of
``CONTRACT_FIELDS``: source, district code, legal dong, lot number (``jibun`` as
published, a masked ``1**`` included), contract date, deal type, seller type, buyer type,
building use, build year, property type and building type. A row whose source names no
lot, and every lease row, is a contract of its own: tenants of one building sign separate
leases on the same day.

Known false merges: two unrelated sales on one lot on one day by parties of the same
types (two individuals buying two units of one officetel building on the same day, for
instance); whole buildings whose lot is masked (``1**``) in one dong on one day; before
2021-11 (no deal type) and 2024-01 (no seller or buyer type) the fields that would tell
them apart are blank. Known false splits: one buyer buying units of several uses in one
building (an office floor and a shop floor are two contracts, and two cohorts anyway),
and units registered on different days.

Land sales (RTMS LandTrade) publish no building, no seller or buyer type, and a lot
masked in every item (``4**``, ``산2*``), so the same rule groups land rows by source,
district, 읍면동 and 리 (``양평읍 백안리``), masked lot, contract date and deal type. Land
category and zoning are left out on purpose: in the 양평군 samples one contract often
covers lots of several categories at one price per m² (a field and its road share, ``전``
and ``임야`` at 256,831 and 256,757 KRW/m²). What it does there (2024-08, 234 kept rows):
158 contracts, 44 of several rows (120 rows, at most 7); 21 of those 44 hold one price per
m² within 5 % across their lots (one contract over several lots), the other 23 join lots at
different prices per m² and are most likely separate sales of neighbouring lots under one
mask on one day (false merges: 양서면 증동리 ``산2*``, five forest lots at 5,389 to 32,770
KRW/m²). Its errors lean to fewer contracts, hence lower confidence, never more. A
contract over lots whose masks differ (``1**`` and ``2**``) or that lie in two 리 is split.
A contract spanning land categories counts, in a cohort of one category, with its rows of
that category.

``contract_id`` is ``c`` + 24 hex digits of a SHA-256 over those fields (over the natural
key for a row of its own), so the same data gives the same id on every load.
"""

from __future__ import annotations

import hashlib

from svc_core.models import Transaction

CONTRACT_FIELDS: tuple[str, ...] = (
    "source",
    "sigungu_code",
    "dong",
    "jibun",
    "deal_date",
    "deal_type",
    "seller_type",
    "buyer_type",
    "building_use",
    "build_year",
    "property_type",
    "building_type",
)
"""The ``Transaction`` fields on which the rows of one contract agree."""
ID_DIGITS = 24


def _digest(parts: tuple[object, ...]) -> str:
    text = "\x1f".join("" if p is None else str(p) for p in parts)
    return "c" + hashlib.sha256(text.encode()).hexdigest()[:ID_DIGITS]


def is_groupable(tx: Transaction) -> bool:
    """True when ``tx`` may share a contract with other rows: a sale naming its lot."""
    return tx.transaction_type == "sale" and tx.jibun is not None


def contract_id(tx: Transaction) -> str:
    """The id of the contract ``tx`` belongs to (module rule)."""
    if is_groupable(tx):
        return _digest(("sale", *(getattr(tx, name) for name in CONTRACT_FIELDS)))
    return own_contract_id(tx.natural_key)


def own_contract_id(natural_key: str) -> str:
    """The id of a contract of one row, the row of ``natural_key``: a row the rule groups
    with no other, and the id served for a row stored before its contract was known."""
    return _digest(("row", natural_key))
