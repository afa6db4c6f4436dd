"""Where this project's own files are: the template, its configuration, the sample events
and the live view's front-end library. The local cloud itself never assumes them: a
template is deployed from its own folder (``CodeUri`` and ``DefinitionUri`` relative to
it, as SAM resolves them); these are the defaults the project's tools start from."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository: ``template.yaml``, ``samconfig.toml``, ``src/``, ``events/``."""
TEMPLATE_PATH: Final = ROOT / "template.yaml"
SAMCONFIG_PATH: Final = ROOT / "samconfig.toml"
EVENTS: Final = ROOT / "events"
HTMX: Final = ROOT / "node_modules" / "htmx.org" / "dist" / "htmx.min.js"
"""The live view's one library (``npm ci`` installs it; ``package-lock.json`` pins it)."""
