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
from collections.abc import Sequence
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


class TooLarge(PackageError):
    """A package (or a function with its layers) that unzips past the limit."""


def extract(package: bytes, *, limit: int = UNZIPPED_LIMIT) -> Path:
    """Unzip a deployment package into a new folder (the task root), every entry inside it.

    Files and folders are written first, while the folder holds no symbolic link, so no
    write can follow one out; entries are counted as they are written, so a package that
    unzips past ``limit`` (a zip bomb included) stops there, whatever its headers claim.
    The symbolic links come last, and each must resolve inside the folder once all are
    made (a link can change where another one points). An entry whose path is absolute or
    climbs out with ``..``, or a link that ends up outside, refuses the package; nothing
    is left behind on failure.

    Raises:
        PackageError: not a zip archive, an entry outside the folder, or past ``limit``.
    """
    root = Path(tempfile.mkdtemp(prefix="localcloud-function-")).resolve()
    try:
        _extract_into(package, root, limit)
    except PackageError:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return root


def _extract_into(package: bytes, root: Path, limit: int) -> int:
    """Unzip ``package`` into the existing folder ``root`` (see :func:`extract`): the bytes
    written.

    Raises:
        PackageError: as :func:`extract`; what was written stays (the caller removes it).
    """
    written = 0
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as zipped:
            links: list[tuple[zipfile.ZipInfo, Path]] = []
            for info in zipped.infolist():
                target = _target(root, info.filename)
                if target is None:
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    links.append((info, target))
                    continue
                written = _write(zipped, info, target, written, limit)
            for info, target in links:
                link = zipped.read(info).decode("utf-8", "replace")
                written += len(link)
                # where it goes, and where it points, as the links made so far resolve
                if (
                    Path(link).is_absolute()
                    or not target.parent.resolve().is_relative_to(root)
                    or not (target.parent / link).resolve().is_relative_to(root)
                ):
                    raise PackageError(
                        f"{_UNZIP_FAILED} (symbolic link {info.filename!r} points outside the "
                        "package's folder)"
                    )
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(link)
            for info, target in links:  # a later link can move where an earlier one points
                if Path(os.readlink(target)).is_absolute() or not target.resolve().is_relative_to(
                    root
                ):
                    raise PackageError(
                        f"{_UNZIP_FAILED} (symbolic link {info.filename!r} points outside the "
                        "package's folder)"
                    )
    except zipfile.BadZipFile as exc:
        raise PackageError(_UNZIP_FAILED) from exc
    except PackageError:
        raise
    except (OSError, RuntimeError, EOFError, zlib.error) as exc:
        raise PackageError(f"{_UNZIP_FAILED} ({type(exc).__name__}: {exc})") from exc
    return written


MAX_LAYERS: Final = 5
"""The most layers a function may use (Lambda quotas: "Lambda layers: five layers")."""


def folder_size(folder: Path) -> int:
    """The bytes of every file under ``folder`` (links not followed)."""
    return sum(
        (Path(top) / name).lstat().st_size for top, _, names in os.walk(folder) for name in names
    )


def unpack_layers(layers: Sequence[bytes], *, code_size: int, limit: int | None = None) -> Path:
    """The layers' contents merged into one new folder (Lambda's ``/opt``), in the order
    listed: a later layer's file replaces an earlier one's at the same path. A layer that
    says "run me from source" (:func:`source_package`) is copied from its folder.

    ``code_size`` is the function's own unzipped size in bytes; with the layers it must
    stay under ``limit`` (:data:`UNZIPPED_LIMIT` unless given; Lambda: "Function code
    combined with layers exceeds the maximum allowed size of 262144000 bytes").

    Raises:
        PackageError: a layer Lambda would refuse (:func:`extract`), or the function and
            its layers past ``limit``; nothing is left behind.
    """
    limit = UNZIPPED_LIMIT if limit is None else limit
    combined = (
        f"Function code combined with layers exceeds the maximum allowed size of {limit} bytes."
    )
    root = Path(tempfile.mkdtemp(prefix="localcloud-layers-")).resolve()
    total = code_size
    try:
        for layer in layers:
            source = source_of(layer)
            if source is not None:
                shutil.copytree(source, root, symlinks=True, dirs_exist_ok=True)
                total += folder_size(source)
            else:
                try:
                    total += _extract_into(layer, root, max(limit - total, 1))
                except TooLarge:  # stopped part-way: the whole size is not known
                    raise TooLarge(combined) from None
            if total >= limit:
                raise TooLarge(f"{combined} The actual size is {total} bytes.")
    except PackageError:
        shutil.rmtree(root, ignore_errors=True)
        raise
    except OSError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise PackageError(f"a layer's folder could not be copied ({exc})") from exc
    return root


def layer_paths(root: Path, runtime: str) -> tuple[str, ...]:
    """Where a ``python3.x`` function imports its layers from, in Lambda's order: the
    layers' ``python/lib/python3.x/site-packages``, then ``python`` (AWS Lambda Developer
    Guide, "Layer paths for each Lambda runtime")."""
    return (str(root / "python" / "lib" / runtime / "site-packages"), str(root / "python"))


def _target(root: Path, name: str) -> Path | None:
    """Where the entry ``name`` goes under ``root`` (``None``: the root itself).

    Raises:
        PackageError: the name is absolute, climbs out with ``..``, or holds a NUL.
    """
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    if name.startswith(("/", "\\")) or ".." in parts or "\x00" in name:
        raise PackageError(f"{_UNZIP_FAILED} (entry {name!r} is outside the package's folder)")
    return root.joinpath(*parts) if parts else None


def _write(
    zipped: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, written: int, limit: int
) -> int:
    """Write one file or folder (no link exists yet); the bytes written so far, this
    entry's included."""
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return written
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    permissions = 0o755 if (info.external_attr >> 16) & 0o111 else 0o644
    with zipped.open(info) as source, os.fdopen(os.open(target, flags, permissions), "wb") as out:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written >= limit:
                raise TooLarge(f"Unzipped size must be smaller than {limit} bytes")
            out.write(chunk)
    return written
