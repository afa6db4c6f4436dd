"""Deployment packages, and the one kind only the local cloud makes: "run me from source".

A from-source deploy (``make demo``, ``make serve``, the tests) creates its functions
through the Lambda API like any other, with a small zip that holds only
:data:`SOURCE_MARKER`, the path of the source folder (the template's ``CodeUri``, relative
to the template's folder). Whoever creates the function, the account runs what the
package says: the handler in-process from that folder, or the package's own code in a
worker process (:func:`localcloud.services.lambda_.runtime.registry.runnable`).
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Final

SOURCE_MARKER: Final = "localcloud-source.txt"


def source_package(folder: Path) -> bytes:
    """A package that says: run the handler in-process from ``folder``."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(SOURCE_MARKER, str(folder.resolve()))
    return archive.getvalue()


def source_of(package: bytes) -> Path | None:
    """The source folder a package names (:func:`source_package`), else ``None``."""
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as zipped:
            if zipped.namelist() != [SOURCE_MARKER]:
                return None
            return Path(zipped.read(SOURCE_MARKER).decode())
    except zipfile.BadZipFile:
        return None


def extract(package: bytes, prefix: str) -> Path:
    """Unzip a deployment package into a new folder (the task root).

    Raises:
        zipfile.BadZipFile: not a zip archive.
    """
    root = Path(tempfile.mkdtemp(prefix=f"localcloud-{prefix}-"))
    with zipfile.ZipFile(io.BytesIO(package)) as zipped:
        zipped.extractall(root)
    return root
