"""The floor for bench/http_bench.py: a bare werkzeug app returning a fixed body.

The body is read once from the file named by SVC_BENCH_BODY (the pulse response
captured from svc), so both servers send the same number of bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from werkzeug.wrappers import Request, Response

BODY = Path(os.environ["SVC_BENCH_BODY"]).read_bytes()


@Request.application
def app(request: Request) -> Response:
    return Response(BODY, mimetype="application/json")
