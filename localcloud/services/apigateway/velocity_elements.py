"""airspeed's elements as the mapping template sandbox knows them: a start-up check that
fails, by name, when airspeed (``airspeed-ext``) has an element the sandbox has not
reviewed.

airspeed parses a template into ``_Element`` subclasses, and each runs through the
methods it defines itself: ``calculate`` (a value), ``evaluate_raw`` (a directive's
output), ``evaluate`` (a statement, counted by the sandbox's patch of
``_Element.evaluate``). The sandbox (:mod:`.velocity_patches`) was written against the
elements of airspeed-ext 0.6.9, each read for what it reaches (a Python attribute, a
file, Python's own operators or printing) and replaced where it reaches one. An upgrade
that adds an element, or gives one a method of its own, could reach past the sandbox
without anything failing: :func:`check_elements` refuses to install the patches then,
naming each element that changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from airspeed import operators

from localcloud.patches.registry import PatchMismatch

__all__ = ["EVALUATING", "REVIEWED", "check_elements"]

EVALUATING: Final = ("calculate", "evaluate_raw", "evaluate")
"""The methods through which an element runs."""

_CALCULATES: Final = frozenset({"calculate"})
_RENDERS: Final = frozenset({"evaluate_raw"})

REVIEWED: Final[Mapping[str, frozenset[str]]] = {
    # values: literals, names and calls (NameOrCall and Range replaced), operators
    **dict.fromkeys(
        (
            "NullLiteral",
            "IntegerLiteral",
            "FloatingPointLiteral",
            "BooleanLiteral",
            "StringLiteral",
            "InterpolatedStringLiteral",
            "Range",
            "ValueList",
            "DictionaryLiteral",
            "Value",
            "NameOrCall",
            "SubExpression",
            "VariableExpression",
            "ParameterList",
            "ArrayIndex",
            "UnaryOperatorValue",
            "Expression",
            "Condition",
            "DotDictAccessTerm",
            "BracketedValueTerm",
            "AssignmentTerm",
        ),
        _CALCULATES,
    ),
    # directives and text (Foreach, Evaluate, Return, Define and macros replaced)
    **dict.fromkeys(
        (
            "Text",
            "FallthroughHashText",
            "FormalReference",
            "IfDirective",
            "Assignment",
            "EvaluateDirective",
            "ReturnDirective",
            "MacroDefinition",
            "DefineDefinition",
            "MacroCall",
            "IncludeDirective",
            "ParseDirective",
            "StopDirective",
            "UserDefinedDirective",
            "SetDirective",
            "ForeachDirective",
            "TemplateBody",
            "Block",
        ),
        _RENDERS,
    ),
    "Comment": frozenset({"evaluate"}),
    # no method of their own: their parents' (BinaryOperator's apply_to is replaced)
    **dict.fromkeys(
        (
            "ArrayLiteral",
            "AlternateValue",
            "BinaryOperator",
            "ParenthesizedExpression",
            "End",
            "ElseBlock",
            "ElseifBlock",
            "_FunctionDefinition",
        ),
        frozenset[str](),
    ),
}
"""Each element of airspeed-ext 0.6.9 the sandbox reviewed, with the evaluating methods it
defines itself."""


def _subclasses(root: type[Any]) -> Iterator[type[Any]]:
    for child in root.__subclasses__():
        yield child
        yield from _subclasses(child)


def check_elements(root: type[Any] = operators._Element) -> None:
    """Refuse to sandbox an airspeed whose elements are not those of :data:`REVIEWED`.

    Raises:
        PatchMismatch: naming each subclass of ``root`` that is new, or whose own
            evaluating methods (:data:`EVALUATING`) are not the reviewed ones.
    """
    changed = []
    for element in dict.fromkeys(_subclasses(root)):
        own = frozenset(name for name in EVALUATING if name in vars(element))
        reviewed = REVIEWED.get(element.__qualname__)
        if own != reviewed:
            where = f"{element.__module__}.{element.__qualname__}"
            methods = ", ".join(sorted(own)) or "no method of its own"
            changed.append(f"{where} ({methods})")
    if changed:
        raise PatchMismatch(
            "airspeed changed: the mapping template sandbox has not reviewed "
            + "; ".join(changed)
            + " (each could evaluate a template outside the sandbox)"
        )
