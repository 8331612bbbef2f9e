"""The reads of one cohort's transactions (``samples``, what pulse and series summarise)
and of district names, a mixin of ``RealEstateRepo``.

Pulse reads only its cohort: ``samples`` always names every property type, transaction
type and month it wants as ``IN`` lists, so both SQLite and PostgreSQL walk the
``transactions_cohort`` (or, for one dong, ``transactions_dong``) index with equality
on every column and the cost follows the cohort's size, not the table's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from svc_core import regions
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.common import codes_of
from svc_core.realestate.deal import Deal
from svc_server.store.base import Database, Tx, equal_filters, marks
from svc_server.store.realestate_rows import deal


class CohortReads:
    """Reads of ``transactions`` by cohort, and district names."""

    db: Database

    def samples(
        self,
        codes: Sequence[str],
        months: Sequence[str],
        *,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong: str | None = None,
        building_type: str | None = None,
        lease_kind: str | None = None,
        deal_type: str | None = None,
        buyer_type: str | None = None,
        industrial_use: str | None = None,
        land_category: str | None = None,
        zoning: str | None = None,
    ) -> list[Deal]:
        """Transactions of one cohort: districts ``codes``, the listed ``months``, and the
        type filters (None = every type). Each filter is an ``IN`` list so the index is
        used on every column and nothing outside the cohort is read; ``building_type``,
        ``lease_kind``, ``deal_type``, ``buyer_type``, ``industrial_use``, ``land_category``
        and ``zoning`` then filter the cohort's rows."""
        if not codes or not months:
            return []
        ptypes = PROPERTY_TYPES if property_type is None else (property_type,)
        ttypes = TRANSACTION_TYPES if transaction_type is None else (transaction_type,)
        sql = (
            "SELECT sigungu_code, sigungu, dong, property_type, transaction_type, month, "
            "source, price_krw, monthly_rent_krw, area_m2, synthetic, building_type, "
            "land_area_m2, building_use, contract_id, lease_kind, deal_type, buyer_type, "
            "deal_date, industrial_use, land_category, zoning FROM transactions "
            f"WHERE sigungu_code IN ({marks(len(codes))})"
        )
        contract = {"lease_kind": lease_kind, "deal_type": deal_type, "buyer_type": buyer_type}
        contract |= {
            "industrial_use": industrial_use,
            "land_category": land_category,
            "zoning": zoning,
        }
        where, equal = equal_filters(dong=dong, building_type=building_type, **contract)
        sql += where + (
            f" AND property_type IN ({marks(len(ptypes))})"
            f" AND transaction_type IN ({marks(len(ttypes))})"
            f" AND month IN ({marks(len(months))})"
        )
        params = [*codes, *equal, *ptypes, *ttypes, *months]
        with self.db.transaction(write=False) as tx:
            return [deal(r) for r in tx.fetchall(sql, params)]

    def sigungu_names(self, codes: Sequence[str], *, tx: Tx | None = None) -> dict[str, str]:
        """The district name the records of each code carry (for codes the bundled table
        does not know); codes without records are left out."""

        def read(t: Tx) -> dict[str, str]:
            out: dict[str, str] = {}
            for code in codes:
                row = t.fetchone(
                    "SELECT sigungu FROM transactions WHERE sigungu_code = ? LIMIT 1", (code,)
                )
                if row is not None:
                    out[code] = row["sigungu"]
            return out

        if tx is not None:
            return read(tx)
        with self.db.transaction(write=False) as read_tx:
            return read(read_tx)

    def district_names(self, codes: Iterable[str], *, tx: Tx | None = None) -> dict[str, str]:
        """Names of districts: the bundled table, else the name their records carry."""
        names: dict[str, str] = {}
        unknown: list[str] = []
        for code in set(codes):
            name = regions.region_name(code)
            if name is None:
                unknown.append(code)
            else:
                names[code] = name
        if unknown:
            wanted = sorted({c for code in unknown for c in codes_of(code)})
            found = self.sigungu_names(wanted, tx=tx)
            for code in unknown:
                name = next((found[c] for c in codes_of(code) if c in found), None)
                if name is not None:
                    names[code] = name
        return names
