"""Who may talk to the local server: the ``Host`` names it answers for and the origins
whose pages may call it cross-origin (:class:`Policy`); :class:`~localcloud.server.guard.
Guard` applies it.

May import: nothing of the local cloud.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["LOOPBACK_NAMES", "Policy"]

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True)
class Policy:
    """Who may talk to the server.

    Args:
        port: the port the server listens on; every allowed ``Host`` carries it.
        hosts: host names (lower case, IPv6 in brackets) the server answers for, each
            optionally ``name:port`` for a name reached through another port.
        origins: origins (``scheme://host[:port]``) allowed to call cross-origin.
    """

    port: int
    hosts: frozenset[str]
    origins: frozenset[str] = frozenset()
    _reported: set[str] = field(default_factory=set, compare=False, repr=False)

    @classmethod
    def for_server(
        cls,
        bound: str,
        port: int,
        *,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> Policy:
        """The default policy of a server bound to ``bound:port``, widened by the user.

        Raises:
            ValueError: an ``--allow-origin`` that is not ``scheme://host[:port]``.
        """
        bound_name = f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound
        hosts = {*LOOPBACK_NAMES, bound_name.lower(), *(h.strip().lower() for h in allow_hosts)}
        origins = set()
        for origin in allow_origins:
            normalised = origin.strip().rstrip("/").lower()
            if not re.fullmatch(r"https?://[^/\s]+", normalised):
                raise ValueError(
                    f"--allow-origin {origin!r}: an origin is scheme://host[:port], "
                    "for example http://localhost:3000"
                )
            origins.add(normalised)
        return cls(port=port, hosts=frozenset(hosts), origins=frozenset(origins))

    def allowed_hosts(self) -> list[str]:
        """Every ``Host`` value accepted, as the server prints them."""
        shown = [h if _has_port(h) else f"{h}:{self.port}" for h in sorted(self.hosts)]
        return [*shown, f"*.localhost:{self.port}"]

    def host_allowed(self, host: str | None) -> bool:
        """Whether a ``Host`` header names this server (a name of :attr:`hosts`, or a
        subdomain of ``localhost``, which browsers resolve to loopback and never ask
        DNS for: S3's virtual-hosted style, ``bucket.localhost:5000``)."""
        if not host:
            return False
        host = host.strip().lower()
        if host in self.hosts:  # an --allow-host given with its own port
            return _has_port(host)
        name, separator, port = host.rpartition(":")
        if not separator or port != str(self.port) or _has_port(name):
            return False
        return name in self.hosts or name.endswith(".localhost")

    def own_origin(self, origin: str, host: str | None) -> bool:
        """Whether ``origin`` is this server as the request reached it (same-origin)."""
        return bool(host) and origin.lower() == f"http://{str(host).lower()}"


def _has_port(host: str) -> bool:
    return bool(re.search(r":\d+$", host)) and not host.endswith("]")
