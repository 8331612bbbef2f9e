"""Identity-provider JWT verification with real keys: RS256, ES256, HS256 and the attacks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from svc_core.errors import ConfigError, JwtInvalid
from svc_server.config import Config
from svc_server.identity import MAX_TOKEN_CHARS, Identity, JwtVerifier

NOW = 1_790_000_000.0
HS_SECRET = "hs256-shared-secret-0123456789abcdef"
ISSUER = "https://id.example.com/"
AUDIENCE = "svc-api"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def public_jwk(key: Any, kid: str, **extra: Any) -> dict[str, Any]:
    if isinstance(key, rsa.RSAPrivateKey):
        jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    else:
        jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return {**jwk, "kid": kid, "use": "sig", **extra}


JWKS = {"keys": [public_jwk(RSA_KEY, "rsa-1"), public_jwk(EC_KEY, "ec-1")]}


def claims(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sub": "user-123",
        "email": "kim@example.com",
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": int(NOW) - 10,
        "exp": int(NOW) + 300,
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def rs256(payload: dict[str, Any], kid: str | None = "rsa-1", key: Any = RSA_KEY) -> str:
    headers = {"kid": kid} if kid is not None else None
    return jwt.encode(payload, key, algorithm="RS256", headers=headers)


def es256(payload: dict[str, Any], kid: str = "ec-1") -> str:
    return jwt.encode(payload, EC_KEY, algorithm="ES256", headers={"kid": kid})


def hs256(payload: dict[str, Any], secret: str = HS_SECRET) -> str:
    return jwt.encode(payload, secret, algorithm="HS256")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def handmade(header: dict[str, Any], payload: dict[str, Any], mac_key: bytes | None) -> str:
    """A token built by hand, as an attacker would (PyJWT refuses to make some of these)."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    signature = b""
    if mac_key is not None:
        signature = hmac.new(mac_key, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)


@pytest.fixture
def verifier() -> JwtVerifier:
    return JwtVerifier(jwks=JWKS, hs256_secret=HS_SECRET, issuer=ISSUER, audience=AUDIENCE)


def reason(verifier: JwtVerifier, token: str) -> str:
    with pytest.raises(JwtInvalid) as info:
        verifier.verify(token, now=NOW)
    assert info.value.status == 401
    assert info.value.code == "JWT_INVALID"
    return info.value.message


# accepted -------------------------------------------------------------------------------


@pytest.mark.parametrize("mint", [rs256, es256, hs256])
def test_each_key_family_verifies(verifier: JwtVerifier, mint: Any) -> None:
    assert verifier.verify(mint(claims()), now=NOW) == Identity(
        sub="user-123", email="kim@example.com"
    )


def test_email_is_optional(verifier: JwtVerifier) -> None:
    assert verifier.verify(rs256(claims(email=...)), now=NOW) == Identity(sub="user-123")


def test_unverified_email_is_dropped(verifier: JwtVerifier) -> None:
    identity = verifier.verify(rs256(claims(email_verified=False)), now=NOW)
    assert identity.email is None
    assert verifier.verify(rs256(claims(email_verified=True)), now=NOW).email == "kim@example.com"


def test_audience_list_containing_ours_is_accepted(verifier: JwtVerifier) -> None:
    token = rs256(claims(aud=["other", AUDIENCE]))
    assert verifier.verify(token, now=NOW).sub == "user-123"


def test_iss_and_aud_are_ignored_when_not_configured() -> None:
    plain = JwtVerifier(jwks=JWKS)
    assert plain.verify(rs256(claims(iss="anyone", aud="anything")), now=NOW).sub == "user-123"
    assert plain.verify(rs256(claims(iss=..., aud=...)), now=NOW).sub == "user-123"


def test_single_key_jwks_serves_tokens_without_kid() -> None:
    single = JwtVerifier(jwks={"keys": [public_jwk(RSA_KEY, "only")]})
    assert single.verify(rs256(claims(), kid=None), now=NOW).sub == "user-123"


def test_default_clock_is_the_real_time() -> None:
    plain = JwtVerifier(hs256_secret=HS_SECRET)
    token = hs256({"sub": "u", "exp": int(time.time()) + 120})
    assert plain.verify(token).sub == "u"


# time claims ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exp_offset", "ok"), [(-61, False), (-31, False), (-29, True), (-20, True), (300, True)]
)
def test_expiry_with_30_second_leeway(verifier: JwtVerifier, exp_offset: int, ok: bool) -> None:
    token = rs256(claims(exp=int(NOW) + exp_offset, iat=int(NOW) - 600))
    if ok:
        assert verifier.verify(token, now=NOW).sub == "user-123"
    else:
        assert "expired" in reason(verifier, token)


@pytest.mark.parametrize(("nbf_offset", "ok"), [(20, True), (61, False), (3600, False)])
def test_not_before_with_leeway(verifier: JwtVerifier, nbf_offset: int, ok: bool) -> None:
    token = rs256(claims(nbf=int(NOW) + nbf_offset))
    if ok:
        assert verifier.verify(token, now=NOW).sub == "user-123"
    else:
        assert "not valid yet" in reason(verifier, token)


def test_far_future_iat_is_refused(verifier: JwtVerifier) -> None:
    assert "future" in reason(verifier, rs256(claims(iat=int(NOW) + 3600)))


def test_missing_exp_is_refused(verifier: JwtVerifier) -> None:
    assert "exp" in reason(verifier, rs256(claims(exp=...)))


@pytest.mark.parametrize("exp", ["2030-01-01", True, None, [1], 1e400])
def test_non_numeric_exp_is_refused(verifier: JwtVerifier, exp: object) -> None:
    token = handmade({"alg": "HS256", "typ": "JWT"}, claims(exp=exp), HS_SECRET.encode())
    reason(verifier, token)


# claims ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"aud": "someone-else"}, "audience"),
        ({"aud": ...}, "aud"),
        ({"iss": "https://evil.example/"}, "issuer"),
        ({"iss": ...}, "iss"),
        ({"sub": ...}, "subject"),
        ({"sub": ""}, "subject"),
        ({"sub": "   "}, "subject"),
        ({"sub": "x" * 256}, "subject"),
        ({"email": 42}, "email"),
    ],
)
def test_bad_claims_are_refused(
    verifier: JwtVerifier, changes: dict[str, Any], needle: str
) -> None:
    assert needle in reason(verifier, rs256(claims(**changes)))


def test_non_string_sub_is_refused(verifier: JwtVerifier) -> None:
    token = handmade({"alg": "HS256"}, claims(sub=12345), HS_SECRET.encode())
    reason(verifier, token)


# attacks --------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
def test_alg_none_is_refused(verifier: JwtVerifier, alg: str) -> None:
    token = handmade({"alg": alg, "typ": "JWT"}, claims(), None)
    assert "alg none" in reason(verifier, token)


def test_hs256_signed_with_the_rsa_public_key_is_refused() -> None:
    """Algorithm confusion (GHSA-ffqj-6fqr-9h24): the public PEM used as an HMAC secret."""
    pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    token = handmade({"alg": "HS256", "kid": "rsa-1"}, claims(), pem)
    jwks_only = JwtVerifier(jwks=JWKS, issuer=ISSUER, audience=AUDIENCE)
    assert "not accepted" in reason(jwks_only, token)
    both = JwtVerifier(jwks=JWKS, hs256_secret=HS_SECRET, issuer=ISSUER, audience=AUDIENCE)
    assert "signature" in reason(both, token)


def test_rs256_token_is_never_checked_with_the_hs_secret() -> None:
    hs_only = JwtVerifier(hs256_secret=HS_SECRET)
    assert "not accepted" in reason(hs_only, rs256(claims()))
    forged = handmade({"alg": "RS256"}, claims(), HS_SECRET.encode())
    assert "not accepted" in reason(hs_only, forged)


def test_hs256_token_is_refused_without_a_shared_secret() -> None:
    jwks_only = JwtVerifier(jwks=JWKS)
    assert "not accepted" in reason(jwks_only, hs256(claims()))


def test_wrong_rsa_key_is_refused(verifier: JwtVerifier) -> None:
    assert "signature" in reason(verifier, rs256(claims(), key=OTHER_RSA_KEY))


def test_wrong_hs_secret_is_refused(verifier: JwtVerifier) -> None:
    assert "signature" in reason(
        verifier, hs256(claims(), secret="another-secret-0123456789abcdef!")
    )


@pytest.mark.parametrize("kid", ["rsa-2", "../../etc/passwd", "' OR 1=1--", ""])
def test_unknown_kid_is_refused(verifier: JwtVerifier, kid: str) -> None:
    assert "kid" in reason(verifier, rs256(claims(), kid=kid))


def test_missing_kid_with_several_keys_is_refused(verifier: JwtVerifier) -> None:
    assert "kid" in reason(verifier, rs256(claims(), kid=None))


def test_kid_of_another_family_is_refused(verifier: JwtVerifier) -> None:
    token = jwt.encode(claims(), RSA_KEY, algorithm="RS256", headers={"kid": "ec-1"})
    assert "does not match" in reason(verifier, token)


def test_jku_x5u_and_embedded_jwk_headers_are_not_followed(verifier: JwtVerifier) -> None:
    attacker = public_jwk(OTHER_RSA_KEY, "attacker")
    token = jwt.encode(
        claims(),
        OTHER_RSA_KEY,
        algorithm="RS256",
        headers={
            "kid": "attacker",
            "jku": "https://evil.example/jwks.json",
            "x5u": "https://evil.example/cert.pem",
            "jwk": attacker,
        },
    )
    assert "kid" in reason(verifier, token)
    # Same attack reusing our kid: the signature is checked with our key only.
    token = jwt.encode(
        claims(), OTHER_RSA_KEY, algorithm="RS256", headers={"kid": "rsa-1", "jwk": attacker}
    )
    assert "signature" in reason(verifier, token)


@pytest.mark.parametrize("alg", ["HS384", "HS512", "RS512", "PS256", "ES384", "EdDSA"])
def test_other_algorithms_are_refused(verifier: JwtVerifier, alg: str) -> None:
    token = handmade({"alg": alg, "kid": "rsa-1"}, claims(), HS_SECRET.encode())
    assert "not accepted" in reason(verifier, token)


# malformed ------------------------------------------------------------------------------


def test_segment_counts(verifier: JwtVerifier) -> None:
    good = hs256(claims())
    head, body, sig = good.split(".")
    assert "three" in reason(verifier, f"{head}.{body}")
    assert "three" in reason(verifier, f"{head}.{body}.{sig}.{sig}")
    assert "three" in reason(verifier, "")


@pytest.mark.parametrize(
    "token",
    [
        "!!!.@@@.###",
        "a.b.c",
        b64(b"not json") + "." + b64(b"{}") + ".",
        b64(b"[1,2]") + "." + b64(b"{}") + ".",
        b64(b'{"alg":"HS256"}') + "." + b64(b"not json") + "." + b64(b"x" * 32),
        b64(b'{"alg":"HS256"}') + "." + b64(b"[1]") + "." + b64(b"x" * 32),
        b64(b'{"alg":7}') + "." + b64(b"{}") + ".",
        b64(b'{"alg":"RS256","kid":["x"]}') + "." + b64(b"{}") + ".",
        "ey.ey.ey",
    ],
)
def test_malformed_tokens_are_jwt_invalid(verifier: JwtVerifier, token: str) -> None:
    reason(verifier, token)


def test_oversized_tokens_are_refused_unread(verifier: JwtVerifier) -> None:
    big = hs256(claims(pad="x" * MAX_TOKEN_CHARS))
    assert "longer than" in reason(verifier, big)


def test_non_ascii_token_is_refused(verifier: JwtVerifier) -> None:
    reason(verifier, "헤더.본문.서명")


def test_not_a_string_is_refused(verifier: JwtVerifier) -> None:
    with pytest.raises(JwtInvalid):
        verifier.verify(None, now=NOW)  # type: ignore[arg-type]


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_arbitrary_text_only_ever_raises_jwt_invalid(text: str) -> None:
    verifier = JwtVerifier(jwks=JWKS, hs256_secret=HS_SECRET)
    with pytest.raises(JwtInvalid):
        verifier.verify(text, now=NOW)


@settings(max_examples=100)
@given(st.data())
def test_tampered_tokens_never_verify_to_another_identity(data: st.DataObject) -> None:
    verifier = JwtVerifier(jwks=JWKS, hs256_secret=HS_SECRET)
    token = data.draw(st.sampled_from([rs256(claims()), es256(claims()), hs256(claims())]))
    i = data.draw(st.integers(min_value=0, max_value=len(token) - 1), label="index")
    char = data.draw(st.sampled_from("ABCabc019-_.=+/ "), label="char")
    tampered = token[:i] + char + token[i + 1 :]
    try:
        identity = verifier.verify(tampered, now=NOW)
    except JwtInvalid:
        return
    # Only a change in unused base64 padding bits can leave a token valid.
    assert identity == Identity(sub="user-123", email="kim@example.com")


# configuration --------------------------------------------------------------------------


def test_nothing_configured_refuses_every_token() -> None:
    empty = JwtVerifier()
    assert not empty.configured
    assert "not configured" in reason(empty, hs256(claims()))


def test_short_hs_secret_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="32 bytes"):
        JwtVerifier(hs256_secret="only-sixteen-chr")


def test_pem_looking_hs_secret_is_a_config_error() -> None:
    pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with pytest.raises(ConfigError):
        JwtVerifier(hs256_secret=pem.decode())


@pytest.mark.parametrize(
    ("jwks", "needle"),
    [
        ({}, '"keys"'),
        ({"keys": "x"}, '"keys"'),
        ({"keys": ["x"]}, "not a JSON object"),
        ({"keys": []}, "no RS256"),
        ({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, "no RS256"),
        ({"keys": [public_jwk(RSA_KEY, "enc", use="enc")]}, "no RS256"),
        ({"keys": [public_jwk(RSA_KEY, "r", alg="RS512")]}, "no RS256"),
        ({"keys": [public_jwk(RSA_KEY, "a"), public_jwk(EC_KEY, "a")]}, "repeated kid"),
        ({"keys": [{**public_jwk(RSA_KEY, "p"), "d": "AQAB"}]}, "private key"),
        ({"keys": [{"kty": "RSA", "kid": "x", "n": "!!", "e": "AQAB"}]}, "not a valid"),
    ],
)
def test_bad_jwks_is_a_config_error(jwks: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        JwtVerifier(jwks=jwks)
    assert needle in info.value.message


def test_weak_rsa_key_is_a_config_error() -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)  # noqa: S505 - the weak key is the point
    with pytest.raises(ConfigError, match="2048"):
        JwtVerifier(jwks={"keys": [public_jwk(weak, "weak")]})


def test_unsupported_keys_beside_good_ones_are_skipped() -> None:
    jwks = {"keys": [{"kty": "oct", "k": "c2VjcmV0"}, public_jwk(RSA_KEY, "rsa-1")]}
    assert JwtVerifier(jwks=jwks).verify(rs256(claims()), now=NOW).sub == "user-123"


def test_from_files_and_from_config(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(JWKS), encoding="utf-8")
    from_files = JwtVerifier.from_files(path, issuer=ISSUER, audience=AUDIENCE)
    assert from_files.verify(es256(claims()), now=NOW).sub == "user-123"
    config = Config(
        jwt_jwks_file=str(path), jwt_hs256_secret=HS_SECRET, jwt_issuer=ISSUER, jwt_audience="x"
    )
    from_config = JwtVerifier.from_config(config)
    assert "audience" in reason(from_config, hs256(claims()))
    assert from_config.verify(hs256(claims(aud="x")), now=NOW).sub == "user-123"


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", "\udcff"])
def test_unreadable_jwks_file_is_a_config_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "jwks.json"
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    with pytest.raises(ConfigError, match="JWKS file"):
        JwtVerifier.from_files(path)


def test_missing_jwks_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="JWKS file"):
        JwtVerifier.from_files(tmp_path / "absent.json")


@pytest.mark.parametrize("leeway", [-1, 301])
def test_leeway_is_bounded(leeway: float) -> None:
    with pytest.raises(ConfigError, match="leeway"):
        JwtVerifier(hs256_secret=HS_SECRET, leeway=leeway)
