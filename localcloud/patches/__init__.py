"""Replacing methods of a library the local cloud does not own, the one shared mechanism:
a patch names the method it replaces, the signature it expects and why, and a registry
installs and uninstalls its patches together, refusing to install any when one no longer
fits (:mod:`.registry`). Each service keeps its own patches in its folder; the services'
registry (:mod:`localcloud.services`) builds the one registry of them all. The hook
around moto's answer to every request belongs to no one service (:mod:`.botocore`), nor
does the bound on every YAML document's aliases (:mod:`.yaml_documents`); and the one
way the services evaluate a caller's JSONPath, bounded, is here for them all
(:mod:`.jsonpath`).

May import: :mod:`localcloud.text`.
"""

from localcloud.patches.registry import Method, Patch, PatchMismatch, Registry

__all__ = ["Method", "Patch", "PatchMismatch", "Registry"]
