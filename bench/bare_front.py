"""bench apps behind svc's granian front, as ``svc serve`` runs its own app.

granian factories (``granian --interface rsgi --factory bare_front:make``): ``make`` is the
bare werkzeug floor (``bare_app``), ``stubbed`` is ``stubbed_app``, ``constant_lane`` is
``svc serve``'s own front and app with a warm lane that sends its first answer again for
every call (``bench/loops.py``: what the lane's own work costs). The thread count and
body limit come from ``SVC_THREADS`` and ``SVC_MAX_BODY_BYTES`` like the real server.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from svc_server.servers.front import BufferedFront

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


def constant_lane() -> BufferedFront:
    from svc_server.commands.core import granian_app

    front: BufferedFront = granian_app()
    lane = front.lane
    assert lane is not None
    kept: list[Any] = []

    def constant(environ: dict[str, Any]) -> Any:
        if not kept:  # the first warm answer, kept; calls before it go the real way
            answer = lane(environ)
            if answer is None:
                return None
            kept.append(answer)
        return kept[0]

    front.lane = constant
    return front
