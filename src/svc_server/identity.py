"""Identity-provider JWTs: verify a sign-in token and return who it names.

Verification uses PyJWT with the algorithm pinned by the key family, never chosen by
the token: an ``HS256`` token is checked only with the configured shared secret, an
``RS256``/``ES256`` token only with the JWKS key its ``kid`` names, and that key's
algorithm must equal the token's. ``alg=none`` and every other algorithm are refused.
Keys come only from configuration: ``jku``, ``x5u`` and embedded ``jwk`` headers are never
followed. ``exp`` is required; ``nbf`` and ``iat`` are checked when present; all three
with a leeway (30 s by default) against the injected clock. ``iss`` and ``aud`` are
checked when configured. Tokens above 8 KB are refused unread. Every failure is a
``JwtInvalid`` (401) with a short reason.

The ``email`` claim is read by the one email rule (``svc_core.accounts.emails``): an address that
the rule refuses (whitespace, invisible characters, no domain) or one in the reserved
``.invalid`` domain, where svc's placeholder addresses live, refuses the token. An
address the provider marks ``email_verified: false`` is dropped: it identifies no one.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import jwt
from jwt.algorithms import HMACAlgorithm

from svc_core.accounts.emails import normalize_email
from svc_core.errors import ConfigError, InvalidBody, JwtInvalid

if TYPE_CHECKING:
    from svc_server.config import Config

MAX_TOKEN_CHARS = 8192
DEFAULT_LEEWAY = 30.0
MIN_HS256_SECRET_BYTES = 32  # RFC 7518 section 3.2: at least the hash size
MIN_RSA_BITS = 2048
MAX_SUBJECT_CHARS = 255
MAX_EMAIL_CHARS = 320

_MALFORMED = "The identity token is malformed."
_EXPIRED_HINT = "Get a fresh token from the identity provider and sign in again."


@attrs.frozen(kw_only=True)
class Identity:
    """Who a verified token names: the provider's subject and, if given, the email."""

    sub: str
    email: str | None = None


def _jwks_keys(jwks: Mapping[str, Any]) -> list[jwt.PyJWK]:
    """The signing keys of a JWKS document that svc accepts (RSA, EC P-256)."""
    entries = jwks.get("keys") if isinstance(jwks, Mapping) else None
    if not isinstance(entries, list):
        raise ConfigError('The JWKS document must be a JSON object with a "keys" array')
    keys: list[jwt.PyJWK] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ConfigError(f"JWKS keys[{index}] is not a JSON object")
        if entry.get("use", "sig") != "sig":
            continue  # encryption keys do not sign tokens
        kty, alg = entry.get("kty"), entry.get("alg")
        if kty == "RSA" and alg in (None, "RS256"):
            pinned = "RS256"
        elif kty == "EC" and entry.get("crv") == "P-256" and alg in (None, "ES256"):
            pinned = "ES256"
        else:
            continue  # a key family or algorithm svc does not accept
        if "d" in entry:
            raise ConfigError(
                f"JWKS keys[{index}] holds private key material; publish only public keys"
            )
        kid = entry.get("kid")
        if kid is not None:
            if not isinstance(kid, str) or kid in seen:
                raise ConfigError(f"JWKS keys[{index}] has a missing-type or repeated kid")
            seen.add(kid)
        try:
            key = jwt.PyJWK(entry, algorithm=pinned)
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise ConfigError(f"JWKS keys[{index}] is not a valid {kty} key: {exc}") from None
        if pinned == "RS256" and getattr(key.key, "key_size", 0) < MIN_RSA_BITS:
            raise ConfigError(f"JWKS keys[{index}] is an RSA key below {MIN_RSA_BITS} bits")
        keys.append(key)
    if not keys:
        raise ConfigError("The JWKS document holds no RS256 or ES256 (P-256) signing key")
    return keys


def _hs256_key(secret: str) -> bytes:
    key = secret.encode("utf-8")
    if len(key) < MIN_HS256_SECRET_BYTES:
        raise ConfigError(
            f"The HS256 secret must be at least {MIN_HS256_SECRET_BYTES} bytes (RFC 7518 3.2)"
        )
    try:
        return HMACAlgorithm(HMACAlgorithm.SHA256).prepare_key(key)
    except jwt.PyJWTError as exc:  # PyJWT refuses PEM/SSH-looking HMAC secrets
        raise ConfigError(f"The HS256 secret is not usable: {exc}") from None


def _seconds(payload: Mapping[str, Any], claim: str) -> float | None:
    if claim not in payload:
        return None
    value = payload[claim]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise JwtInvalid(f"The identity token's {claim!r} claim is not a number of seconds.")
    return float(value)


def _reason(exc: jwt.PyJWTError) -> str:
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return f"The identity token lacks the {exc.claim!r} claim."
    if isinstance(exc, jwt.InvalidAudienceError):
        return "The identity token is meant for another audience."
    if isinstance(exc, jwt.InvalidIssuerError):
        return "The identity token comes from an unexpected issuer."
    if isinstance(exc, jwt.InvalidSignatureError):
        return "The identity token's signature does not verify."
    if isinstance(exc, jwt.InvalidAlgorithmError):
        return "The identity token's algorithm is not accepted."
    if isinstance(exc, jwt.DecodeError):
        return _MALFORMED
    return "The identity token is invalid."


class JwtVerifier:
    """Verifies sign-in tokens against a JWKS document and/or an HS256 shared secret."""

    def __init__(
        self,
        jwks: Mapping[str, Any] | None = None,
        hs256_secret: str | None = None,
        issuer: str | None = None,
        audience: str | None = None,
        leeway: float = DEFAULT_LEEWAY,
    ) -> None:
        if not 0 <= leeway <= 300:
            raise ConfigError(f"JWT leeway must be 0 to 300 seconds, not {leeway!r}")
        self.issuer = issuer
        self.audience = audience
        self.leeway = float(leeway)
        self._keys = _jwks_keys(jwks) if jwks is not None else []
        self._by_kid = {key.key_id: key for key in self._keys if key.key_id is not None}
        self._hs256 = _hs256_key(hs256_secret) if hs256_secret is not None else None

    @classmethod
    def from_files(
        cls,
        jwks_file: str | Path | None,
        hs256_secret: str | None = None,
        issuer: str | None = None,
        audience: str | None = None,
        leeway: float = DEFAULT_LEEWAY,
    ) -> JwtVerifier:
        """A verifier whose JWKS is read from ``jwks_file`` (a JSON file), if given."""
        jwks = None
        if jwks_file is not None:
            try:
                jwks = json.loads(Path(jwks_file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise ConfigError(f"Cannot read the JWKS file {jwks_file}: {exc}") from None
            if not isinstance(jwks, dict):
                raise ConfigError(f"The JWKS file {jwks_file} does not hold a JSON object")
        return cls(jwks, hs256_secret, issuer, audience, leeway)

    @classmethod
    def from_config(cls, config: Config) -> JwtVerifier:
        """A verifier from ``SVC_JWT_*`` settings."""
        return cls.from_files(
            config.jwt_jwks_file,
            config.jwt_hs256_secret,
            config.jwt_issuer,
            config.jwt_audience,
        )

    @property
    def configured(self) -> bool:
        """Is any key configured? Without one every token is refused."""
        return bool(self._keys) or self._hs256 is not None

    def verify(self, token: str, now: float | None = None) -> Identity:
        """The identity a valid token names, or ``JwtInvalid`` with a short reason."""
        at = time.time() if now is None else now
        try:
            return self._verify(token, at)
        except JwtInvalid:
            raise
        except jwt.PyJWTError as exc:
            raise JwtInvalid(_reason(exc)) from None
        except Exception:  # any surprise from a hostile token is still just a bad token
            raise JwtInvalid(_MALFORMED) from None

    def _key_for(self, header: Mapping[str, Any]) -> tuple[Any, str]:
        alg = header.get("alg")
        if not isinstance(alg, str):
            raise JwtInvalid("The identity token's header names no algorithm.")
        if alg.lower() == "none":
            raise JwtInvalid("Unsigned identity tokens (alg none) are refused.")
        if alg == "HS256" and self._hs256 is not None:
            return self._hs256, "HS256"
        if alg not in ("RS256", "ES256") or not self._keys:
            raise JwtInvalid(f"The identity token's algorithm {alg[:16]!r} is not accepted.")
        kid = header.get("kid")
        if kid is None and len(self._keys) == 1:
            key = self._keys[0]
        elif isinstance(kid, str) and kid in self._by_kid:
            key = self._by_kid[kid]
        else:
            raise JwtInvalid("The identity token's key id (kid) is unknown.")
        if key.algorithm_name != alg:
            raise JwtInvalid("The identity token's algorithm does not match its key.")
        return key, alg

    def _verify(self, token: str, now: float) -> Identity:
        if not self.configured:
            raise JwtInvalid("Sign-in is not configured on this server.")
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            raise JwtInvalid(f"The identity token is longer than {MAX_TOKEN_CHARS} characters.")
        if not token.isascii() or token.count(".") != 2:
            raise JwtInvalid("The identity token must be three base64url segments.")
        header = jwt.get_unverified_header(token)
        key, alg = self._key_for(header)
        payload = jwt.decode(
            token,
            key=key,
            algorithms=[alg],
            issuer=self.issuer,
            audience=self.audience,
            options={
                "verify_signature": True,
                "verify_exp": False,  # time claims are checked below against ``now``
                "verify_nbf": False,
                "verify_iat": False,
                "verify_iss": self.issuer is not None,
                "verify_aud": self.audience is not None,
                "enforce_minimum_key_length": True,
            },
        )
        self._check_times(payload, now)
        return self._identity(payload)

    def _check_times(self, payload: Mapping[str, Any], now: float) -> None:
        exp = _seconds(payload, "exp")
        if exp is None:
            raise JwtInvalid("The identity token lacks the 'exp' claim.")
        if exp <= now - self.leeway:
            raise JwtInvalid("The identity token has expired.", hint=_EXPIRED_HINT)
        nbf = _seconds(payload, "nbf")
        if nbf is not None and nbf > now + self.leeway:
            raise JwtInvalid("The identity token is not valid yet (nbf).")
        iat = _seconds(payload, "iat")
        if iat is not None and iat > now + self.leeway:
            raise JwtInvalid("The identity token was issued in the future (iat).")

    @staticmethod
    def _identity(payload: Mapping[str, Any]) -> Identity:
        sub = payload.get("sub")
        if not isinstance(sub, str) or not sub.strip() or len(sub) > MAX_SUBJECT_CHARS:
            raise JwtInvalid("The identity token names no valid subject ('sub').")
        email = payload.get("email")
        if email is not None and (not isinstance(email, str) or len(email) > MAX_EMAIL_CHARS):
            raise JwtInvalid("The identity token's 'email' claim is not a valid string.")
        if payload.get("email_verified") is False or not email:
            return Identity(sub=sub)  # an unverified address does not identify anyone
        try:
            email = normalize_email(email)
        except InvalidBody:
            raise JwtInvalid(
                "The identity token's 'email' claim is not a usable email address.",
                hint="No spaces or invisible characters, one @ between a name and a domain, "
                "and not in the reserved .invalid domain.",
            ) from None
        return Identity(sub=sub, email=email)
