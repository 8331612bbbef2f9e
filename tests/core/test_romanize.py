"""Revised Romanization of Hangul: exact on place names, total on every syllable."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from svc_core.romanize import is_syllable, romanize, romanize_place

SYLLABLES = st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3)


def test_place_names() -> None:
    assert romanize_place("부천") == "Bucheon"
    assert romanize_place("강남") == "Gangnam"
    assert romanize_place("종로") == "Jongno"
    assert romanize_place("중구") == "Jung-gu"
    assert romanize_place("화성") == "Hwaseong"
    assert romanize_place("강남구") == "Gangnam-gu"
    assert romanize_place("부천시 원미구") == "Bucheon-si Wonmi-gu"
    assert romanize_place("서울특별시") == "Seoul"
    assert romanize_place("경기도") == "Gyeonggi-do"
    assert romanize_place("전라북도") == "Jeollabuk-do"
    assert romanize_place("세종특별자치시") == "Sejong"


def test_dongs_and_villages_take_their_unit_after_a_hyphen() -> None:
    """RR 2000 art. 5: the unit after a hyphen, and no sound change across it (도심리 is
    Dosim-ri, not Dosimni); a numbered unit follows the name (성수동1가)."""
    assert romanize_place("역삼동") == "Yeoksam-dong"
    assert romanize_place("도심리") == "Dosim-ri"
    assert romanize_place("춘양면") == "Chunyang-myeon"
    assert romanize_place("성수동1가") == "Seongsu-dong 1-ga"
    assert romanize_place("종로1가") == "Jongno 1-ga"
    assert romanize_place("신당1동") == "Sindang 1-dong"


def test_sound_changes_inside_a_word() -> None:
    cases = {
        "신라": "silla",  # ㄴㄹ → ll
        "설날": "seollal",  # ㄹㄴ → ll
        "강릉": "gangneung",  # ㅇㄹ → ngn
        "독립": "dongnip",  # ㄱㄹ → ngn
        "협력": "hyeomnyeok",  # ㅂㄹ → mn
        "한국어": "hangugeo",  # a final moves to a following vowel
        "철원": "cheorwon",
        "덕양": "deogyang",
        "영암": "yeongam",  # ㅇ stays
        "같이": "gachi",  # palatalisation
        "좋고": "joko",  # ㅎ then ㄱ: aspirated
        "묵호": "mukho",  # ㄱ then ㅎ in a noun: unmarked
        "없어": "eopseo",
        "울릉": "ulleung",
    }
    for hangul, roman in cases.items():
        assert romanize(hangul) == roman, hangul


@given(st.text(SYLLABLES, min_size=1, max_size=12))
def test_every_syllable_sequence_has_a_spelling(text: str) -> None:
    out = romanize(text)
    assert out and out.isascii() and out.isalpha() and out.islower()
    assert romanize(text + " " + text) == f"{out} {out}"  # words are spelt alone


@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=20))
def test_other_characters_pass_through(text: str) -> None:
    plain = "".join(c for c in text if not is_syllable(c))
    assert romanize(plain) == plain
    for sep in (" ", "-", "1"):  # a non-syllable ends a word: both sides are spelt alone
        assert romanize(f"{text}{sep}강남") == f"{romanize(text)}{sep}gangnam"


@given(st.lists(st.text(SYLLABLES, min_size=1, max_size=6), min_size=1, max_size=3))
def test_place_names_are_capitalised_words(words: list[str]) -> None:
    out = romanize_place(" ".join(words))
    parts = out.split(" ")
    assert len(parts) == len(words)
    assert all(p[:1].isupper() and p.replace("-", "").isalpha() and p.isascii() for p in parts)
