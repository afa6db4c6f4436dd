"""One provider per CloudFormation type the local cloud deploys: each file of this
package defines ``PROVIDER`` for its type (create, update in place, delete, and whether an
update keeps it), and :data:`PROVIDERS` finds them all. Adding a type is one new file
here, and its test.

May import: :mod:`localcloud.lambda_runtime`, :mod:`localcloud.sqs`, and
:mod:`localcloud.cfn`'s lower modules (exceptions, transform).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Final

from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.resources.base import Provider


def _discover() -> dict[str, Provider]:
    found: dict[str, Provider] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        provider = getattr(module, "PROVIDER", None)
        if not isinstance(provider, Provider):
            raise TypeError(f"{module.__name__} defines no PROVIDER")
        if provider.TYPE in found:
            raise TypeError(f"two providers for {provider.TYPE}")
        found[provider.TYPE] = provider
    return found


PROVIDERS: Final = _discover()
"""Every provider, by CloudFormation type."""


def provider(resource_type: str, logical_id: str) -> Provider:
    """The provider of a type.

    Raises:
        UnsupportedTemplate: ``<logical id>.Type``: the local cloud does not deploy it.
    """
    try:
        return PROVIDERS[resource_type]
    except KeyError:
        raise UnsupportedTemplate(
            f"{logical_id}.Type", f"{resource_type} is not supported locally"
        ) from None


__all__ = ["PROVIDERS", "Provider", "provider"]
