"""Lease kinds in a cohort: new leases and renewals (RTMS ``contractType`` 신규/갱신),
counted per lease row, and the caveat a row mixing them carries.

A renewal's rent may rise at most 5 % when the tenant uses the renewal right
(주택임대차보호법 제6조의3 and 제7조), so renewals lag the market and a row pooling them with
new leases understates current prices; ``lease_kind`` keeps one kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from svc_core.models import LEASE_KINDS
from svc_core.realestate.building_types import UNKNOWN_TYPE

__all__ = ["LEASE_KIND_LIMITATION", "is_lease", "lease_kind_mix", "mixes_kinds"]

LEASE_KIND_LIMITATION = (
    "A lease row without lease_kind pools new leases (RTMS 신규) and renewals (갱신) when "
    "lease_kind_mix names both: a renewal under the tenant's renewal right may rise at "
    "most 5 %, so renewals lag the market; filter with lease_kind=new or "
    "lease_kind=renewal."
)


def is_lease(transaction_type: str) -> bool:
    """True for the lease transaction types (every type but ``sale``)."""
    return transaction_type != "sale"


def lease_kind_mix(transaction_type: str, kinds: Iterable[str | None]) -> dict[str, int]:
    """Samples per lease kind of a lease row (``unknown`` when the source does not say:
    None); an empty mix for a sale row."""
    if not is_lease(transaction_type):
        return {}
    counts = Counter(k or UNKNOWN_TYPE for k in kinds)
    return dict(sorted(counts.items()))


def mixes_kinds(mix: Mapping[str, int]) -> bool:
    """True when a row holds both new leases and renewals."""
    return all(mix.get(k, 0) > 0 for k in LEASE_KINDS)
