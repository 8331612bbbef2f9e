"""A local stand-in of the R-ONE open API for the ``svc sync rone`` tests.

``SttsApiTbl.do`` lists three tables (two of the commercial rental survey, one not);
``SttsApiTblData.do`` serves the R-ONE fixtures' rows (unmodified) for their table, and
for the vacancy table also rows of the old market-area era (the fixture rows with their
period moved back to 1998-2023) so that the table takes two pages of 1,000 rows. On
demand (``fail``) it answers the invalid-key result, the daily-limit result or a 500.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rone"
KEY = "rone-test-key"
VACANCY = "A_2024_00178"
YIELDS = "A_2024_00190"
TABLES = [
    {"STATBL_ID": VACANCY, "STATBL_NM": "상업용부동산 임대동향조사 오피스 공실률"},
    {"STATBL_ID": "Z_HOUSING", "STATBL_NM": "주택가격동향조사 매매가격지수"},
    {"STATBL_ID": YIELDS, "STATBL_NM": "상업용부동산 임대동향조사 중대형상가 투자수익률"},
]


def fixture_rows(name: str) -> list[dict[str, Any]]:
    doc = json.loads((FIXTURES / name).read_text("utf-8"))
    return list(doc["SttsApiTblData"][1]["row"])


def old_era_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows again for every quarter of 1998-2023 (before the 2024 Q3 redrawing)."""
    return [
        {**row, "WRTTIME_IDTFR_ID": f"{year}0{quarter}"}
        for year in range(1998, 2024)
        for quarter in range(1, 5)
        for row in rows
    ]


def _answer(root: str, rows: list[dict[str, Any]], total: int, code: str = "INFO-000") -> bytes:
    head = [{"list_total_count": total}, {"RESULT": {"CODE": code, "MESSAGE": "정상"}}]
    return json.dumps({root: [{"head": head}, {"row": rows}]}, ensure_ascii=False).encode()


class RoneStandIn:
    def __init__(self) -> None:
        vacancy = fixture_rows("office_vacancy_openapi.json")
        self.data = {
            VACANCY: old_era_rows(vacancy) + vacancy,
            YIELDS: fixture_rows("retail_yields_openapi.json"),
        }
        self.fail: deque[str] = deque()
        self.calls: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.url = ""

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes]:
        with self.lock:
            self.calls.append({"path": path, **query})
            mode = self.fail.popleft() if self.fail else ""
        if mode == "500":
            return 500, b"error"
        if mode == "limit":
            return 200, b'{"RESULT": {"CODE": "ERROR-337", "MESSAGE": "daily limit"}}'
        if query.get("KEY") != KEY:
            return 200, b'{"RESULT": {"CODE": "INFO-100", "MESSAGE": "invalid key"}}'
        size, index = min(int(query["pSize"]), 1000), int(query["pIndex"])
        if path.endswith("/SttsApiTbl.do"):
            rows, root = TABLES, "SttsApiTbl"
        else:
            rows, root = self.data.get(query.get("STATBL_ID", ""), []), "SttsApiTblData"
        return 200, _answer(root, rows[(index - 1) * size : index * size], len(rows))


@contextmanager
def serve() -> Iterator[RoneStandIn]:
    state = RoneStandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            status, body = state.answer(parts.path, query)
            self.send_response(status)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/r-one/openapi"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
