"""svc_core.convert.to_json: typed results become the JSON the account API has always served."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta, timezone

import attrs
from hypothesis import given
from hypothesis import strategies as st

from svc_core.convert import to_json
from svc_core.instants import iso
from svc_server.services.keys import CreatedKey, RetiredKey, Rotation
from svc_server.services.team import InvitedMember, MemberRow, Team
from svc_server.store.account_rows import ApiKey

AT = datetime(2026, 5, 14, 9, 30, tzinfo=UTC)


def key(**changes: object) -> ApiKey:
    fields: dict[str, object] = {
        "id": "k1",
        "consumer_id": "c1",
        "label": "default",
        "prefix": "svc_live_abcd",
        "key_hash": "hash-of-the-key",
        "mode": "live",
        "scope": "admin",
        "ip_allowlist": ("10.0.0.0/8",),
        "status": "active",
        "created_at": int(AT.timestamp()),
        "grace_until": None,
        "last_used_at": None,
        "replaced_by": None,
        "revoked_at": None,
    }
    fields.update(changes)
    return ApiKey(**fields)  # type: ignore[arg-type]


def test_fields_come_out_in_attribute_order_with_iso_times_and_arrays() -> None:
    created = CreatedKey(**attrs.asdict(key(), recurse=False), key="svc_live_secret")
    out = to_json(created)
    assert "hash-of-the-key" not in json.dumps(out) and "c1" not in json.dumps(out)
    assert list(out) == [
        "id",
        "label",
        "prefix",
        "mode",
        "scope",
        "ip_allowlist",
        "status",
        "created_at",
        "grace_until",
        "last_used_at",
        "key",
    ]
    assert out["created_at"] == "2026-05-14T09:30:00Z"
    assert out["ip_allowlist"] == ["10.0.0.0/8"]
    assert out["grace_until"] is None
    assert json.loads(json.dumps(out)) == out


def test_nested_results_and_mixed_bodies_convert_all_the_way_down() -> None:
    rotation = Rotation(
        key=CreatedKey(**attrs.asdict(key(), recurse=False), key="x"),
        previous=RetiredKey(id="k0", status="grace", grace_until=AT),
    )
    member = MemberRow(
        id="m",
        user_id=None,
        email="a@example.com",
        role="member",
        status="pending",
        invited_at=AT,
        joined_at=None,
    )
    body = {
        "data": [rotation],
        "team": Team(members=(member,), seat_limit=3, plan="team"),
        "when": AT,
    }
    out = to_json(body)
    assert out["data"][0]["previous"] == {
        "id": "k0",
        "status": "grace",
        "grace_until": "2026-05-14T09:30:00Z",
    }
    assert out["team"]["members"][0]["joined_at"] is None
    assert out["when"] == "2026-05-14T09:30:00Z"
    invited = InvitedMember(
        **attrs.asdict(member, recurse=False),
        consumer_id="c0",
        company_name=None,
        account_name="owner@example.com",
        expires_at=AT,
    )
    assert list(to_json(invited))[-1] == "expires_at"


@given(
    st.integers(0, 253_402_300_799),
    st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)
def test_every_datetime_is_served_as_instants_iso(seconds: int, zone: timezone) -> None:
    moment = datetime.fromtimestamp(seconds, UTC)
    with contextlib.suppress(OverflowError):
        moment = moment.astimezone(zone)
    retired = RetiredKey(id="k0", status="grace", grace_until=moment)
    assert to_json(retired)["grace_until"] == iso(seconds)


@given(st.integers(0, 253_402_300_799))
def test_stored_unix_seconds_are_served_as_instants_iso(seconds: int) -> None:
    assert to_json(key(last_used_at=seconds))["last_used_at"] == iso(seconds)
