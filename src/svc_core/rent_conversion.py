"""``svc_core.rent_conversion``, the import path docs/library.md and examples/ give: the rent-to-deposit conversion
live in ``svc_core.realestate.rent_conversion``, and this path names the same objects."""

from svc_core.realestate.rent_conversion import *  # noqa: F403
from svc_core.realestate.rent_conversion import __all__ as __all__
