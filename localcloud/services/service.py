"""What a service of the local cloud is: one folder under ``localcloud/services/`` (or a
project's own) whose ``__init__`` defines ``SERVICE``, a :class:`Service` naming what the
service brings to the account: the CloudFormation providers of its types, the moto
methods it replaces (through the one patch registry), the checks that must hold before
they are installed, the event sources it offers Lambda, and what it does when an account
starts and stops (its lifecycle hooks, as LocalStack's services have theirs): the account
calls the hooks, never a service's internals by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localcloud.cloudformation.provider import Provider
from localcloud.patches.registry import Patch


@dataclass(frozen=True)
class Service:
    """One service's contribution to the account.

    Args:
        name: the service's name in ARNs and endpoints (``sqs``, ``lambda``).
        providers: one per CloudFormation type it deploys (``AWS::SQS::Queue`` …).
        patches: the moto methods it replaces, each with the signature it expects.
        checks: called before any patch is installed; each raises
            :class:`~localcloud.patches.registry.PatchMismatch` when what the patches rely
            on moved in moto.
        event_sources: the event source mapping pollers it offers Lambda, by the service
            name of their source ARNs (:data:`localcloud.services.lambda_.
            event_source_mappings.PollerFactory`).
        surfaces: what else it runs, one line each, for the coverage page
            (:mod:`localcloud.coverage`): API Gateway's integration kinds, say.
        on_start: called when an account starts, before anything of it runs: forget what
            an earlier account of this process left (Lambda's functions).
        on_stop: called when an account stops, services in the reverse of their order
            (Step Functions' executions stop before Lambda's environments go): stop what
            still runs; one line per thing it stopped, for the terminal.
    """

    name: str
    providers: tuple[Provider, ...] = ()
    patches: tuple[Patch, ...] = ()
    checks: tuple[Callable[[], None], ...] = ()
    event_sources: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    surfaces: tuple[str, ...] = ()
    on_start: Callable[[], None] | None = None
    on_stop: Callable[[], Iterable[str]] | None = None
