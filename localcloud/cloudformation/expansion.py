"""How large a template's intrinsic functions can resolve to, known before any resolves.

A few hundred bytes of template can resolve to gigabytes without a single YAML alias: an
``Fn::Sub`` whose variable is itself an ``Fn::Sub`` repeating the next one ten times, nine
deep, is 10^10 characters; an ``Fn::Join`` of a thousand empty strings with a thousand-
character separator, nested, the same (issue 47's held-back attacks: each took the server
past 1.5 GB, through moto's CloudFormation and through the local deployer alike). Both
evaluators build each string whole before anything could look at it, so the bound is
applied to the template as written, from the rules of each function
("Intrinsic function reference", CloudFormation User Guide):

- a literal is its own length; ``Ref``, ``Fn::GetAtt``, ``Fn::ImportValue``, ``Fn::GetAZs``
  and ``Fn::Cidr`` at most :data:`REFERENCE_BYTES` (a parameter's value is at most 4,096
  bytes, an ARN 2,048);
- ``Fn::Sub``: its text, plus each ``${Name}`` at most its variable's bound (or a
  reference's); ``Fn::Join``: its values, plus the separator once between each two (a
  list another function gives has at most one value more than its bound has bytes);
  ``Fn::Base64``: four thirds; ``Fn::If``: the larger branch; ``Fn::Select``, ``Fn::Split``,
  ``Fn::ToJsonString``: their argument; ``Fn::FindInMap``: the largest value of the
  ``Mappings``.

A template is refused when one function may resolve past :data:`EXPRESSION_BYTES`, or all
its outermost functions together past :data:`TEMPLATE_BYTES`. These are the local cloud's
bounds (CloudFormation publishes none for a resolved value), set far above what a
template written by hand resolves to: a published template's largest expression, an
inline state machine or API definition, is some tens of kilobytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["EXPRESSION_BYTES", "REFERENCE_BYTES", "TEMPLATE_BYTES", "resolved_bytes_problem"]

REFERENCE_BYTES: Final = 4_096
"""The most a reference resolves to: a parameter's value ("Parameter value": 4,096
bytes), an attribute or an ARN (2,048 characters)."""
EXPRESSION_BYTES: Final = 4_000_000
"""The most one intrinsic function may resolve to (four times a template in S3)."""
TEMPLATE_BYTES: Final = 64_000_000
"""The most all of a template's outermost intrinsic functions may resolve to together."""
REFERENCES: Final = frozenset(
    {"Ref", "Fn::GetAtt", "Fn::ImportValue", "Fn::GetAZs", "Fn::Cidr", "Fn::Length"}
)
_SUB_NAME: Final = re.compile(r"\$\{(?!!)([^}]*)\}")


def resolved_bytes_problem(body: Mapping[str, Any]) -> str | None:
    """Why ``body``'s intrinsic functions may resolve past the bounds, or ``None``: the
    first function (by its path in the template) past :data:`EXPRESSION_BYTES`, or the
    total past :data:`TEMPLATE_BYTES`."""
    mappings = body.get("Mappings")
    largest_mapping = 0
    if isinstance(mappings, Mapping):
        sizer = _Sizer(0)
        for top in mappings.values():
            for second in top.values() if isinstance(top, Mapping) else ():
                for value in second.values() if isinstance(second, Mapping) else ():
                    largest_mapping = max(largest_mapping, sizer.size(value))
    sizer = _Sizer(largest_mapping)
    total = 0
    for section in ("Resources", "Outputs", "Conditions", "Globals", "Parameters"):
        for where, size in sizer.outermost(body.get(section), section):
            if size > EXPRESSION_BYTES:
                return (
                    f"{where} may resolve to {size:,} bytes, more than the "
                    f"{EXPRESSION_BYTES:,} the local cloud resolves"
                )
            total += size
    if total > TEMPLATE_BYTES:
        return (
            f"its intrinsic functions may resolve to {total:,} bytes together, more than the "
            f"{TEMPLATE_BYTES:,} the local cloud resolves"
        )
    return None


def _function(node: Any) -> tuple[str, Any] | None:
    """``(name, argument)`` of an intrinsic function node (a one-key mapping whose key is
    ``Ref`` or ``Fn::…``), else ``None``."""
    if isinstance(node, Mapping) and len(node) == 1:
        ((name, argument),) = node.items()
        if name == "Ref" or str(name).startswith("Fn::"):
            return str(name), argument
    return None


class _Sizer:
    """Upper bounds of what nodes resolve to, each node measured once (YAML aliases are
    shared nodes)."""

    def __init__(self, largest_mapping: int) -> None:
        self.largest_mapping = largest_mapping
        self._known: dict[int, int] = {}

    def outermost(self, node: Any, where: str) -> list[tuple[str, int]]:
        """``(path, bound)`` of each outermost intrinsic function under ``node``."""
        if _function(node) is not None:
            return [(where, self.size(node))]
        found: list[tuple[str, int]] = []
        if isinstance(node, Mapping):
            for key, value in node.items():
                found.extend(self.outermost(value, f"{where}.{key}"))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found.extend(self.outermost(value, f"{where}[{index}]"))
        return found

    def size(self, node: Any) -> int:
        known = self._known.get(id(node))
        if known is None:
            known = self._known[id(node)] = self._measure(node)
        return known

    def _measure(self, node: Any) -> int:
        function = _function(node)
        if function is not None:
            return self._function_size(*function)
        if isinstance(node, Mapping):
            return 2 + sum(len(str(k)) + 4 + self.size(v) for k, v in node.items())
        if isinstance(node, list):
            return 2 + sum(1 + self.size(v) for v in node)
        return len(str(node))

    def _function_size(self, name: str, argument: Any) -> int:
        arguments = argument if isinstance(argument, list) else [argument]
        if name in REFERENCES:
            return REFERENCE_BYTES
        if name == "Fn::Sub":
            return self._sub_size(arguments)
        if name == "Fn::Join" and len(arguments) == 2:
            separator, values = self.size(arguments[0]), arguments[1]
            if isinstance(values, list):
                return sum(self.size(v) for v in values) + separator * max(len(values) - 1, 0)
            listed = self.size(values)
            return listed + separator * listed
        if name == "Fn::Base64":
            return self.size(argument) * 4 // 3 + 4
        if name == "Fn::If" and len(arguments) == 3:
            return max(self.size(arguments[1]), self.size(arguments[2]))
        if name == "Fn::FindInMap":
            return self.largest_mapping
        return sum(self.size(a) for a in arguments)

    def _sub_size(self, arguments: list[Any]) -> int:
        text = arguments[0]
        if not isinstance(text, str):
            return self.size(text)
        variables = arguments[1] if len(arguments) > 1 else {}
        if not isinstance(variables, Mapping):
            variables = {}
        size = len(text)
        for name in _SUB_NAME.findall(text):
            value = variables.get(name)
            size += REFERENCE_BYTES if value is None else self.size(value)
        return size
