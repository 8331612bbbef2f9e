"""Whether another program listens on a TCP port: the check ``svc serve`` and
``python3 dev.py demo`` make before they start.

granian listens with ``SO_REUSEPORT``: started on a port a second server (svc or not)
already shares that way, the kernel would split connections between the two. A probe
socket without it cannot bind while any other socket listens there; ``SO_REUSEADDR``
keeps a just-stopped server's connections in TIME_WAIT from counting as "in use".

Standard library only: ``dev.py`` loads this file by its path before anything is
installed.
"""

from __future__ import annotations

import errno
import socket


def port_in_use(host: str, port: int) -> bool:
    """True when another program listens on ``host:port``. ``OSError`` when the host
    cannot be resolved or the port cannot be bound for another reason."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return True
            raise
    return False
