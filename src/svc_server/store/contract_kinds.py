"""What the dimensions count of the contracts and their land: lease kinds, deal types,
buyer types, industrial uses, land categories and zones.

The rollup (``cohort_months``) counts cohorts, not these, so they are counted from the
transactions of the districts and months the rollup says have data, with the same ``IN``
lists as ``RealEstateRepo.samples``: the cohort index is walked, and the answer is cached
per data version with the rest of the dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.realestate.dimensions import KindCount
from svc_server.store.base import Database, marks

KINDS = (
    "transaction_type, lease_kind, deal_type, buyer_type, "
    "property_type, industrial_use, land_category, zoning"
)


class ContractKinds:
    """The contract counts (mixed into ``RealEstateRepo``)."""

    db: Database

    def contract_kinds(self, codes: Sequence[str], months: Sequence[str]) -> list[KindCount]:
        """Samples (``n``) per transaction type, lease kind, deal type, buyer type,
        property type, industrial use, land category and zoning of districts ``codes`` in
        ``months``."""
        if not codes or not months:
            return []
        sql = (
            f"SELECT {KINDS}, COUNT(*) AS n FROM transactions "
            f"WHERE sigungu_code IN ({marks(len(codes))})"
            f" AND property_type IN ({marks(len(PROPERTY_TYPES))})"
            f" AND transaction_type IN ({marks(len(TRANSACTION_TYPES))})"
            f" AND month IN ({marks(len(months))}) GROUP BY {KINDS}"
        )
        params = [*codes, *PROPERTY_TYPES, *TRANSACTION_TYPES, *months]
        with self.db.transaction(write=False) as tx:
            return [KindCount(**r) for r in tx.fetchall(sql, params)]
