"""Event payloads: envelopes, ids, quota thresholds, subscriptions, serialisation."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_core.errors import InvalidParams
from svc_core.realestate.changes import ChangeRecord, record_json
from svc_core.webhooks import events

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
NOW = datetime(2026, 5, 14, 9, 30, 0, tzinfo=UTC)
NOW_TS = int(NOW.timestamp())
CONSUMER = "8d7f2c1e-4b6a-4f0e-9c3d-2a1b0c9d8e7f"
KEY = "3f6c9a2e-1d4b-4e8f-a7c6-5b4a3d2c1e0f"
NEW_KEY = "b2c4d6e8-0a1c-4e3f-8a5b-7c9d1e3f5a7b"
MONTH_START = datetime(2026, 5, 1, tzinfo=UTC)


def catalogue() -> list[dict[str, Any]]:
    """One example of every event type, built with the inputs docs/webhooks.md shows."""
    return [
        events.subscription_updated(
            subscription_id="sub_1PqR2sT3uV4w",
            status="active",
            current_period_end=datetime(2026, 6, 14, tzinfo=UTC),
            trial_end=None,
            now=NOW,
            event_id="evt_1PqR9xY8zA7b",
        ),
        events.subscription_cancelled(
            subscription_id="sub_1PqR2sT3uV4w",
            status="canceled",
            current_period_end=datetime(2026, 6, 14, tzinfo=UTC),
            trial_end=None,
            canceled_at=NOW,
            cancel_at_period_end=False,
            now=NOW,
        ),
        events.subscription_trial_will_end(
            subscription_id="sub_1PqR2sT3uV4w",
            status="trialing",
            current_period_end=datetime(2026, 5, 17, 9, 30, tzinfo=UTC),
            trial_end=datetime(2026, 5, 17, 9, 30, tzinfo=UTC),
            now=NOW,
        ),
        events.quota_event(
            kind="warning_80pct",
            consumer_id=CONSUMER,
            period_month="2026-05",
            current=80_000,
            limit=100_000,
            period_starts_at=MONTH_START,
            now=NOW,
        ),
        events.quota_event(
            kind="exceeded",
            consumer_id=CONSUMER,
            period_month="2026-05",
            current=100_000,
            limit=100_000,
            period_starts_at=MONTH_START,
            now=NOW,
        ),
        events.key_rotated(
            key_id=KEY,
            prefix="svc_pk_live_ab12",
            new_key_id=NEW_KEY,
            new_key_prefix="svc_pk_live_9f3e",
            grace_until=NOW + timedelta(hours=24),
            actor="self",
            now=NOW,
        ),
        events.key_revoked(
            key_id=KEY, prefix="svc_pk_live_ab12", revoked_at=NOW, actor="admin", now=NOW
        ),
        events.webhook_test(
            event_id="evt_webhook_test_5f1d0c9e8b7a69584736251403f2e1d0",
            now=NOW,
            docs_url="https://svc.example.com/docs#/Webhooks",
        ),
        events.data_updated(change=CHANGE, consumer_id=CONSUMER, now=NOW),
    ]


CHANGE = record_json(
    ChangeRecord(
        id=412,
        changed_at=NOW_TS,
        load_id="0b7e3f52-9c1d-4a8e-b6f0-2d4c6e8a0b1c",
        load_kind="rtms-commercial",
        source_kind="commercial",
        sigungu_code="11680",
        month="2026-04",
        property_types=("office",),
        transaction_types=("sale",),
        added=2,
        retracted=1,
        changed=0,
        digest_before="9f2b5c8e1d4a7f0c3b6e9d2a5f8c1b4e7d0a3f6c9b2e5d8a1f4c7b0e3d6a9f2b",
        digest_after="4e7d0a3f6c9b2e5d8a1f4c7b0e3d6a9f2b5c8e1d4a7f0c3b6e9d2a5f8c1b4e7d",
        complete=True,
    ),
    "https://svc.example.com",
)
"""The change record docs/webhooks.md shows."""


def test_the_catalogue_covers_every_event_type_once() -> None:
    assert sorted(e["type"] for e in catalogue()) == sorted(events.EVENT_TYPES)
    assert len(events.EVENT_TYPES) == 9
    assert ("*", *events.EVENT_TYPES) == events.SUBSCRIBABLE


def test_the_docs_show_exactly_what_the_builders_produce() -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)]
    for event in catalogue():
        assert event in blocks, f"docs/webhooks.md lacks the current {event['type']} example"


# envelope ------------------------------------------------------------------------------


def test_every_event_has_the_common_envelope() -> None:
    for event in catalogue():
        assert set(event) == {"id", "type", "created", "data"}
        assert event["created"] == NOW_TS and type(event["created"]) is int
        assert isinstance(event["data"], dict)
        assert re.fullmatch(r"[A-Za-z0-9_.:-]{1,255}", event["id"])


def test_timestamps_are_iso_utc_with_z_in_whole_seconds() -> None:
    seoul = timezone(timedelta(hours=9))
    assert events.iso(datetime(2026, 5, 14, 18, 30, 0, 999_999, tzinfo=seoul)) == (
        "2026-05-14T09:30:00Z"
    )
    assert events.iso(NOW_TS + 0.9) == "2026-05-14T09:30:00Z"
    assert events.unix(NOW) == NOW_TS
    assert events.unix(NOW_TS + 0.9) == NOW_TS


@pytest.mark.parametrize("bad", [datetime(2026, 5, 1), float("nan"), float("inf"), True, 1e20])
def test_naive_or_impossible_times_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        events.iso(bad)


@given(st.integers(0, 253_402_300_799))
def test_iso_and_unix_agree(seconds: int) -> None:
    text = events.iso(seconds)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text)
    parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert events.unix(parsed) == seconds


def test_envelope_refuses_unknown_types_and_odd_ids() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        events.envelope("evt_1", "quota.warning_90pct", NOW, {})
    for bad in ("", "evt 1", "evt_1\n", "x" * 256):
        with pytest.raises(ValueError, match="event id"):
            events.envelope(bad, "webhook.test", NOW, {})


@given(
    st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True),
    st.sampled_from(sorted(events.EVENT_TYPES)),
)
def test_head_is_the_envelope_id_and_type(event_id: str, event_type: str) -> None:
    """What the event log and the outbox key on is what the envelope was made with."""
    event = events.envelope(event_id, event_type, NOW, {"x": 1})
    assert events.head(event) == (event_id, event_type)


# serialisation -------------------------------------------------------------------------


def test_serialize_is_compact_sorted_utf8() -> None:
    event = events.envelope("evt_1", "webhook.test", NOW, {"b": "서울", "a": [1, None]})
    assert (
        events.serialize(event)
        == (
            '{"created":1778751000,"data":{"a":[1,null],"b":"서울"},'
            '"id":"evt_1","type":"webhook.test"}'
        ).encode()
    )


def test_serialize_refuses_nan() -> None:
    with pytest.raises(ValueError):
        events.serialize({"x": float("nan")})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=60)
@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_serialize_round_trips_and_is_deterministic(data: dict[str, Any]) -> None:
    body = events.serialize(data)
    assert json.loads(body) == data
    assert events.serialize(json.loads(body)) == body


# subscriptions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscribed", "event_type", "expected"),
    [
        (["*"], "quota.exceeded", True),
        (["quota.exceeded"], "quota.exceeded", True),
        (["quota.warning_80pct"], "quota.exceeded", False),
        ([], "key.rotated", False),
        (("key.rotated", "key.revoked"), "key.revoked", True),
        (["*"], "data.updated", False),  # named only: * is every account event
        (["*", "data.updated"], "data.updated", True),
    ],
)
def test_matches(subscribed: list[str], event_type: str, expected: bool) -> None:
    assert events.matches(subscribed, event_type) is expected


def test_matches_refuses_a_bare_string() -> None:
    # "quota.exceeded" in "*quota.exceeded" would be a substring test, not membership.
    with pytest.raises(TypeError):
        events.matches("*", "key.rotated")


@given(
    st.lists(st.sampled_from(events.SUBSCRIBABLE), max_size=5), st.sampled_from(events.EVENT_TYPES)
)
def test_matches_is_membership_or_wildcard(subscribed: list[str], event_type: str) -> None:
    by_wildcard = "*" in subscribed and event_type not in events.NAMED_ONLY
    assert events.matches(subscribed, event_type) == (by_wildcard or event_type in subscribed)


def test_validate_subscription() -> None:
    assert events.validate_subscription(None) == ["*"]
    assert events.validate_subscription(["key.rotated", "*", "key.rotated"]) == [
        "key.rotated",
        "*",
    ]
    for bad in ([], "*", [1], ["quota.warning_90pct"], ["KEY.ROTATED"], {"a": 1}):
        with pytest.raises(InvalidParams):
            events.validate_subscription(bad)


# quota -------------------------------------------------------------------------------


def test_quota_event_id_and_usage() -> None:
    warning, exceeded = catalogue()[3:5]
    assert warning["id"] == f"evt_quota_warning_80pct_{CONSUMER}_2026-05"
    assert warning["type"] == "quota.warning_80pct"
    assert warning["data"] == {
        "usage": {
            "current": 80_000,
            "limit": 100_000,
            "percent": 80.0,
            "period_starts_at": "2026-05-01T00:00:00Z",
        }
    }
    assert exceeded["id"] == f"evt_quota_exceeded_{CONSUMER}_2026-05"
    assert exceeded["data"]["usage"]["percent"] == 100.0


def test_the_quota_event_id_is_stable_within_a_month() -> None:
    def build(current: int, now: datetime) -> dict[str, Any]:
        return events.quota_event(
            kind="exceeded",
            consumer_id=CONSUMER,
            period_month="2026-05",
            current=current,
            limit=1000,
            period_starts_at=MONTH_START,
            now=now,
        )

    assert build(1000, NOW)["id"] == build(1003, NOW + timedelta(days=3))["id"]


@pytest.mark.parametrize(
    ("current", "limit", "percent"),
    [(1, 3, 33.33), (2, 3, 66.67), (1, 8, 12.5), (1, 800, 0.13), (0, 5, 0.0), (7, 5, 140.0)],
)
def test_percent_has_two_decimals_rounded_half_up(current: int, limit: int, percent: float) -> None:
    event = events.quota_event(
        kind="warning_80pct",
        consumer_id=CONSUMER,
        period_month="2026-05",
        current=current,
        limit=limit,
        period_starts_at=MONTH_START,
        now=NOW,
    )
    assert event["data"]["usage"]["percent"] == percent


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "warning_90pct"},
        {"period_month": "2026-13"},
        {"period_month": "2026-5"},
        {"consumer_id": "a b"},
        {"limit": 0},
        {"current": -1},
        {"current": True},
        {"period_starts_at": datetime(2026, 5, 1)},
    ],
)
def test_quota_event_refuses_bad_inputs(change: dict[str, Any]) -> None:
    args: dict[str, Any] = {
        "kind": "exceeded",
        "consumer_id": CONSUMER,
        "period_month": "2026-05",
        "current": 10,
        "limit": 10,
        "period_starts_at": MONTH_START,
        "now": NOW,
    }
    with pytest.raises(ValueError):
        events.quota_event(**(args | change))


def reference_threshold(kind: str, limit: int) -> int:
    fraction = Fraction(4, 5) if kind == "warning_80pct" else Fraction(1)
    value = fraction * limit
    return int(value) + (value.denominator != 1)


@given(st.integers(1, 10**18))
def test_the_80_percent_mark_is_exact_for_any_limit(limit: int) -> None:
    assert events.quota_threshold("warning_80pct", limit) == reference_threshold(
        "warning_80pct", limit
    )
    assert events.quota_threshold("exceeded", limit) == limit


# keys ----------------------------------------------------------------------------------


def test_key_rotated() -> None:
    event = catalogue()[5]
    assert event["id"] == f"evt_key_rotated_{KEY}_{NOW_TS}"
    assert event["type"] == "key.rotated"
    assert event["data"] == {
        "key": {"id": KEY, "prefix": "svc_pk_live_ab12"},
        "actor": "self",
        "event_at": "2026-05-14T09:30:00Z",
        "new_key_id": NEW_KEY,
        "new_key_prefix": "svc_pk_live_9f3e",
        "grace_until": "2026-05-15T09:30:00Z",
    }


def test_key_revoked_with_a_float_clock_and_null_prefix() -> None:
    event = events.key_revoked(
        key_id=KEY, prefix=None, revoked_at=NOW_TS, actor="admin", now=NOW_TS + 0.75
    )
    assert event["id"] == f"evt_key_revoked_{KEY}_{NOW_TS}"
    assert event["created"] == NOW_TS
    assert event["data"] == {
        "key": {"id": KEY, "prefix": None},
        "actor": "admin",
        "event_at": "2026-05-14T09:30:00Z",
        "revoked_at": "2026-05-14T09:30:00Z",
    }


def test_key_events_refuse_unknown_actors_and_odd_ids() -> None:
    with pytest.raises(ValueError, match="actor"):
        events.key_revoked(key_id=KEY, prefix=None, revoked_at=NOW, actor="root", now=NOW)
    with pytest.raises(ValueError, match="key_id"):
        events.key_revoked(key_id="a_b c", prefix=None, revoked_at=NOW, actor="self", now=NOW)


# subscriptions ---------------------------------------------------------------------------


def test_subscription_events() -> None:
    updated, cancelled, trial = catalogue()[:3]
    assert updated["id"] == "evt_1PqR9xY8zA7b"
    assert updated["data"] == {
        "subscription": {
            "id": "sub_1PqR2sT3uV4w",
            "status": "active",
            "current_period_end": "2026-06-14T00:00:00Z",
            "trial_end": None,
        }
    }
    assert cancelled["id"] == f"evt_subscription_cancelled_sub_1PqR2sT3uV4w_{NOW_TS}"
    assert cancelled["data"]["subscription"]["canceled_at"] == "2026-05-14T09:30:00Z"
    assert cancelled["data"]["subscription"]["cancel_at_period_end"] is False
    trial_end = int(datetime(2026, 5, 17, 9, 30, tzinfo=UTC).timestamp())
    assert trial["id"] == f"evt_subscription_trial_will_end_sub_1PqR2sT3uV4w_{trial_end}"
    assert trial["data"]["subscription"]["trial_end"] == "2026-05-17T09:30:00Z"


def test_trial_will_end_is_the_same_event_whenever_the_job_runs() -> None:
    def build(now: datetime) -> str:
        return str(
            events.subscription_trial_will_end(
                subscription_id="sub_1",
                status="trialing",
                current_period_end=None,
                trial_end=datetime(2026, 5, 17, tzinfo=UTC),
                now=now,
            )["id"]
        )

    assert build(NOW) == build(NOW + timedelta(hours=5))


def test_subscription_events_refuse_unknown_statuses() -> None:
    with pytest.raises(ValueError, match="status"):
        events.subscription_updated(
            subscription_id="sub_1",
            status="cancelled",
            current_period_end=None,
            trial_end=None,
            now=NOW,
        )
    with pytest.raises(ValueError, match="cancel_at_period_end"):
        events.subscription_cancelled(
            subscription_id="sub_1",
            status="canceled",
            current_period_end=None,
            trial_end=None,
            canceled_at=NOW,
            cancel_at_period_end=1,  # type: ignore[arg-type]
            now=NOW,
        )


# test sends --------------------------------------------------------------------------------


def test_webhook_test_event() -> None:
    event = catalogue()[7]
    assert event["type"] == "webhook.test"
    assert event["data"] == {
        "test": True,
        "message": events.TEST_MESSAGE,
        "sent_at": "2026-05-14T09:30:00Z",
        "docs_url": "https://svc.example.com/docs#/Webhooks",
    }


def test_webhook_test_id() -> None:
    assert events.webhook_test_id(bytes(range(16))) == (
        "evt_webhook_test_000102030405060708090a0b0c0d0e0f"
    )
    with pytest.raises(ValueError):
        events.webhook_test_id(b"short")


# data.updated ----------------------------------------------------------------------------


def test_a_data_event_carries_its_change_under_a_stable_id() -> None:
    event = catalogue()[-1]
    assert event["type"] == "data.updated"
    assert event["id"] == f"evt_data_updated_412_{CONSUMER}"
    assert event["data"] == {"change": CHANGE}
    again = events.data_updated(change=CHANGE, consumer_id=CONSUMER, now=NOW_TS + 60)
    assert again["id"] == event["id"]  # published again: the same id, a receiver dedupes
    other = events.data_updated(change=CHANGE, consumer_id=KEY, now=NOW)
    assert other["id"] != event["id"]  # one event per consumer
    with pytest.raises(ValueError):
        events.data_updated(change={**CHANGE, "id": 0}, consumer_id=CONSUMER, now=NOW)


LOOPBACK_HOSTS = st.one_of(
    st.just("localhost"),
    st.just("LocalHost."),
    st.from_regex(r"[a-z]{1,10}\.localhost", fullmatch=True),
    st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)).map(
        lambda t: "127.{}.{}.{}".format(*t)
    ),
    st.sampled_from(["[::1]", "[::ffff:127.0.0.1]"]),
)
OTHER_HOSTS = st.one_of(
    st.sampled_from(["0.0.0.0", "::", "", "10.0.0.5", "192.168.1.2", "203.0.113.9"]),
    st.from_regex(r"[a-z]{1,10}\.(com|kr|internal)", fullmatch=True),
)


@given(LOOPBACK_HOSTS, st.integers(1, 65535), OTHER_HOSTS)
def test_loopback_links_from_a_server_not_on_loopback_are_refused(
    host: str, port: int, listen: str
) -> None:
    why = events.loopback_links(f"http://{host}:{port}", listen)
    assert why is not None and "SVC_PUBLIC_URL" in why


@given(st.one_of(LOOPBACK_HOSTS, OTHER_HOSTS), LOOPBACK_HOSTS)
def test_a_server_on_loopback_links_anywhere(host: str, listen: str) -> None:
    assert events.loopback_links(f"http://{host or 'x'}:8000", listen.strip("[]")) is None


@given(
    st.from_regex(r"[a-z]{1,10}\.(com|kr)", fullmatch=True),
    st.one_of(LOOPBACK_HOSTS, OTHER_HOSTS),
)
def test_links_to_a_public_address_are_always_sent(host: str, listen: str) -> None:
    assert events.loopback_links(f"https://{host}", listen) is None
