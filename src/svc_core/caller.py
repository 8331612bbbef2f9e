"""Who is calling: the resolved identity every data service receives."""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Caller:
    """An authenticated caller of the data API.

    ``auth_method`` is ``api_key`` or ``session``. ``plan`` is the tier used for gates.
    ``monthly_quota`` is None when the caller has no monthly cap (cookie callers, test keys).
    """

    consumer_id: str
    plan: str
    auth_method: str
    rate_limit_per_minute: int
    rate_remaining: int | None = None
    monthly_quota: int | None = None
    key_id: str | None = None
    key_mode: str | None = None
    user_id: str | None = None
