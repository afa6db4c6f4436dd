"""airspeed (``airspeed-ext``, the Velocity engine LocalStack renders mapping templates
with) sandboxed: its way into Python closed and its work bounded, through the patch
registry like any library the local cloud corrects.

airspeed resolves ``$x.name`` with ``getattr`` on any Python object, so
``$input.__class__.__init__.__globals__`` reaches the server's modules, and it runs
Python's own operators, string formatting and printing on whatever a template builds.
Replaced here:

- ``NameOrCall.calculate``: a variable, a map's entry or a member of
  :mod:`.velocity_members`, nothing else (``null`` otherwise, as on API Gateway);
- ``value_to_string``: values printed as Java prints them, counted (:func:`.velocity.java_text`);
- ``BinaryOperator.parse``: Velocity's operators (:mod:`.velocity_operators`), on numbers
  and strings (no ``%`` formatting, no ``'a' * 10**9``, integers within Java's ``long``);
- ``_Element.evaluate``: each statement a step of the rendering's sandbox, refused outside
  a rendering;
- ``ForeachDirective.evaluate_raw``: at most 1,000 iterations a loop, as on API Gateway,
  over a list or a map's values as Velocity iterates them (a string or a number is no
  loop: Velocity skips what it cannot iterate);
- ``StoppableStream.write``: every character written counted; ``ReturnDirective.evaluate_raw``
  prints as Java does (no ``str`` or ``json.dumps`` of what a template built);
- ``Range.calculate``: ``[m..n]`` of integers (no comparison of what a template built);
- ``_FunctionDefinition.execute_function`` and ``EvaluateDirective.evaluate_raw``: nested
  calls bounded; ``#evaluate`` of text within the template size quota, sandboxed alike.

``#include`` and ``#parse`` are handed a loader that reads nothing
(:data:`NO_FILES`). The bounds are :mod:`.velocity`'s.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import airspeed
from airspeed import operators

from localcloud.patches.registry import Method, Patch
from localcloud.services.apigateway.velocity import (
    FOREACH_ITERATIONS,
    TEMPLATE_SIZE,
    TemplateError,
    active,
    current,
    java_text,
)
from localcloud.services.apigateway.velocity_members import NULL, call, read
from localcloud.services.apigateway.velocity_operators import OPERATORS

__all__ = ["NO_FILES", "PATCHES", "compiled", "in_force"]

_REPLACEMENTS: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def _sandboxing(make: Callable[[Method], Method]) -> Callable[[Method], Method]:
    """``make``, its replacements remembered as the sandbox's (:func:`in_force`)."""

    @functools.wraps(make)
    def remembered(original: Method) -> Method:
        replacement = make(original)
        _REPLACEMENTS.add(replacement)
        return replacement

    return remembered


def in_force() -> bool:
    """Whether every patch of :data:`PATCHES` is installed (a local cloud is running)."""
    return all(vars(p.owner).get(p.name) in _REPLACEMENTS for p in PATCHES)


class _NoFiles:
    """The loader of ``#include`` and ``#parse``: API Gateway's templates have no files,
    and the server's disk is not theirs."""

    def load_text(self, name: Any) -> str:
        raise TemplateError(f"#include({name!r}): a mapping template reads no file")

    def load_template(self, name: Any) -> Any:
        raise TemplateError(f"#parse({name!r}): a mapping template reads no file")


NO_FILES: Final = _NoFiles()


@functools.lru_cache(maxsize=32)
def compiled(text: str) -> airspeed.Template:
    """``text`` parsed once (airspeed's parse of a large template takes seconds).

    Raises:
        TemplateError: ``text`` is over :data:`.velocity.TEMPLATE_SIZE` or does not
            parse.
    """
    if len(text.encode()) > TEMPLATE_SIZE:
        raise TemplateError(
            f"a mapping template of {len(text.encode()):,} bytes: API Gateway's maximum "
            f"mapping template size is {TEMPLATE_SIZE // 1024} KB"
        )
    template = airspeed.Template(text)
    try:
        template.ensure_compiled()
    except airspeed.TemplateSyntaxError as exc:
        raise TemplateError(f"the mapping template does not parse ({exc})") from exc
    except RecursionError as exc:
        raise TemplateError("the mapping template is nested too deeply to parse") from exc
    return template


@_sandboxing
def _name_or_call(_original: Method) -> Method:
    def calculate(self: Any, current_object: Any, loader: Any, top_namespace: Any) -> Any:
        sandbox = current()
        sandbox.step()
        if isinstance(current_object, operators.LocalNamespace):
            try:
                result = current_object[self.name]
            except KeyError:
                result = NULL
        elif self.parameters is not None:
            arguments = self.parameters.calculate(top_namespace, loader)
            result = call(current_object, self.name, arguments)
            if isinstance(result, str) and result is not current_object:
                sandbox.made_text(len(result))
            return result
        else:
            result = read(current_object, self.name)
        if isinstance(result, operators._FunctionDefinition):  # a #define's body
            params = (self.parameters and self.parameters.calculate(top_namespace, loader)) or []
            stream = operators.StoppableStream()
            result.execute_function(stream, top_namespace, params, loader)
            value: str = stream.getvalue()
            if isinstance(result, operators.DefineDefinition) and self.parameters and not params:
                value += self.parameters.my_text()  # airspeed's AWS parity: $d() printed as is
            return value
        if self.parameters is not None:  # $variable(…): a variable is no method
            return NULL
        if self.index is not None:
            index = self.index.calculate(top_namespace, loader)
            if isinstance(result, list) and not isinstance(index, int):
                raise TemplateError(f"expected integer for array index, got {index!r}")
            try:
                result = result[index]
            except (LookupError, TypeError):
                result = NULL
        return result

    return calculate


@_sandboxing
def _value_to_string(_original: Method) -> Method:
    def value_to_string(value: Any) -> str:
        return java_text(value)

    return value_to_string


@_sandboxing
def _binary_operator(original: Method) -> Method:
    def parse(self: Any) -> None:
        original(self)
        checked = OPERATORS.get(self.apply_to)
        unchecked = self.apply_to

        def apply_to(left: Any, right: Any) -> Any:
            current().step()
            return (checked or unchecked)(left, right)

        self.apply_to = apply_to

    return parse


@_sandboxing
def _evaluate(original: Method) -> Method:
    def evaluate(self: Any, *args: Any) -> Any:
        current().step()
        return original(self, *args)

    return evaluate


@_sandboxing
def _foreach(_original: Method) -> Method:
    def evaluate_raw(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
        iterable = self.value.calculate(namespace, loader)
        if iterable is None:
            return
        items: Iterable[Any]
        if isinstance(iterable, Mapping):  # Velocity's UberspectImpl: a map's values
            length = len(iterable)
            items = list(itertools.islice(iterable.values(), FOREACH_ITERATIONS))
        elif isinstance(iterable, list | tuple | range):
            length = len(iterable)
            items = itertools.islice(iterable, FOREACH_ITERATIONS)
        else:
            return  # a string, a number: Velocity skips it (directive.foreach.skip.invalid)
        for counter, item in enumerate(items, start=1):
            local = operators.LocalNamespace(namespace)
            local["velocityCount"] = counter
            local["velocityHasNext"] = counter < length
            local["foreach"] = {
                "count": counter,
                "index": counter - 1,
                "hasNext": counter < length,
                "first": counter == 1,
                "last": counter == length,
            }
            local[self.loop_var_name] = item
            self.block.evaluate(stream, local, loader)

    return evaluate_raw


@_sandboxing
def _write(original: Method) -> Method:
    def write(self: Any, s: Any) -> None:
        sandbox = active()
        if sandbox is not None and not self.stop:
            sandbox.made_text(len(s))
        original(self, s)

    return write


@_sandboxing
def _range(_original: Method) -> Method:
    def calculate(self: Any, namespace: Any, loader: Any) -> range:
        first = self.value1.calculate(namespace, loader)
        last = self.value2.calculate(namespace, loader)
        if not (isinstance(first, int) and isinstance(last, int)) or isinstance(first, bool):
            raise TemplateError("a range [m..n] takes integers")
        return range(first, last - 1, -1) if last < first else range(first, last + 1)

    return calculate


@_sandboxing
def _return(_original: Method) -> Method:
    def evaluate_raw(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
        stream.write(java_text(self.value.calculate(namespace, loader)))

    return evaluate_raw


@_sandboxing
def _execute_function(original: Method) -> Method:
    def execute_function(
        self: Any, stream: Any, namespace: Any, arg_values: Any, loader: Any
    ) -> None:
        kind = "#define" if isinstance(self, operators.DefineDefinition) else "#macro"
        with current().deeper(kind):
            original(self, stream, namespace, arg_values, loader)

    return execute_function


@_sandboxing
def _evaluate_directive(_original: Method) -> Method:
    def evaluate_raw(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
        text = self.value.calculate(namespace, loader)
        if not isinstance(text, str):
            raise TemplateError("#evaluate takes a string")
        with current().deeper("#evaluate"):
            compiled(text).merge_to(namespace, stream, loader)

    return evaluate_raw


PATCHES: Final = (
    Patch(
        operators.NameOrCall,
        "calculate",
        ("self", "current_object", "loader", "top_namespace"),
        _name_or_call,
        "a mapping template reaches variables, map entries and the documented members only",
    ),
    Patch(
        operators,
        "value_to_string",
        ("value",),
        _value_to_string,
        "a mapping template prints values as Java does, within its text bound",
    ),
    Patch(
        operators.BinaryOperator,
        "parse",
        ("self",),
        _binary_operator,
        "a mapping template's operators are Velocity's, on numbers and strings",
    ),
    Patch(
        operators._Element,
        "evaluate",
        ("self",),
        _evaluate,
        "a mapping template's statements are counted, and run only in a rendering",
    ),
    Patch(
        operators.ForeachDirective,
        "evaluate_raw",
        ("self", "stream", "namespace", "loader"),
        _foreach,
        "a #foreach stops after 1,000 iterations, API Gateway's quota",
    ),
    Patch(
        operators.StoppableStream,
        "write",
        ("self", "s"),
        _write,
        "the text a mapping template writes is counted",
    ),
    Patch(
        operators.Range,
        "calculate",
        ("self", "namespace", "loader"),
        _range,
        "a range [m..n] is of integers",
    ),
    Patch(
        operators.ReturnDirective,
        "evaluate_raw",
        ("self", "stream", "namespace", "loader"),
        _return,
        "#return prints its value as Java does, within the text bound",
    ),
    Patch(
        operators._FunctionDefinition,
        "execute_function",
        ("self", "stream", "namespace", "arg_values", "loader"),
        _execute_function,
        "macros and #define calls nest at most 20 deep",
    ),
    Patch(
        operators.EvaluateDirective,
        "evaluate_raw",
        ("self", "stream", "namespace", "loader"),
        _evaluate_directive,
        "#evaluate nests at most 20 deep, its text bounded and sandboxed alike",
    ),
)
