"""The usage summary of the signed-in user's primary consumer (SPEC "Usage summary")."""

from __future__ import annotations

from svc_core import plans, quota
from svc_core import usage as core_usage
from svc_core.instants import utc, utc_exact
from svc_server.services.membership import account
from svc_server.store import Store


def usage_summary(store: Store, user_id: str, now: float) -> core_usage.UsageSummary:
    """This month's usage, limits, trial and subscription state of the primary consumer.

    ``now`` keeps its fraction of a second: the trial's days remaining round up from it.
    """
    with store.db.transaction(write=False) as tx:
        consumer, _ = account(store, tx, user_id)
    limits = plans.effective_limits(
        consumer["plan"], consumer["monthly_quota_override"], consumer["rate_limit_override"]
    )
    at = utc_exact(now)
    month = quota.quota_month(at).month
    used = store.accounts.usage(consumer["id"], month, "live")
    trial = None
    if consumer["trial_ends_at"] is not None:
        trial = core_usage.TrialState(
            trial_ends_at=utc(consumer["trial_ends_at"]),
            founding_member=bool(consumer["founding_member"]),
        )
    return core_usage.usage_summary(
        plan=consumer["plan"],
        limits=limits,
        used=used,
        now=at,
        trial=trial,
        subscription_status=consumer["subscription_status"],
    )
