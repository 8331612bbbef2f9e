"""Messages a person reads, through a real ``svc serve`` and the real ``svc`` command:
a refused sign-in says it was the sign-in, ingest refusals name items and formats, and
the access log names the consumer of cookie calls too.

The server tests share one ``svc serve`` (SQLite, access log on, its output read as it
comes), each signing in an address of its own; the ingest tests run ``svc ingest`` in
this process (``run_svc``): what it prints is the subject, not the process.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from tests.conftest import LiveServer, Templates
from tests.svc_cli import run_svc

HS256_SECRET = "messages-idp-hs256-secret-0123456789abcd"
ORIGIN = "https://app.example.com"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def send(
    server: LiveServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, Any]:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json"} if data is not None else {}
    all_headers.update(headers or {})
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def token(email: str) -> str:
    now = int(time.time())
    claims = {"sub": "idp|" + email, "email": email, "iat": now, "exp": now + 300}
    return jwt.encode(claims, HS256_SECRET, algorithm="HS256")


class Logged:
    """A live server and the lines it has written so far (a thread reads its output)."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.server.proc.stdout is not None
        for raw in self.server.proc.stdout:
            self.lines.append(raw.decode("utf-8", "replace"))

    def access_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines) if line.startswith('{"request_id"')]

    def stop(self) -> None:
        self.server.proc.terminate()
        self.server.proc.wait(timeout=30)
        self.reader.join(timeout=30)
        self.server.stop()


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[Logged]:
    url = f"sqlite:///{tmp_path_factory.mktemp('messages') / 'svc.db'}"
    templates.fill(url)
    settings = {
        "SVC_JWT_HS256_SECRET": HS256_SECRET,
        "SVC_SITE_ORIGINS": ORIGIN,
        "SVC_LOG_LEVEL": "INFO",  # the access log
    }
    live = Logged(LiveServer(url, env=settings))
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def server(logged: Logged) -> LiveServer:
    return logged.server


def ingest(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_svc("ingest", *args, "--database-url", db_url)


# sign-in from another site ------------------------------------------------------------------


def test_a_sign_in_from_a_foreign_page_is_refused_as_a_sign_in(server: LiveServer) -> None:
    body = {"jwt": token("ana@example.com")}
    status, headers, raw = send(
        server, "POST", "/api/auth/session", body, {"Origin": "https://evil.example"}
    )
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (403, "CSRF_REJECTED")
    assert headers.get("Set-Cookie") is None
    # no cookie was sent: the answer must not talk about cookie-authenticated writes
    assert "Cookie" not in error["message"] and "cookie" not in error["message"]
    assert error["message"].startswith("Sign-in is accepted only from this site's own pages")
    assert "https://evil.example" in error["message"]
    assert "SVC_SITE_ORIGINS" in error["hint"]
    # from the site itself, or from a script with no Origin at all, it works
    for headers_ in ({"Origin": ORIGIN}, {}):
        status, _, raw = send(server, "POST", "/api/auth/session", body, headers_)
        assert status == 200, raw
    # a cookie write from elsewhere still says what was refused
    status, headers, raw = send(server, "POST", "/api/auth/session", body)
    cookie = headers["Set-Cookie"].split(";", 1)[0]
    status, _, raw = send(
        server,
        "DELETE",
        "/api/auth/session",
        headers={"Cookie": cookie, "Origin": "https://x.example"},
    )
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (403, "CSRF_REJECTED")
    assert "Cookie-authenticated writes" in error["message"]
    assert "https://x.example" in error["message"]


# ingest ------------------------------------------------------------------------------------


def test_rejections_in_an_api_answer_name_items_not_lines(sqlite_url: str, tmp_path: Path) -> None:
    done = ingest(sqlite_url, str(FIXTURES / "rtms" / "nrg_11110_quirks.xml"))
    assert done.returncode == 0, done.stderr
    assert "(item 3: dealamount" in done.stdout and "(item 5: sggCd" in done.stdout
    assert "line " not in done.stdout
    answer = json.loads((FIXTURES / "rone" / "retail_yields_openapi.json").read_text("utf-8"))
    answer["SttsApiTblData"][1]["row"][6]["WRTTIME_IDTFR_ID"] = "202513"  # no such quarter
    broken = tmp_path / "yields.json"
    broken.write_text(json.dumps(answer, ensure_ascii=False), "utf-8")
    table = "임대동향 수익률(분기)(2024년3분기~)_중대형 상가"
    done = ingest(sqlite_url, "rone-index", str(broken), "--table-name", table)
    assert done.returncode == 0, done.stderr
    assert "(item 7: period" in done.stdout and "line " not in done.stdout
    # a CSV file still counts lines
    done = ingest(
        sqlite_url, "market-listings", str(FIXTURES / "markets" / "listings_bad_rows.csv")
    )
    assert "line " in done.stdout + done.stderr and "item " not in done.stdout


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"x,y," * 200
XML = (
    '<?xml version="1.0"?><catalog>'
    + "".join(f'<entry id="{i}">a, b, c</entry>' for i in range(100))
    + "</catalog>\n"
).encode()


@pytest.mark.parametrize("kind", ["market-listings", "market-activity", "samples", "rone-index"])
@pytest.mark.parametrize(
    ("name", "content", "what"),
    [
        ("chart.png", PNG, "a PNG image"),
        ("export.xml", XML, "an XML document"),
        ("book.xlsx", b"PK\x03\x04" + b"\x00" * 64, "a ZIP archive"),
    ],
)
def test_a_non_csv_file_given_to_a_csv_reader_is_named_in_one_line(
    sqlite_url: str, tmp_path: Path, kind: str, name: str, content: bytes, what: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    done = ingest(sqlite_url, kind, str(path))
    assert done.returncode != 0
    [error] = done.stderr.splitlines()  # one file: its error line says it all
    assert error == f"svc: error: {path}: this is {what}" + error.split(what, 1)[1]
    assert "not a CSV file" in error and len(error) < 200 + len(str(path))


def test_a_wide_wrong_header_names_a_few_columns_and_counts_the_rest(
    sqlite_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"column{i}" for i in range(100)) + "\n1\n", encoding="utf-8")
    done = ingest(sqlite_url, "market-listings", str(path))
    assert done.returncode != 0
    error = done.stderr.splitlines()[0]
    assert "'column4' and 95 more" in error and "column5" not in error
    assert len(error) < 400 + len(str(path))


def test_an_image_without_a_kind_is_named(sqlite_url: str, tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(PNG)
    done = ingest(sqlite_url, str(path))
    assert done.returncode != 0
    assert f"{path}: this is a PNG image, not a data file svc reads" in done.stderr


# the access log ----------------------------------------------------------------------------


def test_the_access_log_names_the_consumer_of_cookie_calls(logged: Logged) -> None:
    server = logged.server
    status, headers, raw = send(
        server, "POST", "/api/auth/session", {"jwt": token("logged@example.com")}
    )
    assert status == 200, raw
    mine = {headers["X-Request-ID"]}  # the shared server's log holds other tests' calls
    consumer_id = json.loads(raw)["data"]["consumer"]["id"]
    key = json.loads(raw)["data"]["api_key"]
    cookie = {"Cookie": headers["Set-Cookie"].split(";", 1)[0]}
    paths = {
        "/api/auth/me/usage": cookie,  # an account route
        "/api/auth/me/keys": cookie,
        "/dashboard": cookie,  # a page
        "/api/v1/real-estate/dimensions": {"X-API-Key": key},  # as before: a key call
        "/api/status": {},  # nobody
    }
    for path, headers_ in paths.items():
        status, answer, _ = send(server, "GET", path, headers=headers_)
        assert status == 200, path
        mine.add(answer["X-Request-ID"])
    deadline = time.monotonic() + 15  # a line is written as its call ends
    while True:
        lines = [line for line in logged.access_lines() if line["request_id"] in mine]
        if len(lines) >= len(mine) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    names = {line["path"]: line["consumer_id"] for line in lines if line["method"] == "GET"}
    assert names == {
        "/api/auth/me/usage": consumer_id,
        "/api/auth/me/keys": consumer_id,
        "/dashboard": consumer_id,
        "/api/v1/real-estate/dimensions": consumer_id,
        "/api/status": None,
    }
    assert len(lines) == len(mine)
    for line in logged.access_lines():  # every line, this test's and the others'
        assert key not in json.dumps(line) and "svc_session" not in json.dumps(line)


def test_rotating_a_key_in_grace_says_it_was_already_rotated(server: LiveServer) -> None:
    status, headers, raw = send(
        server, "POST", "/api/auth/session", {"jwt": token("r@example.com")}
    )
    assert status == 200, raw
    write = {"Cookie": headers["Set-Cookie"].split(";", 1)[0], "Origin": ORIGIN}
    status, _, raw = send(server, "GET", "/api/auth/me/keys", headers=write)
    [key] = json.loads(raw)["data"]
    rotate = f"/api/auth/me/keys/{key['id']}/rotate"
    status, _, raw = send(server, "POST", rotate, {}, write)
    assert status == 200 and json.loads(raw)["previous"]["status"] == "grace"
    status, _, raw = send(server, "POST", rotate, {}, write)
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (409, "KEY_NOT_ACTIVE")
    assert "is grace" not in error["message"]
    assert error["message"].startswith("This key was already rotated")
