"""Configuration: one attrs class, loaded from ``SVC_*`` variables and matching flags.

Every setting has an environment variable (``SVC_DATABASE_URL``) and a CLI flag
(``--database-url``); flags win. Values are validated when loaded: a bad one raises
``ConfigError`` whose message is one line naming the setting, and the CLI turns it into
exit status 2.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

from svc_core.accounts.plans import DEFAULT_PLANS
from svc_core.errors import ConfigError
from svc_core.params import ascii_int
from svc_core.redact import redact_url

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be true or false, not {raw!r}")


def _int(name: str, raw: str, low: int, high: int) -> int:
    try:
        value = ascii_int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer (ASCII digits), not {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _list(raw: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def _origins(name: str, raw: str) -> tuple[str, ...]:
    out = []
    for item in _list(raw):
        parts = urlsplit(item)
        if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
            raise ConfigError(f"{name}: {item!r} is not an origin like https://app.example.com")
        out.append(f"{parts.scheme}://{parts.netloc}".lower())
    return tuple(out)


def _networks(name: str, raw: str) -> tuple[Network, ...]:
    out = []
    for item in _list(raw):
        try:
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ConfigError(f"{name}: {item!r} is not an IP address or CIDR") from None
    return tuple(out)


def _database_url(name: str, raw: str) -> str:
    url = raw.strip()
    if not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
        raise ConfigError(
            f"{name} must start with sqlite:/// or postgresql://, not {redact_url(url)!r}"
        )
    if url == "sqlite:///":
        raise ConfigError(f"{name} names no SQLite file (use sqlite:///path.db)")
    return url


def _secret(name: str, raw: str, minimum: int = 16) -> str:
    if len(raw) < minimum:
        raise ConfigError(f"{name} must be at least {minimum} characters long")
    return raw


def _log_level(name: str, raw: str) -> str:
    value = raw.strip().upper()
    if value not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"{name} must be one of DEBUG, INFO, WARNING, ERROR, not {raw!r}")
    return value


def _plan(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in DEFAULT_PLANS:
        raise ConfigError(f"{name} must be one of {', '.join(DEFAULT_PLANS)}, not {raw!r}")
    return value


def _server(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"granian", "gunicorn"}:
        raise ConfigError(f"{name} must be granian or gunicorn, not {raw!r}")
    return value


def _base_url(name: str, raw: str) -> str:
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ConfigError(f"{name} must be an absolute http(s) URL, not {raw!r}")
    return raw.strip().rstrip("/")


@attrs.frozen(kw_only=True)
class Config:
    """Everything a server, worker or CLI run needs to know."""

    database_url: str = "sqlite:///svc.db"
    secret_key: str | None = None
    jwt_jwks_file: str | None = None
    jwt_hs256_secret: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    site_origins: tuple[str, ...] = ()
    cookie_domain: str | None = None
    cookie_secure: bool = True
    webhook_allow_private: bool = False
    webhook_test_sends_per_minute: int = 5
    trusted_proxies: tuple[Network, ...] = ()
    # the base of every link the API writes (disclosure_url, upgrade_url, hints, the
    # OpenAPI servers entry); unset, load_config derives it from host and port
    public_url: str = "http://127.0.0.1:8000"
    host: str = "127.0.0.1"
    port: int = 8000
    server: str = "granian"
    workers: int = 2
    threads: int = 4
    tenant_calls: int = 2
    """Calls of one account in progress at once per server process (at most threads-1)."""
    tenant_wait_ms: int = 10_000
    """How long a call waits for a turn of its account's calls before 429."""
    read_timeout: int = 30
    log_level: str = "INFO"
    max_body_bytes: int = 1_048_576
    max_url_bytes: int = 8000
    db_pool_size: int = 10
    db_busy_timeout_ms: int = 5000
    quota_wait_ms: int = 2000
    """How long a call waits for quota units held by calls in flight before 503."""
    quota_hold_seconds: int = 300
    """When a quota hold left by a process that died before settling stops counting."""
    inline_worker: bool = False
    empty_data_file: bool = False
    """A SQLite store whose data file is gone starts with an empty one (on purpose)."""
    dev_signin: bool = False
    session_max_age: int = 12 * 3600
    signup_plan: str = "starter"
    """The plan of the consumer a first sign-in creates (SPEC: starter; the demo: pro)."""

    def __attrs_post_init__(self) -> None:
        if self.dev_signin and self.cookie_secure:
            raise ConfigError(
                "SVC_DEV_SIGNIN=true needs SVC_COOKIE_SECURE=false (secure cookies are the "
                "default): development sign-in is for a local http server only"
            )
        if self.dev_signin and (self.jwt_jwks_file or self.jwt_hs256_secret):
            raise ConfigError(
                "SVC_DEV_SIGNIN cannot run with an identity provider "
                "(SVC_JWT_JWKS_FILE or SVC_JWT_HS256_SECRET); turn one off"
            )

    def require_secret(self) -> str:
        """The signing key for cookies; servers refuse to start without one."""
        if self.secret_key is None:
            raise ConfigError("SVC_SECRET_KEY is not set (at least 16 characters)")
        return self.secret_key


# setting name -> (parser of the raw string)
_PARSERS: dict[str, Any] = {
    "database_url": _database_url,
    "secret_key": _secret,
    "jwt_jwks_file": lambda n, r: r,
    "jwt_hs256_secret": lambda n, r: _secret(n, r, 32),  # RFC 7518 3.2: >= 256 bits
    "jwt_issuer": lambda n, r: r,
    "jwt_audience": lambda n, r: r,
    "site_origins": _origins,
    "cookie_domain": lambda n, r: r.strip() or None,
    "cookie_secure": _bool,
    "webhook_allow_private": _bool,
    "webhook_test_sends_per_minute": lambda n, r: _int(n, r, 1, 60),
    "trusted_proxies": _networks,
    "public_url": _base_url,
    "host": lambda n, r: r.strip(),
    "port": lambda n, r: _int(n, r, 1, 65535),
    "server": _server,
    "workers": lambda n, r: _int(n, r, 1, 64),
    "threads": lambda n, r: _int(n, r, 1, 64),
    "tenant_calls": lambda n, r: _int(n, r, 1, 64),
    "tenant_wait_ms": lambda n, r: _int(n, r, 100, 60_000),
    "read_timeout": lambda n, r: _int(n, r, 1, 60),
    "log_level": _log_level,
    "max_body_bytes": lambda n, r: _int(n, r, 1024, 100 * 1_048_576),
    "max_url_bytes": lambda n, r: _int(n, r, 512, 8000),
    "db_pool_size": lambda n, r: _int(n, r, 1, 200),
    "db_busy_timeout_ms": lambda n, r: _int(n, r, 100, 600_000),
    "quota_wait_ms": lambda n, r: _int(n, r, 0, 30_000),
    "quota_hold_seconds": lambda n, r: _int(n, r, 30, 86_400),
    "inline_worker": _bool,
    "empty_data_file": _bool,
    "dev_signin": _bool,
    "session_max_age": lambda n, r: _int(n, r, 1, 30 * 86400),
    "signup_plan": _plan,
}

SETTINGS: tuple[str, ...] = tuple(_PARSERS)


def env_name(setting: str) -> str:
    """``database_url`` -> ``SVC_DATABASE_URL``."""
    return "SVC_" + setting.upper()


def flag_name(setting: str) -> str:
    """``database_url`` -> ``--database-url``."""
    return "--" + setting.replace("_", "-")


def load_config(
    env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> Config:
    """Build a ``Config`` from ``SVC_*`` variables, then flag ``overrides`` (raw strings).

    Raises ``ConfigError`` with a one-line message naming the first bad setting.
    """
    values: dict[str, Any] = {}
    sources: list[tuple[Mapping[str, Any], bool]] = [(env or {}, True), (overrides or {}, False)]
    for mapping, is_env in sources:
        for setting, parse in _PARSERS.items():
            key = env_name(setting) if is_env else setting
            raw = mapping.get(key)
            if raw is None:
                continue
            label = env_name(setting) if is_env else flag_name(setting)
            if not isinstance(raw, str):
                raw = str(raw)
            values[setting] = parse(label, raw)
    if "public_url" not in values:
        values["public_url"] = served_url(values.get("host", "127.0.0.1"), values.get("port", 8000))
    return Config(**values)


def served_url(host: str, port: int) -> str:
    """The address a local client reaches ``svc serve --host H --port P`` at: the public
    URL when ``SVC_PUBLIC_URL`` is not set (a wildcard host is reached on loopback)."""
    shown = host or "127.0.0.1"
    if shown in ("0.0.0.0", "::"):  # noqa: S104
        shown = "127.0.0.1"
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"
