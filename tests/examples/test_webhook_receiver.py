"""The example receiver verifies, dedupes and acknowledges svc deliveries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from examples.webhook_receiver import Receiver
from svc_core.errors import InvalidParams
from svc_core.webhooks import events, signing

SECRET = signing.generate_secret(bytes(range(32)))
NOW = 1_790_000_000
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "webhook_receiver.py"


def delivery(event_id: str = "evt_webhook_test_0001", ts: int = NOW) -> tuple[bytes, str]:
    event = events.webhook_test(event_id=event_id, now=ts, docs_url="https://svc.example/docs")
    body = events.serialize(event)
    return body, signing.sign(body, SECRET, ts)


def post(client: Client, body: bytes, signature: str | None) -> Any:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["X-Svc-Signature"] = signature
    return client.post("/", data=body, headers=headers)


@pytest.fixture
def handled() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def client(handled: list[dict[str, Any]]) -> Client:
    return Client(Receiver(SECRET, handle=handled.append, clock=lambda: NOW + 10))


def test_a_signed_event_is_accepted_once(client: Client, handled: list[dict[str, Any]]) -> None:
    body, signature = delivery()
    first = post(client, body, signature)
    assert first.status_code == 200
    assert first.get_json() == {"received": True, "duplicate": False}
    again = post(client, body, signature)
    assert again.status_code == 200
    assert again.get_json() == {"received": True, "duplicate": True}
    assert [e["id"] for e in handled] == ["evt_webhook_test_0001"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("no header", "malformed_header"),
        ("tampered body", "signature_mismatch"),
        ("other secret", "signature_mismatch"),
        ("stale", "timestamp_out_of_tolerance"),
    ],
)
def test_bad_signatures_are_400(
    client: Client, handled: list[dict[str, Any]], change: str, reason: str
) -> None:
    body, signature = delivery()
    sent_signature: str | None = signature
    if change == "no header":
        sent_signature = None
    elif change == "tampered body":
        body = body.replace(b'"test":true', b'"test":false')
    elif change == "other secret":
        sent_signature = signing.sign(body, signing.generate_secret(b"\x01" * 32), NOW)
    elif change == "stale":
        body, sent_signature = delivery(ts=NOW - 400)
    response = post(client, body, sent_signature)
    assert response.status_code == 400
    assert response.get_json() == {"error": reason}
    assert handled == []


def test_a_rejected_delivery_does_not_poison_the_dedupe_set(
    client: Client, handled: list[dict[str, Any]]
) -> None:
    body, signature = delivery()
    forged = signing.sign(body, signing.generate_secret(b"\x02" * 32), NOW)
    assert post(client, body, forged).status_code == 400
    assert post(client, body, signature).get_json()["duplicate"] is False
    assert len(handled) == 1


def test_only_post_is_accepted(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_a_huge_body_is_413(client: Client) -> None:
    response = client.post("/", data=b"x" * (1024 * 1024 + 1))
    assert response.status_code == 413


def test_rotation_accepts_either_secret(handled: list[dict[str, Any]]) -> None:
    new = signing.generate_secret(b"\x03" * 32)
    client = Client(Receiver([new, SECRET], handle=handled.append, clock=lambda: NOW))
    body, signature = delivery()
    assert post(client, body, signature).status_code == 200


def test_a_malformed_secret_fails_at_startup() -> None:
    with pytest.raises(InvalidParams, match="whsec_"):
        Receiver("sk_live_123")


def test_the_script_refuses_to_start_without_a_secret() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    assert "SVC_WEBHOOK_SECRET" in done.stderr


@pytest.mark.parametrize("by", ["flags", "environment"])
def test_the_script_takes_port_and_secret_from_flags_or_environment(by: str) -> None:
    import os
    import time
    import urllib.request

    from tests.conftest import free_port

    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, str(EXAMPLE)]
    if by == "flags":
        args += ["--secret", SECRET, "--port", str(port)]
    else:
        env |= {"SVC_WEBHOOK_SECRET": SECRET, "SVC_WEBHOOK_PORT": str(port)}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body, signature = delivery(ts=int(time.time()))
        deadline = time.monotonic() + 20
        while True:
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/",
                data=body,
                headers={"X-Svc-Signature": signature, "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "the receiver did not listen on the port"
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
