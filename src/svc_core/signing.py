"""``svc_core.signing``, the import path docs/library.md and examples/ give: the webhook signing functions
live in ``svc_core.webhooks.signing``, and this path names the same objects."""

from svc_core.webhooks.signing import *  # noqa: F403
from svc_core.webhooks.signing import __all__ as __all__
