"""bench apps behind svc's granian front, as ``svc serve`` runs its own app.

granian factories (``granian --interface rsgi --factory bare_front:make``): ``make`` is the
bare werkzeug floor (``bare_app``), ``stubbed`` is ``stubbed_app``. The thread count and
body limit come from ``SVC_THREADS`` and ``SVC_MAX_BODY_BYTES`` like the real server.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from svc_server.http.front import BufferedFront

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication


def front(app: WSGIApplication) -> BufferedFront:
    return BufferedFront(
        app,
        threads=int(os.environ.get("SVC_THREADS", "4")),
        max_body_bytes=int(os.environ.get("SVC_MAX_BODY_BYTES", "1048576")),
        read_timeout=30,
    )


def make() -> BufferedFront:
    from bare_app import app

    return front(app)


def stubbed() -> BufferedFront:
    from stubbed_app import app

    return front(app)
