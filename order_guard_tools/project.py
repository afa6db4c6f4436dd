"""Where Order Guard's own files are: the SAM application the tools deploy (the template,
its samconfig, the sample events) and the stack name they deploy it as. The local cloud
never assumes them: a template is deployed from its own folder (``CodeUri`` and
``DefinitionUri`` relative to it, as SAM resolves them)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository: ``template.yaml``, ``samconfig.toml``, ``src/``, ``events/``."""
TEMPLATE_PATH: Final = ROOT / "template.yaml"
SAMCONFIG_PATH: Final = ROOT / "samconfig.toml"
EVENTS: Final = ROOT / "events"
STACK_NAME: Final = "order-guard"
"""The stack the tools deploy locally (samconfig's default ``stack_name``)."""
