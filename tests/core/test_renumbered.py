"""``svc_core.realestate.renumbered``: a deal matched across a renumbering by its twin."""

from __future__ import annotations

import datetime
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from svc_core.models import Transaction
from svc_core.realestate.renumbered import (
    StoredTwin,
    record_twin,
    replaced_codes,
    superseded,
    twin_key,
)

twins = st.sampled_from(
    [("office", "sale", "2026-05-0" + str(d), "", d, 0, "", None, "", "") for d in range(1, 4)]
)


@given(
    older=st.lists(st.tuples(st.text(min_size=1, max_size=4), twins), unique_by=lambda p: p[0]),
    newer=st.lists(twins),
)
def test_each_newer_deal_stands_for_one_older_deal_with_its_twin(
    older: list[tuple[str, tuple]],
    newer: list[tuple],  # type: ignore[type-arg]
) -> None:
    found = superseded(older, newer)
    assert len(found) == len(set(found))
    by_key = dict(older)
    taken = Counter(by_key[k] for k in found)
    held, wanted = Counter(t for _, t in older), Counter(newer)
    for twin in held | wanted:
        assert taken[twin] == min(held[twin], wanted[twin])
    assert superseded(list(reversed(older)), newer) == found  # whatever the order


@given(
    price=st.integers(1, 10**12),
    area=st.none() | st.floats(0.01, 10**5),
    floor=st.none() | st.integers(-5, 80),
    day=st.dates(datetime.date(2000, 1, 1), datetime.date(2099, 12, 31)),
    dong=st.none() | st.sampled_from(["신포동", "운서동"]),
)
def test_a_stored_row_has_the_twin_of_the_record_it_was_written_from(
    price: int, area: float | None, floor: int | None, day: datetime.date, dong: str | None
) -> None:
    record = Transaction(
        source="rtms_official",
        sigungu_code="28110",
        sigungu="중구",
        dong=dong,
        property_type="office",
        transaction_type="sale",
        deal_date=day,
        price_krw=price,
        monthly_rent_krw=None,
        area_m2=area,
        natural_key="k",
        floor=floor,
    )
    row = StoredTwin(
        natural_key="k",
        sigungu_code="28110",
        month=day.strftime("%Y-%m"),
        property_type="office",
        transaction_type="sale",
        deal_date=day.isoformat(),
        dong=dong,
        price_krw=price,
        monthly_rent_krw=None,
        area_m2=area,
        floor=floor,
        building_type=None,
        building_name=None,
        excluded=False,
    )
    assert row.twin == twin_key(row) == record_twin(record)
    moved = Transaction(**{**{a: getattr(record, a) for a in ("source", "dong", "property_type",
        "transaction_type", "deal_date", "price_krw", "monthly_rent_krw", "area_m2", "floor")},
        "sigungu_code": "28125", "sigungu": "제물포구", "natural_key": "other"})  # fmt: skip
    assert record_twin(moved) == record_twin(record)  # the district is not part of it


def test_the_alias_groups_of_the_real_cases() -> None:
    assert replaced_codes({"28125"}) == {"28110", "28140"}
    assert replaced_codes({"28155"}) == {"28110"}
    assert replaced_codes({"12740"}) == {"46770"}
    assert replaced_codes({"11680"}) == set()
