"""``svc_core.stats``, the import path docs/library.md and examples/ give: the cohort statistics
live in ``svc_core.cohorts.stats``, and this path names the same objects."""

from svc_core.cohorts.stats import *  # noqa: F403
from svc_core.cohorts.stats import __all__ as __all__
