"""Every method of a library the local cloud does not own that it replaces, in one registry.

Each patch names the method it replaces, the signature it expects, and why
(:class:`~localcloud.patches.registry.Patch`); all are installed and uninstalled together
(:func:`install`, :func:`uninstall`, counted: the last local cloud to stop uninstalls),
and a moto upgrade that moves or changes one makes :func:`install` refuse, naming the
method, before anything is replaced; ``tests/localcloud/test_patches.py`` checks each one
by name. By service: :mod:`.lambda_` (the invoke API runs the functions, the control
plane, event source mappings), :mod:`.sqs` and :mod:`.stepfunctions` (refusals AWS makes
and moto does not), :mod:`.dynamodb` (atomic conditional writes), :mod:`.logs` (the
filter-pattern language), :mod:`.cloudformation` (application change sets),
:mod:`.botocore` (a hook around moto's answers, which fault injection sets).

May import: :mod:`localcloud.cfn`, :mod:`localcloud.sqs`, :mod:`localcloud.logs`,
:mod:`localcloud.lambda_runtime`.
"""

from __future__ import annotations

import threading
from typing import Final

from localcloud.patches import (
    botocore,
    cloudformation,
    dynamodb,
    lambda_,
    logs,
    sqs,
    stepfunctions,
)
from localcloud.patches.registry import Patch, PatchMismatch, Registry

REGISTRY: Final = Registry(
    [
        *lambda_.PATCHES,
        *sqs.PATCHES,
        *stepfunctions.PATCHES,
        *dynamodb.PATCHES,
        *logs.PATCHES,
        *cloudformation.PATCHES,
        *botocore.PATCHES,
    ],
    checks=[*stepfunctions.CHECKS, *logs.CHECKS],
)
_USERS = 0
_LOCK = threading.Lock()


def install() -> None:
    """Install every patch, for one more user (a local cloud starting).

    Raises:
        PatchMismatch: a replaced method moved or changed; nothing is installed.
    """
    global _USERS
    with _LOCK:
        if _USERS == 0:
            REGISTRY.install()
        _USERS += 1


def uninstall() -> None:
    """One user less; the last one puts every original back."""
    global _USERS
    with _LOCK:
        _USERS = max(0, _USERS - 1)
        if _USERS == 0:
            REGISTRY.uninstall()


__all__ = ["REGISTRY", "Patch", "PatchMismatch", "Registry", "install", "uninstall"]
