"""Configuration loading and validation."""

from __future__ import annotations

import ipaddress

import pytest

from svc_core.errors import ConfigError
from svc_server.config import Config, load_config


def test_defaults() -> None:
    config = load_config({})
    assert config == Config()
    assert config.database_url == "sqlite:///svc.db"
    assert config.cookie_secure is True and config.webhook_allow_private is False


def test_environment_and_flags_flags_win() -> None:
    config = load_config(
        {"SVC_DATABASE_URL": "sqlite:///a.db", "SVC_PORT": "9000"},
        {"database_url": "sqlite:///b.db"},
    )
    assert config.database_url == "sqlite:///b.db"
    assert config.port == 9000


def test_the_server_defaults_to_granian_and_gunicorn_can_be_chosen() -> None:
    assert load_config({}).server == "granian"
    assert load_config({}).read_timeout == 30
    chosen = load_config({"SVC_SERVER": "granian"}, {"server": "Gunicorn", "read_timeout": "5"})
    assert chosen.server == "gunicorn"
    assert chosen.read_timeout == 5


def test_the_wait_for_an_accounts_turn_is_ten_seconds_unless_set() -> None:
    assert load_config({}).tenant_wait_ms == 10_000
    assert load_config({"SVC_TENANT_WAIT_MS": "2500"}).tenant_wait_ms == 2500


def test_lists_are_parsed() -> None:
    config = load_config(
        {
            "SVC_SITE_ORIGINS": "https://app.example.com, https://www.example.com/",
            "SVC_TRUSTED_PROXIES": "10.0.0.0/8,::1",
        }
    )
    assert config.site_origins == ("https://app.example.com", "https://www.example.com")
    assert config.trusted_proxies == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    )


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("SVC_PORT", "http", "SVC_PORT"),
        ("SVC_PORT", "70000", "SVC_PORT"),
        ("SVC_DATABASE_URL", "mysql://x", "SVC_DATABASE_URL"),
        ("SVC_COOKIE_SECURE", "maybe", "SVC_COOKIE_SECURE"),
        ("SVC_SECRET_KEY", "short", "SVC_SECRET_KEY"),
        ("SVC_SITE_ORIGINS", "app.example.com", "SVC_SITE_ORIGINS"),
        ("SVC_TRUSTED_PROXIES", "10.0.0.300", "SVC_TRUSTED_PROXIES"),
        ("SVC_LOG_LEVEL", "loud", "SVC_LOG_LEVEL"),
        ("SVC_SERVER", "uwsgi", "SVC_SERVER"),
        ("SVC_READ_TIMEOUT", "0", "SVC_READ_TIMEOUT"),
        ("SVC_READ_TIMEOUT", "61", "SVC_READ_TIMEOUT"),
        ("SVC_QUOTA_WAIT_MS", "-1", "SVC_QUOTA_WAIT_MS"),
        ("SVC_QUOTA_WAIT_MS", "30001", "SVC_QUOTA_WAIT_MS"),
        ("SVC_QUOTA_HOLD_SECONDS", "29", "SVC_QUOTA_HOLD_SECONDS"),
        ("SVC_TENANT_WAIT_MS", "99", "SVC_TENANT_WAIT_MS"),
        ("SVC_TENANT_WAIT_MS", "60001", "SVC_TENANT_WAIT_MS"),
        ("SVC_QUOTA_HOLD_SECONDS", "５", "SVC_QUOTA_HOLD_SECONDS"),
    ],
)
def test_bad_values_name_the_setting(name: str, value: str, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config({name: value})
    assert needle in exc.value.message
    assert "\n" not in exc.value.message
