"""The account's event source mappings: one poller for every mapping of the Lambda API,
whoever created it (a template, ``sam deploy``, ``aws lambda
create-event-source-mapping``), made by the service its source belongs to.

Each service that offers Lambda an event source gives a poller factory for the service
name of its ARNs (``arn:aws:sqs:…`` is ``sqs``; the SQS service's is
:func:`localcloud.services.sqs.poller.from_mapping`); the account hands them in with
:class:`Account`. The patched ``CreateEventSourceMapping`` hands each new mapping here
(:func:`created`) and ``DeleteEventSourceMapping`` takes it away (:func:`deleted`); each
poll reads the mapping back from the Lambda API first (its state, batch size, response
types and function), so ``update-event-source-mapping`` takes effect at once. In server
mode every poller runs in a thread of its own (:func:`start`); in-process,
:meth:`localcloud.account.LocalCloud.drain` polls them in turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from localcloud.services.lambda_.runtime import Function, lookup
from localcloud.text import say

ClientFactory = Callable[[str], Any]


class Poller(Protocol):
    """One mapping's poller, as a source service makes it."""

    uuid: str | None
    deleted: bool

    @property
    def enabled(self) -> bool:
        """Whether the mapping is enabled, as its last poll read it."""
        ...

    def poll_once(self) -> Any:
        """Read one batch (of a queue; of each shard of a stream) and invoke the function
        with it; the outcome says whether an invocation happened (``outcome.invocation``)."""
        ...

    def start(self, idle_wait_seconds: float = 0.2) -> None:
        """Poll in a thread of its own until :meth:`stop`."""
        ...

    def stop(self) -> None: ...


PollerFactory = Callable[["Account", Mapping[str, Any], Function], Poller]
"""(the account, the mapping as ``GetEventSourceMapping`` returns it, the function) →
its poller."""


@dataclass(frozen=True)
class Account:
    """How pollers reach the account: its clients and region, the poller factory of each
    source service, and whether they poll in the background (server mode) and how long
    they wait when a source is empty."""

    client: ClientFactory
    region: str
    sources: Mapping[str, PollerFactory] = field(default_factory=dict)
    background: bool = False
    idle_wait_s: float = 0.2


_ACCOUNT: Account | None = None
_POLLERS: dict[str, Poller] = {}
_GONE: dict[str, Poller] = {}
"""Pollers of mappings deleted since the account started (a stack still names them)."""
_LOCK = threading.Lock()


def serve(account: Account | None) -> None:
    """Poll the mappings of ``account`` from now on (``None``: stop every poller)."""
    global _ACCOUNT
    with _LOCK:
        _ACCOUNT = account
        stopping = list(_POLLERS.values()) if account is None else []
        if account is None:
            _POLLERS.clear()
            _GONE.clear()
    for poller in stopping:
        poller.stop()


def polled_services() -> frozenset[str]:
    """The services whose sources the served account polls (``sqs`` …)."""
    account = _ACCOUNT
    return frozenset(account.sources) if account is not None else frozenset()


def created(config: Mapping[str, Any]) -> Poller | None:
    """A mapping was created: poll it, if its source is one the account polls in its own
    region. Any other mapping is said once and left alone (``None``)."""
    account = _ACCOUNT
    if account is None:
        return None
    uuid = str(config["UUID"])
    source = str(config.get("EventSourceArn", ""))
    parts = source.split(":")
    service = parts[2] if len(parts) > 3 else ""
    factory = account.sources.get(service)
    if factory is None or parts[3] != account.region:
        polled = ", ".join(sorted(account.sources)) or "none"
        say(
            f"[event source mapping {uuid}] {source} -> {config.get('FunctionArn')}: the "
            f"local cloud polls sources of this region only, of these services: {polled}; "
            "not polled"
        )
        return None
    try:
        function = lookup(str(config.get("FunctionArn", "")))
    except KeyError:
        return None  # moto refuses a mapping to a function it does not have
    poller = factory(account, config, function)
    with _LOCK:
        _POLLERS[uuid] = poller
    if account.background:
        poller.start(idle_wait_seconds=account.idle_wait_s)
    return poller


def deleted(uuid: str) -> None:
    """A mapping was deleted: its poller stops."""
    with _LOCK:
        poller = _POLLERS.pop(uuid, None)
        if poller is not None:
            _GONE[uuid] = poller
    if poller is not None:
        poller.deleted = True
        poller.stop()


def get(uuid: str) -> Poller:
    """The poller of mapping ``uuid``, a deleted one's too (marked ``deleted``) while the
    account runs (``KeyError`` if none)."""
    with _LOCK:
        return _POLLERS[uuid] if uuid in _POLLERS else _GONE[uuid]


def pollers() -> list[Poller]:
    """Every poller of the account, in creation order."""
    with _LOCK:
        return list(_POLLERS.values())


def start(idle_wait_s: float = 0.2) -> None:
    """Server mode: poll every mapping in the background from now on, waiting
    ``idle_wait_s`` seconds after a poll that found its source empty."""
    global _ACCOUNT
    with _LOCK:
        if _ACCOUNT is not None:
            _ACCOUNT = Account(
                _ACCOUNT.client, _ACCOUNT.region, _ACCOUNT.sources, True, idle_wait_s
            )
        account, current = _ACCOUNT, list(_POLLERS.values())
    if account is not None:
        for poller in current:
            poller.start(idle_wait_seconds=account.idle_wait_s)
