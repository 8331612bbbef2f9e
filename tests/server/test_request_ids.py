"""Request ids with entropy read ahead (``http.deps.request_ids``): the ids are
``requestid``'s rule applied to the entropy's bytes in order, each 16 used once, and a
forked child reads its own."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from svc_core import requestid
from svc_server.runtime import deps
from svc_server.runtime.deps import ENTROPY_READ, request_ids


class Counted:
    """Entropy that is a running count of bytes, and the reads made of it."""

    def __init__(self) -> None:
        self.made = 0
        self.reads: list[int] = []

    def __call__(self, n: int) -> bytes:
        self.reads.append(n)
        out = bytes((self.made + i) % 256 for i in range(n))
        self.made += n
        return out


@given(st.integers(min_value=1, max_value=700))
def test_ids_use_each_byte_of_the_entropy_once_in_order(count: int) -> None:
    entropy = Counted()
    resolve = request_ids(entropy)
    got = [resolve(None) for _ in range(count)]
    stream = bytes(i % 256 for i in range(16 * count))
    assert got == [requestid.generate(stream[16 * i : 16 * i + 16]) for i in range(count)]
    assert entropy.reads == [ENTROPY_READ] * -(-16 * count // ENTROPY_READ)


@given(st.text(max_size=140))
def test_a_supplied_id_is_kept_exactly_when_the_rule_accepts_it(supplied: str) -> None:
    resolve = request_ids(os.urandom)
    got = resolve(supplied)
    if requestid.is_acceptable(supplied):
        assert got == supplied
    else:
        assert requestid.GENERATED.fullmatch(got)


def test_a_forked_child_reads_its_own_bytes() -> None:
    entropy = Counted()
    resolve = request_ids(entropy)
    resolve(None)
    deps._FORKS[0] += 1  # what os.register_at_fork does in a child
    try:
        resolve(None)
    finally:
        deps._FORKS[0] -= 1
    assert entropy.reads == [ENTROPY_READ, ENTROPY_READ]


def test_real_ids_do_not_repeat() -> None:
    resolve = request_ids(os.urandom)
    ids = {resolve(None) for _ in range(5000)}
    assert len(ids) == 5000
