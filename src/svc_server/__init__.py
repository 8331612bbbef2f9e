"""svc server: the WSGI adapter, stores, webhook delivery and the ``svc`` command.

The names below are imported when first used, not with the package: ``svc --version``
and ``svc --help`` import ``svc_server.cli`` and none of the server."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svc_server.app import SvcApp, create_app
    from svc_server.config import Config, load_config

__all__ = ["Config", "SvcApp", "create_app", "load_config"]

_HOMES = {
    "SvcApp": "svc_server.app",
    "create_app": "svc_server.app",
    "Config": "svc_server.config",
    "load_config": "svc_server.config",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'svc_server' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
