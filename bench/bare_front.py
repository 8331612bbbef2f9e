"""The bare werkzeug floor (``bare_app``) behind svc's granian front, as ``svc serve`` runs it.

granian factory: ``granian --interface rsgi --factory bare_front:make``. The thread count
and body limit come from ``SVC_THREADS`` and ``SVC_MAX_BODY_BYTES`` like the real server.
"""

from __future__ import annotations

import os

from bare_app import app

from svc_server.http.front import BufferedFront


def make() -> BufferedFront:
    return BufferedFront(
        app,
        threads=int(os.environ.get("SVC_THREADS", "4")),
        max_body_bytes=int(os.environ.get("SVC_MAX_BODY_BYTES", "1048576")),
        read_timeout=30,
    )
