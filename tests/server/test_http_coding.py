"""The pure pieces of gzip coding and conditional requests (``http.gzipped``,
``http.negotiation.content_coding``, ``http.conditional``), property-tested."""

from __future__ import annotations

import gzip
import zlib

from hypothesis import given
from hypothesis import strategies as st

from svc_server.http.conditional import entity_tag, gzip_tag, none_match, opaque
from svc_server.http.gzipped import deflate_parts, gzip_bytes, gzip_chunks, splice
from svc_server.http.negotiation import GZIP_MIN_BYTES, Coding, content_coding

# gzip -------------------------------------------------------------------------------------------

chunks = st.binary(max_size=3000) | st.text(max_size=400).map(lambda t: (t * 7).encode())
"""Random bytes, and repetitive text (which deflate shrinks and back-references)."""


def interleave(parts: list[bytes], values: list[bytes]) -> bytes:
    out = [parts[0]]
    for value, part in zip(values, parts[1:], strict=True):
        out += [value, part]
    return b"".join(out)


@given(st.lists(chunks, min_size=1, max_size=6), st.data())
def test_a_spliced_body_decodes_to_the_parts_around_the_values(
    parts: list[bytes], data: st.DataObject
) -> None:
    values = data.draw(st.lists(chunks, min_size=len(parts) - 1, max_size=len(parts) - 1))
    coded = splice(deflate_parts(parts), parts, values)
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)  # exactly one gzip member
    assert decoder.decompress(coded) == interleave(parts, values)
    assert decoder.eof and decoder.unused_data == b""
    assert gzip.decompress(coded) == interleave(parts, values)


def test_values_longer_than_a_stored_block_are_split() -> None:
    parts = [b'{"a":', b"}"]
    value = b"7" * 200_000  # a stored deflate block holds at most 65,535 bytes
    assert gzip.decompress(splice(deflate_parts(parts), parts, [value])) == interleave(
        parts, [value]
    )


def test_the_same_parts_compress_to_the_same_bytes() -> None:
    """No timestamp in the header: identical answers are identical gzip bodies."""
    parts = [b"x" * 5000, b"y" * 5000]
    assert splice(deflate_parts(parts), parts, [b"1"]) == splice(
        deflate_parts(parts), parts, [b"1"]
    )
    assert gzip_bytes(b"z" * 3000) == gzip_bytes(b"z" * 3000)


@given(st.lists(chunks, max_size=8))
def test_a_gzip_stream_decodes_to_its_chunks_and_each_flush_is_decodable(
    pieces: list[bytes],
) -> None:
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    got = b""
    coded = gzip_chunks(iter(pieces))
    for n, piece in enumerate(pieces):
        if not piece:
            continue
        got += decoder.decompress(next(coded))
        assert got == b"".join(pieces[: n + 1])  # everything sent so far decodes
    for rest in coded:
        got += decoder.decompress(rest)
    assert got == b"".join(pieces) and decoder.eof


@given(chunks)
def test_gzip_bytes_round_trips(body: bytes) -> None:
    assert gzip.decompress(gzip_bytes(body)) == body


# Accept-Encoding ----------------------------------------------------------------------------------

CODINGS = ("gzip", "x-gzip", "GZip", "identity", "*", "br", "deflate", "compress")
QVALUES = (
    "",
    ";q=0",
    ";q=0.0",
    ";q=0.5",
    ";q=1",
    ";q=1.000",
    ";q=0.001",
    ";Q=0.9",
    ";q=2",
    ";q=x",
    ";q=0.0001",
    ";level=1",
)


def model(entries: list[tuple[str, str]]) -> Coding:
    """RFC 9110 section 12.5.3, written out independently: the q of a coding is its own
    entry's (the best when repeated), else ``*``'s; invalid q values drop the entry."""
    q: dict[str, float] = {}
    for name, param in entries:
        if param and not param.lower().startswith(";q="):
            continue  # an entry has a weight and nothing else
        value = param.split("=")[1] if param else "1"
        valid = {"0", "0.0", "0.5", "1", "1.000", "0.001", "0.9"}
        if value not in valid:
            continue
        key = "gzip" if name.lower() in {"gzip", "x-gzip"} else name.lower()
        q[key] = max(float(value), q.get(key, float(value)))
    gz = q.get("gzip", q.get("*", 0.0))
    ident = q.get("identity", q.get("*", 1.0))
    if gz == 0:
        return Coding()
    if ident == 0:
        return Coding(gzip=True, identity_refused=True)
    if "identity" in q and ident > gz:
        return Coding()
    return Coding(gzip=True)


@given(st.lists(st.tuples(st.sampled_from(CODINGS), st.sampled_from(QVALUES)), max_size=5))
def test_accept_encoding_follows_rfc_9110(entries: list[tuple[str, str]]) -> None:
    header = ", ".join(name + param for name, param in entries)
    assert content_coding(header) == model(entries)


def test_accept_encoding_cases_users_send() -> None:
    assert content_coding(None) == Coding()  # no header: no coding
    assert content_coding("") == Coding()
    assert content_coding("gzip, deflate, br") == Coding(gzip=True)  # browsers, requests
    assert content_coding("gzip;q=0") == Coding()
    assert content_coding("*") == Coding(gzip=True)
    assert content_coding("*;q=0, identity") == Coding()
    assert content_coding("identity;q=0, gzip") == Coding(gzip=True, identity_refused=True)
    assert content_coding("br") == Coding()
    small, large = GZIP_MIN_BYTES - 1, GZIP_MIN_BYTES
    assert not Coding(gzip=True).uses_gzip(small) and Coding(gzip=True).uses_gzip(large)
    assert Coding(gzip=True, identity_refused=True).uses_gzip(0)
    assert not Coding().uses_gzip(10**9)


# entity tags and If-None-Match ----------------------------------------------------------------------

opaques = st.text(alphabet="0123456789abcdef-", min_size=1, max_size=40)


@given(st.lists(opaques, max_size=5), opaques, st.lists(st.booleans(), min_size=5, max_size=5))
def test_if_none_match_compares_weakly_against_every_listed_tag(
    listed: list[str], tag: str, weak: list[bool]
) -> None:
    header = " , ".join(("W/" if w else "") + f'"{t}"' for t, w in zip(listed, weak, strict=False))
    for ours in (f'W/"{tag}"', f'"{tag}"'):
        assert none_match(header, ours) == (tag in listed)
    assert none_match("*", f'W/"{tag}"')
    assert not none_match(None, f'W/"{tag}"')


def test_if_none_match_that_is_not_a_list_of_tags_matches_nothing() -> None:
    tag = entity_tag([b"x"])
    assert not none_match(opaque(tag), tag)  # unquoted
    assert not none_match(f"{tag} garbage", tag)
    assert none_match(f'"other", , {tag},', tag)  # empty list elements are allowed


@given(st.lists(st.binary(max_size=50), max_size=4), st.lists(st.binary(max_size=50), max_size=4))
def test_entity_tags_are_a_digest_of_the_pieces(a: list[bytes], b: list[bytes]) -> None:
    assert entity_tag(a) == entity_tag(list(a))
    assert (entity_tag(a) == entity_tag(b)) == (a == b)
    assert entity_tag(a).startswith('W/"') and gzip_tag(entity_tag(a)).endswith('-gzip"')
    assert gzip_tag(entity_tag(a)) != entity_tag(a)
