"""``python -m svc_server`` is the ``svc`` command."""

import sys

from svc_server.cli import main

sys.exit(main())
