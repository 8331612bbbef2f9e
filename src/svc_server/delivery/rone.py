"""The R-ONE (Korea Real Estate Board) open-API client: one page of one endpoint per call.

The base URL comes from ``SVC_RONE_BASE_URL`` (default ``DEFAULT_BASE_URL``); the key is
R-ONE's own (not data.go.kr's). Like ``delivery.rtms`` it only moves bytes, through
``delivery.fetch`` (one deadline per call, no redirects, bodies capped).
"""

from __future__ import annotations

from collections.abc import Mapping

from svc_server.delivery.fetch import Fetcher, Reply
from svc_server.delivery.rtms import DEFAULT_TIMEOUT

DEFAULT_BASE_URL = "https://www.reb.or.kr/r-one/openapi"
TABLES = "SttsApiTbl.do"
DATA = "SttsApiTblData.do"
XML = "xml"
"""Every call asks XML, R-ONE's default ``Type``: Korean names decode cleanly in XML in
every public report, while one client found them garbled in ``Type=json`` answers."""


class RoneClient:
    """Fetches R-ONE pages (XML) over one pooled ``Fetcher``; close it when done."""

    def __init__(
        self, key: str, *, base_url: str = DEFAULT_BASE_URL, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = key.strip()
        self._http = Fetcher(timeout=timeout)

    def get_page(
        self, endpoint: str, params: Mapping[str, str], *, page_no: int, rows: int
    ) -> Reply:
        """Page ``page_no`` of ``rows`` rows of ``endpoint`` with ``params`` (a data call's
        ``STATBL_ID`` and ``DTACYCLE_CD``)."""
        query = {
            "KEY": self._key,
            "Type": XML,
            "pIndex": str(page_no),
            "pSize": str(rows),
            **params,
        }
        reply = self._http.get(f"{self.base_url}/{endpoint}", params=query)
        return reply

    def close(self) -> None:
        self._http.close()
