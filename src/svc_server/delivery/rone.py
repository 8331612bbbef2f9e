"""The R-ONE (Korea Real Estate Board) open-API client: one page of one endpoint per call.

The base URL comes from ``SVC_RONE_BASE_URL`` (default ``DEFAULT_BASE_URL``); the key is
R-ONE's own (not data.go.kr's). Like ``delivery.rtms`` it only moves bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import httpx

from svc_server.delivery.rtms import DEFAULT_TIMEOUT

DEFAULT_BASE_URL = "https://www.reb.or.kr/r-one/openapi"
TABLES = "SttsApiTbl.do"
DATA = "SttsApiTblData.do"


@attrs.frozen
class Answer:
    """One HTTP answer: status, body and its declared ``Content-Type`` (the charset
    the body is decoded by)."""

    status: int
    body: bytes
    content_type: str = ""


class RoneClient:
    """Fetches R-ONE pages (JSON) over one pooled httpx client; close it when done."""

    def __init__(
        self, key: str, *, base_url: str = DEFAULT_BASE_URL, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = key.strip()
        self._http = httpx.Client(timeout=timeout, follow_redirects=True)

    def get_page(
        self, endpoint: str, params: Mapping[str, str], *, page_no: int, rows: int
    ) -> Answer:
        """Page ``page_no`` of ``rows`` rows of ``endpoint`` with ``params`` (a data call's
        ``STATBL_ID`` and ``DTACYCLE_CD``)."""
        query = {
            "KEY": self._key,
            "Type": "json",
            "pIndex": str(page_no),
            "pSize": str(rows),
            **params,
        }
        response = self._http.get(f"{self.base_url}/{endpoint}", params=query)
        return Answer(
            response.status_code, response.content, response.headers.get("content-type", "")
        )

    def close(self) -> None:
        self._http.close()
