"""Team members and invitations through HTTP: seats, duplicates, removal, acceptance."""

from __future__ import annotations

import threading
import uuid

from werkzeug.test import Client

from svc_server.app import SvcApp
from svc_server.store import Store
from tests.conftest import ORIGIN, Accounts, FakeClock
from tests.server.accounts_support import counts, execute

TEAM = "/api/auth/me/team"
INVITES = "/api/auth/me/invites"
WEEK = 7 * 86_400


def invite(browser: Client, email: str, **extra: str) -> tuple[int, dict[str, object]]:
    r = browser.post(TEAM, json={"email": email, **extra}, headers=ORIGIN)
    return r.status_code, r.get_json()


def accept(browser: Client, invite_id: str) -> int:
    return browser.post(f"{INVITES}/{invite_id}/accept", headers=ORIGIN).status_code


def pro_team(accounts: Accounts) -> tuple[str, Client]:
    consumer_id, _ = accounts.consumer("pro", email="boss@example.com", company="Acme Realty")
    return consumer_id, accounts.browser("boss@example.com")


def test_starter_team_is_the_owner_alone_and_cannot_invite(
    accounts: Accounts, store: Store
) -> None:
    browser = accounts.browser("solo@example.com")
    r = browser.get(TEAM)
    assert r.status_code == 200
    body = r.get_json()
    assert (body["seat_limit"], body["plan"]) == (1, "starter")
    [owner] = body["members"]
    assert set(owner) == {"id", "user_id", "email", "role", "status", "invited_at", "joined_at"}
    assert (owner["email"], owner["role"], owner["status"]) == (
        "solo@example.com",
        "owner",
        "active",
    )
    before = counts(store)
    status, err = invite(browser, "friend@example.com")
    assert status == 402
    assert err["error"]["code"] == "SEAT_LIMIT_REACHED"  # type: ignore[index]
    assert counts(store) == before


def test_pro_seats_duplicates_and_removal(accounts: Accounts, store: Store) -> None:
    _, boss = pro_team(accounts)
    status, body = invite(boss, "Bo@Example.com")
    assert status == 200
    row = body["data"]
    assert row["email"] == "bo@example.com"  # type: ignore[index]
    assert (row["role"], row["status"], row["user_id"]) == ("member", "pending", None)  # type: ignore[index]
    before = counts(store)
    status, body = invite(boss, "bo@example.com")
    assert status == 409
    assert body["error"]["code"] == "ALREADY_INVITED"  # type: ignore[index]
    status, body = invite(boss, "boss@example.com")  # the owner is already a member
    assert status == 409
    assert counts(store) == before
    status, body = invite(boss, "cy@example.com", role="admin")
    assert status == 200 and body["data"]["role"] == "admin"  # type: ignore[index]
    status, body = invite(boss, "di@example.com")  # owner + 2 pending = 3 seats
    assert status == 402
    assert body["error"]["code"] == "SEAT_LIMIT_REACHED"  # type: ignore[index]
    r = boss.delete(f"{TEAM}/{row['id']}", headers=ORIGIN)  # type: ignore[index]
    assert r.status_code == 200
    assert r.get_json()["removed"] is True
    members = {m["email"]: m["status"] for m in boss.get(TEAM).get_json()["members"]}
    assert members["bo@example.com"] == "removed"  # soft: the row stays
    assert invite(boss, "di@example.com")[0] == 200  # the seat is free again
    again = boss.delete(f"{TEAM}/{row['id']}", headers=ORIGIN)  # type: ignore[index]
    assert again.status_code == 404
    assert invite(boss, "bo@example.com")[0] == 402  # re-inviting a removed member needs a seat


def test_owner_cannot_be_removed(accounts: Accounts, store: Store) -> None:
    _, boss = pro_team(accounts)
    [owner] = boss.get(TEAM).get_json()["members"]
    before = counts(store)
    r = boss.delete(f"{TEAM}/{owner['id']}", headers=ORIGIN)
    assert r.status_code == 403
    assert r.get_json()["error"]["code"] == "FORBIDDEN"
    assert counts(store) == before


def test_an_account_without_a_company_name_is_named_by_its_owners_email(
    accounts: Accounts,
) -> None:
    """Not by a UUID the invitee never saw: the person who invited knows the owner."""
    accounts.consumer("pro", email="owner@example.com")
    _, made = invite(accounts.browser("owner@example.com"), "cy@example.com", role="member")
    assert made["data"]["account_name"] == "owner@example.com"  # type: ignore[index]
    [row] = accounts.browser("cy@example.com").get(INVITES).get_json()["invites"]
    assert row["company_name"] is None and row["account_name"] == "owner@example.com"


def test_invitee_sees_and_accepts_the_invitation(accounts: Accounts) -> None:
    consumer_id, boss = pro_team(accounts)
    _, body = invite(boss, "bo@example.com", role="admin")
    invite_id = body["data"]["id"]  # type: ignore[index]
    bo = accounts.browser("bo@example.com")
    r = bo.get(INVITES)
    assert r.status_code == 200
    [row] = r.get_json()["invites"]
    assert row == {
        "id": invite_id,
        "consumer_id": consumer_id,
        "company_name": "Acme Realty",
        "account_name": "Acme Realty",
        "role": "admin",
        "invited_at": "2026-09-21T14:13:20Z",
    }
    assert set(r.get_json()["meta"]) == {"request_id", "timestamp"}
    assert accounts.browser("other@example.com").get(INVITES).get_json()["invites"] == []
    r = bo.post(f"{INVITES}/{invite_id}/accept", headers=ORIGIN)
    assert r.status_code == 200 and r.get_json()["accepted"] is True
    assert accept(bo, invite_id) == 404  # twice
    assert bo.get(INVITES).get_json()["invites"] == []
    members = {m["email"]: m for m in boss.get(TEAM).get_json()["members"]}
    assert members["bo@example.com"]["status"] == "active"
    assert members["bo@example.com"]["joined_at"] is not None
    # as an admin of the pro account, bo now manages it
    assert bo.get(TEAM).get_json()["plan"] == "pro"
    assert invite(bo, "cy@example.com")[0] == 200


def test_accept_is_404_for_another_email_an_expired_or_missing_invite(
    accounts: Accounts, store: Store, clock: FakeClock
) -> None:
    _, boss = pro_team(accounts)
    _, body = invite(boss, "bo@example.com")
    invite_id = str(body["data"]["id"])  # type: ignore[index]
    intruder = accounts.browser("eve@example.com")
    before = counts(store)
    assert accept(intruder, invite_id) == 404
    assert accept(intruder, str(uuid.uuid4())) == 404
    assert counts(store) == before
    clock.advance(WEEK)
    bo = accounts.browser("bo@example.com")
    assert bo.get(INVITES).get_json()["invites"] == []
    r = bo.post(f"{INVITES}/{invite_id}/accept", headers=ORIGIN)
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "NOT_FOUND"


def test_expired_invitations_free_their_seat(accounts: Accounts, clock: FakeClock) -> None:
    _, boss = pro_team(accounts)
    assert invite(boss, "bo@example.com")[0] == 200
    assert invite(boss, "cy@example.com")[0] == 200
    assert invite(boss, "di@example.com")[0] == 402
    clock.advance(WEEK)
    boss = accounts.browser("boss@example.com")
    assert invite(boss, "di@example.com")[0] == 200
    assert invite(boss, "bo@example.com")[0] == 200  # an expired invite may be sent again


def test_members_read_the_team_but_cannot_manage_it(accounts: Accounts, store: Store) -> None:
    _, boss = pro_team(accounts)
    _, body = invite(boss, "bo@example.com")
    bo = accounts.browser("bo@example.com")
    assert accept(bo, str(body["data"]["id"])) == 200  # type: ignore[index]
    assert bo.get(TEAM).status_code == 200
    [owner] = [m for m in bo.get(TEAM).get_json()["members"] if m["role"] == "owner"]
    before = counts(store)
    assert invite(bo, "cy@example.com")[0] == 403
    r = bo.delete(f"{TEAM}/{owner['id']}", headers=ORIGIN)
    assert r.status_code == 403 and r.get_json()["error"]["code"] == "FORBIDDEN"
    assert counts(store) == before


def test_removed_member_loses_access_to_the_account(accounts: Accounts, store: Store) -> None:
    _, boss = pro_team(accounts)
    _, body = invite(boss, "bo@example.com")
    bo = accounts.browser("bo@example.com")
    member_id = str(body["data"]["id"])  # type: ignore[index]
    assert accept(bo, member_id) == 200
    assert bo.get(TEAM).get_json()["plan"] == "pro"
    assert boss.delete(f"{TEAM}/{member_id}", headers=ORIGIN).status_code == 200
    assert bo.get(TEAM).get_json()["plan"] == "starter"  # back to bo's own account
    execute(store, "UPDATE memberships SET status = 'removed' WHERE email = 'bo@example.com'")
    r = bo.get(TEAM)
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "NO_CONSUMER"


def test_invite_body_is_validated(accounts: Accounts, store: Store) -> None:
    _, boss = pro_team(accounts)
    before = counts(store)
    bad = [
        {},
        {"email": "not-an-email"},
        {"email": "a@b"},
        {"email": "a b@example.com"},
        {"email": 42},
        {"email": "ok@example.com", "role": "owner"},
        {"email": "ok@example.com", "role": None},
        {"email": "ok@example.com", "seats": 100},
        {"email": "x" * 250 + "@example.com"},
    ]
    for body in bad:
        r = boss.post(TEAM, json=body, headers=ORIGIN)
        assert r.status_code == 400, body
        assert r.get_json()["error"]["code"] == "INVALID_PARAMS"
    assert counts(store) == before


def test_concurrent_invites_never_exceed_the_seats(
    accounts: Accounts, app: SvcApp, store: Store
) -> None:
    consumer_id, boss = pro_team(accounts)
    cookie = boss.get_cookie("svc_session")
    assert cookie is not None
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def send(n: int) -> None:
        c = Client(app)
        c.set_cookie("svc_session", cookie.value)
        barrier.wait()
        statuses.append(invite(c, f"p{n}@example.com")[0])

    threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 200, 402, 402]
    with store.db.transaction(write=False) as tx:
        row = tx.fetchone(
            "SELECT COUNT(*) AS n FROM memberships WHERE consumer_id = ? AND status = 'pending'",
            (consumer_id,),
        )
    assert row == {"n": 2}


def test_concurrent_accepts_of_one_invite_succeed_once(
    accounts: Accounts, app: SvcApp, store: Store
) -> None:
    _, boss = pro_team(accounts)
    _, body = invite(boss, "bo@example.com")
    invite_id = str(body["data"]["id"])  # type: ignore[index]
    cookie = accounts.browser("bo@example.com").get_cookie("svc_session")
    assert cookie is not None
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def go() -> None:
        c = Client(app)
        c.set_cookie("svc_session", cookie.value)
        barrier.wait()
        statuses.append(accept(c, invite_id))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 404, 404, 404]
