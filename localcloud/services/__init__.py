"""The services the local cloud runs, one folder each (as LocalStack's ``services/<svc>/``):
each holds that service's CloudFormation providers, its moto patches and its behaviour,
and its ``__init__`` says what the service brings in ``SERVICE``
(:class:`~localcloud.services.service.Service`).

========================  ===============================================================
:mod:`.lambda_`           the runtime and execution environments, the Lambda API, event
                          source mappings
:mod:`.sqs`               queues, the SQS poller of event source mappings, redrive
:mod:`.dynamodb`          tables, atomic conditional writes and their write records
:mod:`.stepfunctions`     state machines, the refusals AWS makes
:mod:`.logs`              log groups and queries, delivery, the filter-pattern language
:mod:`.iam`               roles and their policies
:mod:`.cloudwatch`        alarms and dashboards
:mod:`.sns`, :mod:`.kms`  topics and subscriptions, keys
:mod:`.events`            rules
:mod:`.s3`                buckets
:mod:`.kinesis`           data streams
:mod:`.apigateway`        REST and HTTP APIs: Lambda proxy and AWS service integrations
:mod:`.osis`              OpenSearch Ingestion: its pipeline configurations refused as it
                          refuses them
========================  ===============================================================

This module is the registry: the built-in services, and any a project or a test adds
(:func:`register`, :func:`registered`; :func:`load` reads one from a folder of its own).
From them come the providers the CloudFormation engine is handed (:func:`providers`), the
one patch registry (:func:`patch_registry`, installed and uninstalled together by
:func:`install` and :func:`uninstall`, counted: the last local cloud to stop uninstalls;
``localcloud/tests/test_patches.py`` checks each patch by name), the event source
pollers Lambda's mappings use (:func:`event_sources`), and the services' lifecycle, which
an account starts and stops (:func:`start`, :func:`stop`).

May import: each service, the CloudFormation engine (its API's patches), the patch
registry.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from localcloud.cloudformation import api as cloudformation_api
from localcloud.cloudformation import api_templates as cloudformation_templates
from localcloud.cloudformation.provider import Provider
from localcloud.patches import activity, botocore, globs, yaml_documents
from localcloud.patches.registry import Patch, PatchMismatch, Registry
from localcloud.services import (
    apigateway,
    cloudwatch,
    dynamodb,
    events,
    iam,
    kinesis,
    kms,
    lambda_,
    logs,
    osis,
    s3,
    sns,
    sqs,
    stepfunctions,
)
from localcloud.services.service import Service

BUILT_IN: Final = (
    lambda_.SERVICE,
    sqs.SERVICE,
    stepfunctions.SERVICE,
    dynamodb.SERVICE,
    logs.SERVICE,
    iam.SERVICE,
    cloudwatch.SERVICE,
    sns.SERVICE,
    kms.SERVICE,
    events.SERVICE,
    s3.SERVICE,
    kinesis.SERVICE,
    apigateway.SERVICE,
    osis.SERVICE,
)
"""The services every local account runs."""
CORE_PATCHES: Final = (
    *cloudformation_api.PATCHES,
    *cloudformation_templates.PATCHES,
    *botocore.PATCHES,
    *activity.PATCHES,
    *yaml_documents.PATCHES,
    *globs.PATCHES,
)
"""The patches of no one service: the CloudFormation API (application change sets, the
engine's), the hook around moto's answer to every request, the count of changing
requests the live view's watcher waits for, the bound on every YAML document's
aliases, and EC2's filter wildcards matched as wildcards."""

_ADDED: list[Service] = []
_LOCK = threading.RLock()
_USERS = 0
_REGISTRY: Registry | None = None


def services() -> tuple[Service, ...]:
    """The built-in services and those added, in that order."""
    with _LOCK:
        return (*BUILT_IN, *_ADDED)


def register(service: Service) -> None:
    """Add ``service`` to every local account started from now on.

    Raises:
        RuntimeError: a local cloud runs now (its patches are installed).
        ValueError: a service of that name, a provider of one of its types, or a patch
            of one of its methods, is there.
    """
    global _REGISTRY
    with _LOCK:
        if _USERS:
            raise RuntimeError("stop every local cloud before adding a service")
        if any(known.name == service.name for known in services()):
            raise ValueError(f"a service named {service.name} is registered already")
        known_types = set(providers())
        for provider in service.providers:
            if provider.TYPE in known_types:
                raise ValueError(f"{provider.TYPE} has a provider already")
        patched = {(id(p.owner), p.name) for s in services() for p in s.patches}
        patched.update((id(p.owner), p.name) for p in CORE_PATCHES)
        for patch in service.patches:
            if (id(patch.owner), patch.name) in patched:
                raise ValueError(f"{patch.where} is patched already")
        _ADDED.append(service)
        _REGISTRY = None


def unregister(service: Service) -> None:
    """Take an added service away (a built-in one cannot be).

    Raises:
        RuntimeError: a local cloud runs now.
    """
    global _REGISTRY
    with _LOCK:
        if _USERS:
            raise RuntimeError("stop every local cloud before removing a service")
        if service in _ADDED:
            _ADDED.remove(service)
            _REGISTRY = None


@contextlib.contextmanager
def registered(service: Service) -> Iterator[Service]:
    """``service`` registered for the block (:func:`register`, then :func:`unregister`)."""
    register(service)
    try:
        yield service
    finally:
        unregister(service)


def load(folder: Path) -> Service:
    """The ``SERVICE`` of a service folder of a project's own (a package: an
    ``__init__.py`` defining ``SERVICE``), imported once per folder, under a module name
    of its own (two folders of the same name are two services).

    Raises:
        ImportError: the folder is no package (no ``__init__.py``).
        TypeError: it defines no ``SERVICE``.
        Exception: whatever its ``__init__.py`` raised (nothing of it stays imported).
    """
    path = folder.resolve()
    if not (path / "__init__.py").is_file():
        raise ImportError(f"{folder} is no package: it has no __init__.py")
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"localcloud_service_{path.name}_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
        if spec is None or spec.loader is None:  # pragma: no cover - an existing .py file
            raise ImportError(f"{folder}/__init__.py cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            for loaded in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
                del sys.modules[loaded]
            raise
    service = getattr(module, "SERVICE", None)
    if not isinstance(service, Service):
        raise TypeError(f"{folder}/__init__.py defines no SERVICE")
    return service


def providers() -> dict[str, Provider]:
    """The provider of every type the services deploy, by CloudFormation type."""
    return {provider.TYPE: provider for service in services() for provider in service.providers}


def event_sources() -> dict[str, Callable[..., Any]]:
    """The event source pollers the services offer Lambda, by source service name."""
    return {name: make for service in services() for name, make in service.event_sources.items()}


def start() -> None:
    """Every service's ``on_start``, in order: an account starts."""
    for service in services():
        if service.on_start is not None:
            service.on_start()


def stop() -> list[str]:
    """Every service's ``on_stop``, in the reverse of their order: an account stops. The
    lines they say, one per thing each stopped."""
    said: list[str] = []
    for service in reversed(services()):
        if service.on_stop is not None:
            said.extend(service.on_stop())
    return said


def patch_registry() -> Registry:
    """The one registry of every patch: the core ones and each service's."""
    global _REGISTRY
    with _LOCK:
        if _REGISTRY is None:
            _REGISTRY = Registry(
                [*CORE_PATCHES, *(patch for s in services() for patch in s.patches)],
                checks=[check for s in services() for check in s.checks],
            )
        return _REGISTRY


def install() -> None:
    """Install every patch, for one more user (a local cloud starting).

    Raises:
        PatchMismatch: a replaced method moved or changed; nothing is installed.
    """
    global _USERS
    with _LOCK:
        if _USERS == 0:
            patch_registry().install()
        _USERS += 1


def uninstall() -> None:
    """One user less; the last one puts every original back."""
    global _USERS
    with _LOCK:
        _USERS = max(0, _USERS - 1)
        if _USERS == 0:
            patch_registry().uninstall()


__all__ = [
    "BUILT_IN",
    "CORE_PATCHES",
    "Patch",
    "PatchMismatch",
    "Registry",
    "Service",
    "event_sources",
    "install",
    "load",
    "patch_registry",
    "providers",
    "register",
    "registered",
    "services",
    "start",
    "stop",
    "uninstall",
    "unregister",
]
