"""Hangul to Revised Romanization of Korean (RR, 2000), for place names.

``romanize`` spells what is pronounced, as RR does: sounds change where syllables meet
inside a word (``종로`` → ``jongno``, ``신라`` → ``silla``, ``한국어`` → ``hangugeo``) and
nowhere else. What RR leaves unmarked is not marked here either: tensed consonants, and
an ``ㅎ`` after ``ㄱ ㄷ ㅂ`` in nouns (``묵호`` → ``mukho``). Characters other than Hangul
syllables pass through unchanged.

``romanize_place`` spells a place name: each word capitalised, the administrative unit
after a hyphen with no sound change across it (``중구`` → ``Jung-gu``, ``부천시 원미구``
→ ``Bucheon-si Wonmi-gu``, ``경기도`` → ``Gyeonggi-do``); the long province suffixes
(특별시, 광역시, 특별자치시, 특별자치도, 통합특별시) are left out (``서울특별시`` →
``Seoul``), as the English names of the provinces do.
"""

from __future__ import annotations

import re

_FIRST = 0xAC00
_LAST = 0xD7A3

# Initial consonants (19), in Unicode order: their spelling before a vowel.
_INITIALS = (
    "g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t",
    "p", "h",
)  # fmt: skip
_VOWELS = (
    "a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo",
    "we", "wi", "yu", "eu", "ui", "i",
)  # fmt: skip
# Final consonants (27 and none), in Unicode order: (sound at the end of a syllable,
# the consonant carried to a following vowel, the spelling of that carried consonant).
# The sound is one of the seven RR codas: k, n, t, l, m, p, ng.
_FINALS: tuple[tuple[str, str, str], ...] = (
    ("", "", ""),
    ("k", "", "g"),  # ㄱ
    ("k", "", "kk"),  # ㄲ
    ("k", "k", "s"),  # ㄳ
    ("n", "", "n"),  # ㄴ
    ("n", "n", "j"),  # ㄵ
    ("n", "", "n"),  # ㄶ (ㅎ is silent before a vowel)
    ("t", "", "d"),  # ㄷ
    ("l", "", "r"),  # ㄹ
    ("k", "l", "g"),  # ㄺ
    ("m", "l", "m"),  # ㄻ
    ("l", "l", "b"),  # ㄼ
    ("l", "l", "s"),  # ㄽ
    ("l", "l", "t"),  # ㄾ
    ("p", "l", "p"),  # ㄿ
    ("l", "", "r"),  # ㅀ (ㅎ is silent before a vowel)
    ("m", "", "m"),  # ㅁ
    ("p", "", "b"),  # ㅂ
    ("p", "p", "s"),  # ㅄ
    ("t", "", "s"),  # ㅅ
    ("t", "", "ss"),  # ㅆ
    ("ng", "ng", ""),  # ㅇ: stays, nothing is carried
    ("t", "", "j"),  # ㅈ
    ("t", "", "ch"),  # ㅊ
    ("k", "", "k"),  # ㅋ
    ("t", "", "t"),  # ㅌ
    ("p", "", "p"),  # ㅍ
    ("t", "", ""),  # ㅎ (silent before a vowel)
)
_NIEUN, _RIEUL, _MIEUM, _IEUNG = 2, 5, 6, 11  # initial indexes
_DIGEUT_FINAL, _TIEUT_FINAL = 7, 25
_I_VOWEL = 20
_NASAL = {"k": "ng", "t": "n", "p": "m"}
_H_FINALS = {6: "n", 15: "l", 27: ""}  # ㄶ ㅀ ㅎ: what stays before an aspirate
_ASPIRATED = {0: "k", 3: "t", 12: "ch"}  # ㄱ ㄷ ㅈ after ㅎ

_PROVINCE_SUFFIXES = ("특별자치도", "특별자치시", "통합특별시", "특별시", "광역시")
_UNIT_SUFFIXES = {
    "도": "do",
    "시": "si",
    "군": "gun",
    "구": "gu",
    "읍": "eup",
    "면": "myeon",
    "동": "dong",
    "리": "ri",
    "가": "ga",
}
"""Administrative units, written after a hyphen, with no sound change across it (RR
2000, art. 5): 역삼동 is Yeoksam-dong, 도심리 Dosim-ri."""
_NUMBERED = re.compile(r"(.+?)([0-9]+)([동가리])")
"""A numbered unit after a name: 성수동1가 (Seongsu-dong 1-ga), 신당1동 (Sindang 1-dong)."""


def is_syllable(char: str) -> bool:
    """Whether ``char`` is one precomposed Hangul syllable (가..힣)."""
    return len(char) == 1 and _FIRST <= ord(char) <= _LAST


def _parts(char: str) -> tuple[int, int, int]:
    index = ord(char) - _FIRST
    return index // 588, (index % 588) // 28, index % 28


def _join(final: int, initial: int, vowel: int) -> tuple[str, str]:
    """The spelling of the end of one syllable and the start of the next, where they
    meet inside a word."""
    sound, kept, carried = _FINALS[final]
    if initial == _IEUNG:  # a vowel follows: the final consonant moves over
        if final == 0 or final == 21:
            return sound, ""
        if vowel == _I_VOWEL and final in (_DIGEUT_FINAL, _TIEUT_FINAL):
            carried = "j" if final == _DIGEUT_FINAL else "ch"  # palatalisation
        return kept, carried
    onset = _INITIALS[initial]
    if final in _H_FINALS and initial in _ASPIRATED:  # ㅎ then ㄱ ㄷ ㅈ: aspirated
        return _H_FINALS[final], _ASPIRATED[initial]
    if initial == _RIEUL:
        if sound in ("l", "n"):
            return "l", "l"  # ㄹㄹ, ㄴㄹ → ll
        if sound:
            return _NASAL.get(sound, sound), "n"  # ㅁㄹ → mn, ㅇㄹ → ngn, ㄱㄹ → ngn
        return "", onset
    if initial in (_NIEUN, _MIEUM):
        if sound == "l" and initial == _NIEUN:
            return "l", "l"  # ㄹㄴ → ll
        return _NASAL.get(sound, sound), onset
    return sound, onset


def romanize(text: str) -> str:
    """``text`` in Revised Romanization, lower case; non-Hangul characters unchanged."""
    out: list[str] = []
    prev: tuple[int, int, int] | None = None
    for char in text:
        if not is_syllable(char):
            if prev is not None:
                out.append(_FINALS[prev[2]][0])
            out.append(char)
            prev = None
            continue
        initial, vowel, final = _parts(char)
        if prev is None:
            onset = _INITIALS[initial]
        else:
            coda, onset = _join(prev[2], initial, vowel)
            out.append(coda)
        out.append(onset + _VOWELS[vowel])
        prev = (initial, vowel, final)
    if prev is not None:
        out.append(_FINALS[prev[2]][0])
    return "".join(out)


def _word(word: str) -> str:
    numbered = _NUMBERED.fullmatch(word)
    if numbered is not None:
        head, number, unit = numbered.groups()
        return f"{_word(head)} {number}-{_UNIT_SUFFIXES[unit]}"
    for suffix in _PROVINCE_SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            return romanize(word[: -len(suffix)]).capitalize()
    unit = _UNIT_SUFFIXES.get(word[-1:])
    if unit is not None and len(word) > 1:
        return f"{romanize(word[:-1]).capitalize()}-{unit}"
    return romanize(word).capitalize()


def romanize_place(name: str) -> str:
    """A place name in Revised Romanization (``부천시 원미구`` → ``Bucheon-si Wonmi-gu``)."""
    return " ".join(_word(word) for word in name.split())
