"""The mechanism: a patch names the method it replaces and the signature it expects; a
registry installs and uninstalls all of its patches together, and refuses to install any
if one of them no longer fits (a moto upgrade moved or changed a method).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Method = Callable[..., Any]


class PatchMismatch(RuntimeError):
    """A replaced method is missing or takes other parameters than its patch expects: the
    library changed. The message names the method."""


@dataclass(frozen=True)
class Patch:
    """Replace ``owner.name`` with ``make(original)``.

    Args:
        owner: the class (or module) that defines the method itself (not a parent).
        name: the method's name.
        parameters: the parameter names the original must take, in order: all of them
            when the replacement takes fixed parameters, the leading ones when it passes
            ``*args``/``**kwargs`` through.
        make: builds the replacement from the original (which it may call).
        why: one line: what the local cloud needs that the original does not do.
    """

    owner: Any
    name: str
    parameters: tuple[str, ...]
    make: Callable[[Method], Method]
    why: str

    @property
    def where(self) -> str:
        """``module.Class.method``: the method as its library names it."""
        owner = self.owner
        qualname = getattr(owner, "__qualname__", getattr(owner, "__name__", str(owner)))
        module = getattr(owner, "__module__", None)
        prefix = f"{module}." if module and not inspect.ismodule(owner) else ""
        return f"{prefix}{qualname}.{self.name}"

    def problem(self) -> str | None:
        """Why this patch no longer fits its method, or ``None``."""
        method = vars(self.owner).get(self.name)
        if not callable(method):
            return f"{self.where} is missing (it must be defined on {self.owner!r} itself)"
        try:
            found = tuple(inspect.signature(_function(method)).parameters)
            made = _function(self.make(method))
            replacement = inspect.signature(made, follow_wrapped=False).parameters.values()
        except (TypeError, ValueError):
            return f"{self.where} has no signature to check"
        passes_through = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in replacement)
        if passes_through:
            found = found[: len(self.parameters)]
        if found != self.parameters:
            return f"{self.where} takes {found}, the patch expects {self.parameters}"
        return None


def _function(method: Any) -> Any:
    """The function behind a ``staticmethod`` or ``classmethod`` (a static method is
    patched with a static method), else ``method``."""
    return method.__func__ if isinstance(method, staticmethod | classmethod) else method


class Registry:
    """Every patch of the local cloud, installed and uninstalled together."""

    def __init__(self, patches: Sequence[Patch], *, checks: Sequence[Callable[[], None]] = ()):
        self.patches = tuple(patches)
        self._checks = tuple(checks)
        self._originals: dict[tuple[int, str], Method] = {}
        self._lock = threading.RLock()
        seen = {(id(p.owner), p.name) for p in self.patches}
        if len(seen) != len(self.patches):
            raise ValueError("two patches replace the same method")

    def install(self) -> None:
        """Install every patch (idempotent).

        Raises:
            PatchMismatch: naming the first method that no longer fits; nothing is
                installed.
        """
        with self._lock:
            if self.installed():
                return
            for patch in self.patches:
                problem = patch.problem()
                if problem is not None:
                    raise PatchMismatch(f"moto changed: {problem}; {patch.why}")
            for check in self._checks:
                check()
            try:
                for patch in self.patches:
                    original = vars(patch.owner)[patch.name]
                    replacement = patch.make(original)
                    self._originals[(id(patch.owner), patch.name)] = original
                    setattr(patch.owner, patch.name, replacement)
            except BaseException:
                self.uninstall()  # all or nothing
                raise

    def uninstall(self) -> None:
        """Put every original back."""
        with self._lock:
            for patch in reversed(self.patches):
                key = (id(patch.owner), patch.name)
                if key in self._originals:
                    setattr(patch.owner, patch.name, self._originals.pop(key))

    def installed(self) -> bool:
        with self._lock:
            return len(self._originals) == len(self.patches)

    def original(self, owner: Any, name: str) -> Method:
        """The library's own method behind a patch.

        Raises:
            KeyError: that method is not patched now.
        """
        with self._lock:
            return self._originals[(id(owner), name)]
