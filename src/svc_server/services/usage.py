"""The usage summary of the signed-in user's primary consumer (SPEC "Usage summary"),
plus the caller's role there, this month's calls per day and per API key."""

from __future__ import annotations

from svc_core.accounts import keys, plans, quota
from svc_core.accounts import usage as core_usage
from svc_core.instants import utc, utc_exact
from svc_server.services.membership import account
from svc_server.store import Store


def usage_summary(store: Store, user_id: str, now: float) -> core_usage.UsageSummary:
    """This month's usage and days, limits, trial and subscription state of the primary
    consumer, and the user's role in it.

    One read transaction; the month's count and its days come from one statement, so
    the days' live calls add up to ``requests_used``. ``now`` keeps its fraction of a
    second: the trial's days remaining round up from it.
    """
    at = utc_exact(now)
    month = quota.quota_month(at).month
    with store.db.transaction(write=False) as tx:
        consumer, role = account(store, tx, user_id)
        counted = store.accounts.month_usage(tx, consumer.id, month)
        per_key = store.request_log.key_usage(tx, consumer.id, month)
    limits = plans.effective_limits(
        consumer.plan, consumer.monthly_quota_override, consumer.rate_limit_override
    )
    trial = None
    if consumer.trial_ends_at is not None:
        trial = core_usage.TrialState(
            trial_ends_at=utc(consumer.trial_ends_at),
            founding_member=bool(consumer.founding_member),
        )
    return core_usage.usage_summary(
        plan=consumer.plan,
        limits=limits,
        used=counted.by_mode.get("live", 0),
        now=at,
        trial=trial,
        subscription_status=consumer.subscription_status,
        role=role,
        daily=core_usage.daily_usage(counted.by_day, at),
        keys=tuple(
            core_usage.KeyUsage(
                key_id=str(k.id),
                prefix=str(k.prefix),
                label=str(k.label),
                mode=str(k.mode),
                status=keys.key_status(k.status, k.grace_until, now),
                calls=int(k.calls),
            )
            for k in per_key
        ),
    )
