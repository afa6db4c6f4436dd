"""Step Functions' JSONPath, bounded: moto's interpreter evaluates every path of a state
machine (``InputPath``, ``Parameters``' ``.$`` fields, ``ItemsPath``, a Choice's
``Variable``, an intrinsic function's arguments …) through one parse,
``moto.stepfunctions.parser.asl.utils.json_path.parse`` (``jsonpath_ng.ext``'s), which
ran arithmetic (``$.a * 400000000``), Python's :mod:`re` for ``=~`` (``(a|aa)+b`` held
every thread of the server) and deep scans without bound. The patched parse is
:func:`localcloud.patches.jsonpath.parse` in Jayway's dialect, which Step Functions
evaluates with: a refused expression or a query past a bound fails the execution with
``States.Runtime``, its cause naming why.
"""

from __future__ import annotations

from typing import Final

from moto.stepfunctions.parser.asl.utils import json_path

from localcloud.patches import jsonpath
from localcloud.patches.registry import Method, Patch

__all__ = ["PATCHES"]


def _bounded(_original: Method) -> Method:
    def parse(path: str, debug: bool | None = None) -> jsonpath.BoundedPath:
        return jsonpath.parse(path, jsonpath.JAYWAY)

    return parse


PATCHES: Final = (
    Patch(
        json_path,
        "parse",
        ("path", "debug"),
        _bounded,
        "a state machine's JSONPath is Jayway's (no arithmetic), its regular expressions "
        "and matches bounded",
    ),
)
