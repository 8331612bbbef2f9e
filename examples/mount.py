"""Mount svc under /data beside another WSGI application.

python examples/mount.py      # then GET http://127.0.0.1:8002/data/api/status
"""

from __future__ import annotations

import os

from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import run_simple
from werkzeug.wrappers import Request, Response

from svc_server import create_app, load_config


@Request.application
def home(request: Request) -> Response:
    return Response("the host application\n", mimetype="text/plain")


def build() -> DispatcherMiddleware:
    """The host app at /, svc at /data (its routes keep their own paths below it)."""
    config = load_config(os.environ)
    return DispatcherMiddleware(home, {"/data": create_app(config)})


if __name__ == "__main__":
    run_simple("127.0.0.1", 8002, build())
