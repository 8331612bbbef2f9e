"""The MOLIT RTMS open-API client: one page of one month of one district per call.

The base URL comes from ``SVC_RTMS_BASE_URL`` (default ``DEFAULT_BASE_URL``), so a test
or a mirror can stand in for data.go.kr. Keys are issued in an encoded (percent-encoded)
and a decoded form; sending the encoded form through a client that encodes again gives
a 403, so the key is decoded once here and encoded exactly once by httpx.

The client only moves bytes, through ``delivery.fetch`` (one deadline per call, no
redirects, bodies capped): ``get_page`` returns the HTTP status and body, and raises
``httpx.TransportError`` (timeouts, refused connections) or ``fetch.Unusable`` (a
redirect, an answer too large). Deciding what an answer means (data, gateway refusal,
malformed) is the sync service's job; ``could_not_connect`` tells the failures that
mean the API is not reachable at all.
"""

from __future__ import annotations

from urllib.parse import unquote

import httpx

from svc_core.periods import Month
from svc_core.sources.datasets import RtmsDataset
from svc_server.delivery.fetch import Fetcher, Reply

DEFAULT_BASE_URL = "https://apis.data.go.kr/1613000"
DEFAULT_TIMEOUT = 30.0


def could_not_connect(exc: httpx.TransportError) -> bool:
    """Whether a call failed before reaching the API: connection refused, unknown host (DNS),
    no connection within the timeout, or a base URL without ``http://``/``https://``. A
    read timeout or a dropped answer is not one: the API was reached."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.UnsupportedProtocol)


def decoded_key(key: str) -> str:
    """The decoded form of a data.go.kr key given in either form."""
    key = key.strip()
    return unquote(key) if "%" in key else key


class RtmsClient:
    """Fetches RTMS pages over one pooled ``Fetcher``; close it when done."""

    def __init__(
        self,
        service_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = decoded_key(service_key)
        self._http = Fetcher(timeout=timeout)

    def url(self, kind: RtmsDataset) -> str:
        """The operation URL of a dataset."""
        return f"{self.base_url}/{kind.operation}"

    def get_page(
        self, kind: RtmsDataset, sigungu_code: str, month: Month, *, page_no: int, rows: int
    ) -> Reply:
        """One page of ``kind`` for ``sigungu_code`` and ``month``."""
        params = {
            "serviceKey": self._key,
            "LAWD_CD": sigungu_code,
            "DEAL_YMD": f"{month.year:04d}{month.month:02d}",
            "pageNo": str(page_no),
            "numOfRows": str(rows),
        }
        reply = self._http.get(self.url(kind), params=params)
        return reply

    def close(self) -> None:
        self._http.close()
