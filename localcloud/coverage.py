"""What the local cloud runs, generated from its code as moto's implementation coverage is
generated from moto's: for each service (its :class:`~localcloud.services.service.Service`),
the CloudFormation types its providers deploy and the properties each accepts (any other
is refused by name at deploy), the emulator methods it replaces and why (from the one
patch registry), the event sources it offers Lambda, and the API surfaces it runs;
then the core patches that belong to no service.

``python -m localcloud coverage`` prints the page; ``--write PATH`` writes it;
``tests/package/test_coverage_page.py`` fails when docs/local-cloud-coverage.md is not
what this module writes now.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from localcloud import services
from localcloud.patches.registry import Patch

__all__ = ["PAGE", "render"]

PAGE: Final = "docs/local-cloud-coverage.md"
"""Where the page lives, from the repository's root."""


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _patches(patches: Iterable[Patch]) -> list[str]:
    rows = ["| Method replaced | Why |", "| --- | --- |"]
    rows += [f"| `{p.where}` | {_cell(p.why)} |" for p in sorted(patches, key=lambda p: p.where)]
    return rows


def render() -> str:
    """The coverage page, Markdown, as it is for the code of this checkout."""
    lines = [
        "# What the local cloud runs",
        "",
        "Generated from the code by `python -m localcloud coverage --write "
        f"{PAGE}` (`localcloud/coverage.py`); a test fails when it is stale. Each service's "
        "CloudFormation types with the properties their providers accept (a property not "
        "listed is refused by name at deploy), the emulator (moto) methods it replaces and "
        "why, the event sources it offers Lambda, and the API surfaces it runs. What differs "
        "from AWS is in [local-cloud.md](local-cloud.md).",
        "",
    ]
    for service in sorted(services.services(), key=lambda s: s.name):
        lines += [f"## {service.name}", ""]
        if service.providers:
            lines += ["| CloudFormation type | Properties accepted |", "| --- | --- |"]
            for provider in sorted(service.providers, key=lambda p: p.TYPE):
                accepted = ", ".join(f"`{name}`" for name in sorted(provider.PROPERTIES))
                lines.append(f"| `{provider.TYPE}` | {accepted or '(none)'} |")
            lines.append("")
        if service.patches:
            lines += [*_patches(service.patches), ""]
        if service.event_sources:
            sources = ", ".join(f"`{name}`" for name in sorted(service.event_sources))
            lines += [f"Event sources (event source mappings from): {sources}.", ""]
        if service.surfaces:
            lines += ["Runs:", "", *[f"- {_cell(surface)}" for surface in service.surfaces], ""]
    lines += ["## Core (no one service)", "", *_patches(services.CORE_PATCHES), ""]
    return "\n".join(lines)
