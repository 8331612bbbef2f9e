"""Signed-in sessions: identity-provider JWT in, server-side session and cookie out.

The cookie holds only a session id signed with itsdangerous (salt ``svc.session``);
the session row is the authority, so sign-out revokes server-side and a replayed cookie
then fails. Every authenticated request slides the 15-minute window forward, but never
past the absolute lifetime (``SVC_SESSION_MAX_AGE``, 12 hours by default) counted from
sign-in: then the session ends however busy it is, and the user signs in again. The
lifetime is checked against the row's ``created_at`` on every request, so lowering the
setting also ends older sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from itsdangerous import BadData, URLSafeSerializer

from svc_core.instants import iso
from svc_server.config import Config
from svc_server.identity import Identity
from svc_server.services.consumers import ensure_user
from svc_server.services.membership import primary_consumer
from svc_server.store import Store

SESSION_SECONDS = 15 * 60
SALT = "svc.session"


@attrs.frozen(kw_only=True)
class ActiveSession:
    session_id: str
    user_id: str
    cookie: str
    expires_at: int


def _serializer(config: Config) -> URLSafeSerializer:
    return URLSafeSerializer(config.require_secret(), salt=SALT)


def resume(store: Store, config: Config, cookie: str, now: float) -> ActiveSession | None:
    """The live session behind a cookie (renewed), or None when invalid or expired."""
    try:
        session_id = _serializer(config).loads(cookie)
    except BadData:  # a bad signature or payload: not our cookie
        return None
    if not isinstance(session_id, str):
        return None
    row = store.accounts.get_session(session_id)
    if row is None or row.revoked_at is not None or row.expires_at <= now:
        return None
    ends = int(row.created_at) + config.session_max_age
    if ends <= now:
        return None
    expires = min(int(now) + SESSION_SECONDS, ends)
    if expires - row.expires_at >= 30:  # write at most every 30 s per session
        store.accounts.renew_session(session_id, expires)
    return ActiveSession(
        session_id=session_id, user_id=row.user_id, cookie=cookie, expires_at=expires
    )


def sign_in(
    store: Store,
    config: Config,
    identity: Identity,
    now: float,
    entropy: bytes,
    *,
    ids: Callable[[], str],
) -> dict[str, Any]:
    """Create the session for a verified identity; first sign-in makes a starter consumer.

    Returns the response ``data`` plus the cookie value under ``_cookie`` and its
    lifetime in seconds under ``_cookie_seconds``.
    """
    with store.db.transaction() as tx:
        user, created_key = ensure_user(
            store, tx, identity, now=now, entropy=entropy, ids=ids, plan=config.signup_plan
        )
        session_id = ids()
        expires = int(now) + min(SESSION_SECONDS, config.session_max_age)
        store.accounts.insert_session(tx, session_id, user.id, int(now), expires)
        consumers = store.accounts.active_consumers_of_user(tx, user.id)
    consumer = primary_consumer(consumers)
    data: dict[str, Any] = {
        "user": {"id": user.id, "email": user.email},
        "consumer": {"id": consumer.id, "plan": consumer.plan} if consumer else None,
        "session_expires_at": iso(expires),
        **({} if created_key is None else {"api_key": created_key}),
        "_cookie": _serializer(config).dumps(session_id),
        "_cookie_seconds": expires - int(now),
    }
    return data


def sign_out(store: Store, session_id: str, now: float) -> None:
    """Revoke the session server-side; its cookie is refused from now on."""
    store.accounts.revoke_session(session_id, int(now))
