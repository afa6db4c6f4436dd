"""The one path a request is decided on, and the paths that could be read two ways.

The guard decides where a request goes (an API's route, the live view, an AWS API) and
whether it must be signed; the app it hands the request to routes it again. Both must
read the same path, or a request the guard lets through unsigned as "an API's route" or
"the view" reaches S3 instead (issue 47, finding 1: ``/%2Frestapis/…`` was decided on a
path with its leading slashes stripped, while moto read ``//restapis/…`` as an object key
of the bucket the ``Host`` named). So:

- the decision is made on the WSGI ``PATH_INFO`` exactly as every app behind the guard
  reads it (percent-decoded once by the server, nothing stripped or collapsed):
  :func:`decided_path`;
- a path that servers and frameworks disagree on is refused with 400 when the guard would
  serve it without a signature (:func:`ambiguity`): an encoded ``/`` or ``\\`` (``%2F``,
  ``%5C``: one segment to the raw URI, two once decoded), a backslash, an empty segment
  (``//``: collapsed by some, kept by others), a ``.`` or ``..`` segment (resolved by some,
  kept by others, encoded or not), a control character. RFC 3986 section 6.2.2 lists the
  normalisations (percent-decoding, dot-segment removal) that make two spellings of one
  path equal; a path is unambiguous here when no such normalisation changes it.

May import: nothing of the local cloud.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["ambiguity", "decided_path", "raw_path"]

_ENCODED_SEPARATOR: Final = re.compile(r"%(2f|5c)", re.IGNORECASE)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def decided_path(environ: Mapping[str, Any]) -> str:
    """The path every decision and every router reads: ``PATH_INFO`` as the server decoded
    it (``""`` when absent)."""
    return str(environ.get("PATH_INFO", ""))


def raw_path(environ: Mapping[str, Any]) -> str:
    """The request target's path as the client sent it, before any decoding
    (``REQUEST_URI``, which werkzeug's server and test client set; an absolute-form
    target's path part), without its query."""
    target = str(environ.get("REQUEST_URI") or environ.get("RAW_URI") or "")
    if not target:
        return decided_path(environ)
    if "://" in target.split("?", 1)[0]:
        return urlsplit(target).path
    return target.split("?", 1)[0]


def ambiguity(environ: Mapping[str, Any]) -> str | None:
    """Why the request's path could be read two ways, or ``None`` when it cannot.

    The reasons, each a way two servers route one path differently: ``"an encoded slash
    or backslash"``, ``"a backslash"``, ``"an empty segment (//)"``, ``"a dot segment (.
    or ..)"``, ``"a control character"``, ``"a path that does not start with /"``.
    """
    if _ENCODED_SEPARATOR.search(raw_path(environ)):
        return "an encoded slash or backslash"
    path = decided_path(environ)
    if path and not path.startswith("/"):
        return "a path that does not start with /"
    if "\\" in path:
        return "a backslash"
    if _CONTROL.search(path):
        return "a control character"
    segments = path.split("/")[1:]
    if any(segment in (".", "..") for segment in segments):
        return "a dot segment (. or ..)"
    if any(segment == "" for segment in segments[:-1]):
        return "an empty segment (//)"
    return None
