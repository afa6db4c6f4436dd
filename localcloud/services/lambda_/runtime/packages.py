"""Deployment packages, and the one kind only the local cloud makes: "run me from source".

A from-source deploy (``make demo``, ``make serve``, the tests) creates its functions
through the Lambda API like any other, with a small zip that holds only
:data:`SOURCE_MARKER`, the path of the source folder (the template's ``CodeUri``, relative
to the template's folder). Whoever creates the function, the account runs what the
package says: the handler in-process from that folder, or the package's own code in
execution environments of its own (:func:`localcloud.services.lambda_.runtime.registry.runnable`).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
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


UNZIPPED_LIMIT: Final = 262_144_000
"""Lambda's quota on a function's unzipped deployment package, layers included (bytes)."""
_UNZIP_FAILED: Final = (
    "Could not unzip uploaded file. Please check your file, then try to upload again."
)


class PackageError(ValueError):
    """A deployment package Lambda would refuse: ``code`` is the API's error code
    (``InvalidParameterValueException``), ``str(error)`` its message."""

    def __init__(self, message: str, code: str = "InvalidParameterValueException") -> None:
        super().__init__(message)
        self.code = code


def extract(package: bytes, *, limit: int = UNZIPPED_LIMIT) -> Path:
    """Unzip a deployment package into a new folder (the task root), every entry inside it.

    Entries are counted as they are written, so a package that unzips past ``limit``
    (a zip bomb included) stops there, whatever its headers claim. An entry whose path is
    absolute or climbs out with ``..``, a symbolic link whose target is not inside the
    folder, or a file whose folder resolves outside it (a symlinked folder, then a file
    under it) refuses the package. Nothing is left behind on failure.

    Raises:
        PackageError: not a zip archive, an entry outside the folder, or past ``limit``.
    """
    root = Path(tempfile.mkdtemp(prefix="localcloud-function-")).resolve()
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as zipped:
            written = 0
            for info in zipped.infolist():
                written = _extract_entry(zipped, info, root, written, limit)
    except zipfile.BadZipFile as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise PackageError(_UNZIP_FAILED) from exc
    except (PackageError, OSError, RuntimeError, EOFError, zlib.error) as exc:
        shutil.rmtree(root, ignore_errors=True)
        if isinstance(exc, PackageError):
            raise
        raise PackageError(f"{_UNZIP_FAILED} ({type(exc).__name__}: {exc})") from exc
    return root


def _extract_entry(
    zipped: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path, written: int, limit: int
) -> int:
    """Write one entry under ``root``; the bytes written so far, this entry's included."""
    name = info.filename
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    if name.startswith(("/", "\\")) or ".." in parts or "\x00" in name or not parts:
        if not parts and info.is_dir():
            return written
        raise PackageError(f"{_UNZIP_FAILED} (entry {name!r} is outside the package's folder)")
    target = root.joinpath(*parts)
    mode = info.external_attr >> 16
    if info.is_dir():
        _inside(root, target, name).mkdir(parents=True, exist_ok=True)
        _inside(root, target.resolve(), name)
        return written
    target.parent.mkdir(parents=True, exist_ok=True)
    _inside(root, target.parent.resolve(), name)
    if stat.S_ISLNK(mode):
        link = zipped.read(info).decode("utf-8", "replace")
        written += len(link)
        destination = (target.parent / link).resolve()
        if Path(link).is_absolute() or not destination.is_relative_to(root):
            raise PackageError(
                f"{_UNZIP_FAILED} (symbolic link {name!r} points outside the package's folder)"
            )
        target.symlink_to(link)
        return written
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    permissions = 0o755 if mode & 0o111 else 0o644
    with zipped.open(info) as source, os.fdopen(os.open(target, flags, permissions), "wb") as out:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written >= limit:
                raise PackageError(f"Unzipped size must be smaller than {limit} bytes")
            out.write(chunk)
    return written


def _inside(root: Path, path: Path, name: str) -> Path:
    if not path.is_relative_to(root):
        raise PackageError(f"{_UNZIP_FAILED} (entry {name!r} is outside the package's folder)")
    return path
