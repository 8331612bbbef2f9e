"""``redact_url``: no text that shows a URL carries data.go.kr's ``serviceKey``, R-ONE's
``KEY`` or a database password (issue 44 item 7)."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from svc_core.redact import HIDDEN, redact_url

# Keys hold capitals and + / = (data.go.kr's encoded keys); everything else in the URLs
# here is lower case, so a key found in the output can only be the key.
KEYS = st.text(alphabet="ABCXYZ+/=%", min_size=6, max_size=40).filter(
    lambda k: any(c.isupper() for c in k)
)
WORDS = st.text(alphabet="abcdefgh0123456789", min_size=1, max_size=10)
NAMES = st.sampled_from(["serviceKey", "ServiceKey", "servicekey", "KEY", "key", "Key"])


@given(KEYS, NAMES, st.dictionaries(WORDS, WORDS, max_size=4), st.booleans())
def test_a_key_in_a_url_is_hidden_however_it_is_spelled(
    key: str, name: str, others: dict[str, str], first: bool
) -> None:
    params = {name: key, **others} if first else {**others, name: key}
    url = str(httpx.URL("https://apis.data.go.kr/1613000/x", params=params))
    for shown in (url, f"HTTP 302: a redirect to {url!r}; svc follows no redirects"):
        out = redact_url(shown)
        assert key not in out and str(httpx.URL("", params={"k": key}))[3:] not in out
        assert f"{name}={HIDDEN}" in out
        for other, value in others.items():  # the rest of the URL stays readable
            if other.lower() not in ("servicekey", "key"):
                assert f"{other}={value}" in out
        assert redact_url(out) == out


@given(KEYS, WORDS)
def test_a_password_in_a_database_url_is_hidden_and_the_user_kept(password: str, user: str) -> None:
    url = f"postgresql://{user}:{password}@db.internal:5432/svc"
    out = redact_url(url)
    assert out == f"postgresql://{user}:{HIDDEN}@db.internal:5432/svc"
    assert redact_url(f"cannot connect to PostgreSQL at {url}: refused").count(password) == 0


@given(st.text(alphabet="abcdefgh /:.?&=-_", max_size=60))
def test_text_with_no_credential_is_unchanged(text: str) -> None:
    assert redact_url(text) == text


def test_names_that_only_end_in_key_and_urls_without_a_password_are_unchanged() -> None:
    for text in (
        "https://x.example/a?api_key_id=1&monkey=2",
        "postgresql://postgres@127.0.0.1:5432/test",
        "sqlite:///data/svc.db",
    ):
        assert redact_url(text) == text
