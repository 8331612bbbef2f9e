"""MOLIT files to the set of transactions a store would hold after loading them.

``rtms_kind`` names the dataset of a file from MOLIT's file name; ``parse_transactions``
picks the open-API (XML/JSON) or the web-export (CSV) reader by content, as ``svc
ingest`` does; ``merge_loads`` applies parse results in order the way the store does: a
record already held (same natural key) is kept, a deal a later file reports as
cancelled is removed. The caller reads the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from svc_core.errors import InvalidParams
from svc_core.models import Transaction
from svc_core.sources import ParseResult, rtms, rtms_csv
from svc_core.sources.datasets import RtmsDataset

KINDS: tuple[str, ...] = tuple(d.parse_kind for d in RtmsDataset)
"""The reader kinds ``parse_transactions`` takes by name (a command line's choices, as in
``examples/library_pulse.py``); a ``RtmsDataset`` member is taken too."""


def rtms_kind(file_name: str) -> RtmsDataset:
    """The RTMS dataset of a file named as MOLIT names them (``NRG_11680_202506.xml`` is
    ``RtmsDataset.COMMERCIAL``); ``InvalidParams`` for another name."""
    found = RtmsDataset.of_file_name(file_name)
    if found is not None:
        return found
    base = file_name.replace("\\", "/").rsplit("/", 1)[-1].upper()
    known = ", ".join(d.file_prefix for d in sorted(RtmsDataset, key=lambda d: -len(d.file_prefix)))
    raise InvalidParams(
        f"Cannot tell the RTMS kind of {base[:64]!r}.",
        hint=f"Name the file with one of the prefixes {known}, or give the kind.",
    )


def _structured(data: bytes) -> bool:
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return head in (b"<", b"{", b"[")


def parse_transactions(
    data: bytes, kind: RtmsDataset | str, *, path: str = "<bytes>"
) -> ParseResult:
    """Read an RTMS file of ``kind`` (a dataset, or its reader kind): the open API's XML
    or JSON, or the web site's CSV export, told apart by content."""
    dataset = RtmsDataset.of_reader(kind)
    if dataset is None:
        raise InvalidParams(f"Unknown RTMS kind {kind!r}; choose one of: {', '.join(KINDS)}.")
    if _structured(data):
        return rtms.parse_rtms(data, dataset, path=path)
    return rtms_csv.parse_rtms_csv(data, dataset, path=path)


def merge_loads(results: Iterable[ParseResult]) -> list[Transaction]:
    """The transactions held after loading ``results`` in order, in load order."""
    held: dict[str, Transaction] = {}
    for result in results:
        for key in result.retracted_keys:
            held.pop(key, None)
        for tx in result.transactions:
            held.setdefault(tx.natural_key, tx)
    return list(held.values())
