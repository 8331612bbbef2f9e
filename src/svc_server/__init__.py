"""svc server: the WSGI adapter, stores, webhook delivery and the ``svc`` command."""

from svc_server.app import SvcApp, create_app
from svc_server.config import Config, load_config

__all__ = ["Config", "SvcApp", "create_app", "load_config"]
