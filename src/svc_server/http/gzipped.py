"""gzip content coding for data answers: whole bodies, streams, and bodies spliced
around per-call values without compressing them again.

A cached answer (``http.answers.Rendered``) is the same bytes for every call except a
few per-call values between its constant parts. ``deflate_parts`` compresses each part
once into a raw deflate segment that starts from an empty history (``Z_FULL_FLUSH``
between parts: no back-reference crosses a part boundary) and ends byte-aligned;
``splice`` then builds one call's gzip member from those segments with the call's
values between them as stored (uncompressed) deflate blocks, plus gzip's header and
trailer (CRC-32 and length of the whole uncompressed body). A call costs a CRC over
its body, never a compression.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence

LEVEL = 6
"""zlib's default: most of level 9's ratio for a fraction of its time."""
HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
"""A gzip member header: deflate, no flags, no mtime (identical bodies compress to
identical bytes), no extra flags, unknown OS."""
_STORED_MAX = 0xFFFF


def gzip_bytes(body: bytes) -> bytes:
    """``body`` as one gzip member (deterministic: no mtime, no name)."""
    out = zlib.compressobj(LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return HEADER + out.compress(body) + out.flush(zlib.Z_FINISH) + _trailer(zlib.crc32(body), body)


def deflate_parts(parts: Sequence[bytes]) -> tuple[bytes, ...]:
    """Each of ``parts`` as a raw deflate segment independent of the others; the last
    ends the deflate stream. ``splice`` joins them around per-call values."""
    out = zlib.compressobj(LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    last = len(parts) - 1
    return tuple(
        out.compress(part) + out.flush(zlib.Z_FINISH if n == last else zlib.Z_FULL_FLUSH)
        for n, part in enumerate(parts)
    )


def splice(segments: Sequence[bytes], parts: Sequence[bytes], values: Sequence[bytes]) -> bytes:
    """The gzip member of ``parts[0] + values[0] + parts[1] + ... + parts[-1]``, from
    ``segments = deflate_parts(parts)``; ``values`` has one item fewer than ``parts``."""
    pieces = [HEADER, segments[0]]
    crc = zlib.crc32(parts[0])
    size = len(parts[0])
    for value, segment, part in zip(values, segments[1:], parts[1:], strict=True):
        pieces.append(_stored(value))
        pieces.append(segment)
        crc = zlib.crc32(part, zlib.crc32(value, crc))
        size += len(value) + len(part)
    pieces.append(struct.pack("<II", crc, size & 0xFFFFFFFF))
    return b"".join(pieces)


def gzip_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """A streamed body gzip-coded as it goes: each chunk compressed and flushed
    (``Z_SYNC_FLUSH``), so a client can decode everything sent so far; nothing held
    beyond zlib's window."""
    out = zlib.compressobj(LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for chunk in chunks:
        if chunk:
            yield out.compress(chunk) + out.flush(zlib.Z_SYNC_FLUSH)
    yield out.flush(zlib.Z_FINISH)


def _stored(value: bytes) -> bytes:
    """``value`` as non-final stored deflate blocks (the stream is byte-aligned here)."""
    if len(value) <= _STORED_MAX:  # a per-call value always is
        return struct.pack("<BHH", 0, len(value), len(value) ^ 0xFFFF) + value
    blocks = []
    for at in range(0, len(value), _STORED_MAX):
        piece = value[at : at + _STORED_MAX]
        blocks.append(struct.pack("<BHH", 0, len(piece), len(piece) ^ 0xFFFF) + piece)
    return b"".join(blocks)


def _trailer(crc: int, body: bytes) -> bytes:
    return struct.pack("<II", crc, len(body) & 0xFFFFFFFF)
