"""Inputs the suite reads from outside the repository (issue 48): each has a name, a
folder beside the clone (``../shared/…``) and a variable that points elsewhere. A test
that needs one is marked ``@pytest.mark.outside("<name>")``; where the input is absent it
is not run (deselected). A test that reads an input where it is and a copy kept in the
repository where it is not names the input's ``fallback``. The run's header says once, by
name, which inputs were absent and what that changed. ``make test`` passes with or without them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT


@dataclass(frozen=True)
class Input:
    """An input kept outside the repository: ``variable`` names its folder, else ``default``."""

    name: str
    variable: str
    default: Path
    holds: str
    """What the folder holds: the glob of a file that proves it is there."""
    fallback: str = ""
    """Where the tests that read the input read instead when it is absent (none: the
    tests that need it are marked ``outside`` and not run)."""

    @property
    def folder(self) -> Path:
        return Path(os.environ.get(self.variable) or self.default)

    def present(self) -> bool:
        return any(self.folder.glob(self.holds))


INPUTS = {
    each.name: each
    for each in (
        Input("sam-samples", "SAMPLES", ROOT.parent / "shared" / "sam-samples", "*/template.y*ml"),
        Input(
            "labs",
            "LAB_TEXTS",
            ROOT.parent / "shared" / "labs",
            "*.zh.txt",
            fallback="tests/fixtures/labs/ (the labs' command blocks, copied)",
        ),
    )
}
"""The SAM CLI's sample apps (``make samples``) and the seed labs' text (``make lab``)."""


def header() -> list[str]:
    """The run header's lines, one per input: where it was found, or that it is absent,
    how to point at it, and that the tests needing it are not run."""
    lines = []
    for each in INPUTS.values():
        if each.present():
            lines.append(f"outside input {each.name}: {each.folder}")
        else:
            consequence = (
                f"its tests read {each.fallback} instead"
                if each.fallback
                else f'the tests marked outside("{each.name}") are not run'
            )
            lines.append(
                f"outside input {each.name} absent: no {each.holds} in {each.folder} "
                f"({each.variable}=<folder> points elsewhere); {consequence}"
            )
    return lines
