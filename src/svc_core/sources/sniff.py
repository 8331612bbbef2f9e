"""What a file that is not CSV text is, told from its first bytes.

A CSV reader handed an image, a workbook or an XML document would read its bytes as a
header row and answer with a list of nonsense column names; ``not_csv`` names the
format instead, so the refusal is one sentence a person recognises.
"""

from __future__ import annotations

SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel .xls workbook"),
    (b"\x1f\x8b", "a gzip-compressed file"),
)
"""Leading bytes of binary formats people mistake for a data export, and their names."""

_BLANKS = b"\xef\xbb\xbf \t\r\n"


def binary_format(data: bytes) -> str | None:
    """The binary format ``data`` starts with (``"a PNG image"``, ...), or None."""
    return next((name for signature, name in SIGNATURES if data.startswith(signature)), None)


def not_csv(data: bytes) -> str | None:
    """The format ``data`` shows when it is plainly not CSV text (``"a PNG image"``,
    ``"an XML document"``, ...), or None when it may be CSV."""
    binary = binary_format(data)
    if binary is not None:
        return binary
    head = data[:64].lstrip(_BLANKS).lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    if head.startswith(b"<"):
        return "an XML document"
    if head.startswith((b"{", b"[")):
        return "a JSON document"
    return None
