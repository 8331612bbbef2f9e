"""The links in ``data.updated`` events start with the address the server records.

``svc serve`` records the deployment's public address in the store as it starts; a load
command or a worker run with another environment (no ``SVC_PUBLIC_URL``) publishes with
it, so an event links where ``/changes`` does (tests/server/test_data_events.py runs
that end to end). Before any server recorded it, or while it is a loopback address of a
server listening elsewhere, nothing is published and the records wait.
"""

from __future__ import annotations

import json
import os

from svc_server import ingest
from svc_server.runtime.deps import new_id
from svc_server.services import consumers as consumer_service
from svc_server.services import data_events, webhooks
from svc_server.store import Store, open_store
from tests.conftest import LiveServer
from tests.http.realestate_support import NRG_JONGNO_PAGE
from tests.server.test_webhooks_events import user_of

NOW = 1_790_000_000.0


def published(store: Store) -> tuple[int, list[dict[str, object]]]:
    """How far change records were published, and the data.updated events made."""
    with store.db.transaction(write=False) as tx:
        last = store.webhooks.published_change(tx, data_events.EVENT)
        rows = tx.fetchall("SELECT payload FROM events WHERE type = 'data.updated'")
    return last, [json.loads(r["payload"]) for r in rows]


def test_events_wait_for_the_address_the_server_records(store: Store) -> None:
    consumer_service.create_consumer(
        store, plan="pro", now=NOW, entropy=os.urandom(16), email="o@example.com", ids=new_id
    )
    webhooks.create_endpoint(
        store,
        user_of(store, "o@example.com"),
        {"url": "http://127.0.0.1:9/hook", "events": ["data.updated"]},
        NOW,
        os.urandom(32),
        allow_private=True,
        ids=new_id,
    )
    data = NRG_JONGNO_PAGE.read_bytes()
    ingest.ingest(store, "rtms-commercial", data, path=str(NRG_JONGNO_PAGE), now=NOW)

    # no server has started: the load says so, nothing is published
    said = data_events.publish_after_load(store, NOW)
    assert said is not None and "no svc serve has started" in said
    assert published(store) == (0, [])

    # a server on every interface with a loopback public URL: held, and it says why
    held = data_events.record_address(
        store, public_url="http://127.0.0.1:8000", listen_host="0.0.0.0", now=NOW
    )
    assert held is not None and "SVC_PUBLIC_URL" in held
    assert data_events.publish_changes(store, NOW) == 0
    assert published(store) == (0, [])

    # the address it is reached at: the waiting records go out with its links
    assert (
        data_events.record_address(
            store, public_url="https://api.example.com", listen_host="0.0.0.0", now=NOW
        )
        is None
    )
    assert data_events.publish_after_load(store, NOW) is None
    last, events = published(store)
    [event] = events
    change = event["data"]["change"]  # type: ignore[index]
    assert last == change["id"]
    assert change["pulse_url"].startswith("https://api.example.com/api/v1/")
    assert change["transactions_url"].startswith("https://api.example.com/api/v1/")


def test_serve_records_its_address_and_warns_when_events_would_link_to_loopback(
    sqlite_url: str,
) -> None:
    # no SVC_PUBLIC_URL: the served address, http://127.0.0.1:PORT
    server = LiveServer(sqlite_url, env={"SVC_HOST": "0.0.0.0"})
    try:
        store = open_store(sqlite_url)
        try:
            with store.db.transaction(write=False) as tx:
                recorded = store.webhooks.deployment(tx)
        finally:
            store.close()
        assert recorded == {
            "public_url": f"http://127.0.0.1:{server.port}",
            "listen_host": "0.0.0.0",
        }
    finally:
        server.proc.terminate()
        out, _ = server.proc.communicate(timeout=30)
        server.stop()
    assert "svc: warning: data.updated events are held" in out.decode()
