"""What a mapping template may reach on a value: the Java members templates call on
strings, lists, maps and numbers (``$s.toLowerCase()``, ``$list.size()``,
``$map.keySet()`` …), a map's entries by name (``$map.key``: data, whatever the key,
``__type`` included), and on the objects of API Gateway's variables the members their
class lists in ``TEMPLATE_PROPERTIES`` and ``TEMPLATE_METHODS`` (``$input.body``,
``$input.json(x)``, ``$util.escapeJavaScript(x)`` …). Nothing else: no attribute of a
Python object, no dunder or private name, no ``getClass()``. What is not a member is
``null``, as Velocity makes an unknown property or method on API Gateway.

Regular expressions (``matches``, ``replaceAll``, ``replaceFirst``, ``split``) run in
:mod:`regex`, the GIL released, each call's timeout the rendering's time left but at most
:data:`.velocity.REGEX_SECONDS`, and the deadline checked again after it (Python's
:mod:`re` cannot be stopped, holds every thread of the server, and a pattern such as
``(a|aa)+b`` takes it exponential time); a replacement's ``$1`` is Java's group
reference. Text a member makes is counted by the rendering's sandbox before it is made
where its length is known (``replace``, ``concat``, ``replaceAll``'s every match), and so
are the items of a list it makes (``split``'s each part, ``keySet``, ``values``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Final

import regex

from localcloud.services.apigateway import velocity
from localcloud.services.apigateway.velocity import TemplateError, current, equal, java_text

__all__ = ["NULL", "call", "read"]

NULL: Final = None
"""What a name that is not a member gives: ``null``."""

Member = Callable[..., Any]


def _regex(run: Callable[..., Any], pattern: Any, *args: Any, **options: Any) -> Any:
    """``run(pattern, *args)`` of :mod:`regex`, the GIL released, stopped at the call's
    bound or the rendering's deadline, whichever comes first (checked again after it)."""
    if not isinstance(pattern, str):
        raise TemplateError("a regular expression must be a string")
    sandbox = current()
    timeout = sandbox.regex_timeout()
    try:
        result = run(pattern, *args, timeout=timeout, concurrent=True, **options)
    except TimeoutError as exc:
        bound = (
            f"{velocity.REGEX_SECONDS:g} s, the local cloud's bound on one call"
            if timeout >= velocity.REGEX_SECONDS
            else f"the rendering's {velocity.RENDER_SECONDS:g} s"
        )
        raise TemplateError(f"the regular expression {pattern[:80]!r} ran past {bound}") from exc
    except regex.error as exc:
        raise TemplateError(f"{pattern[:80]!r} is not a regular expression ({exc})") from exc
    sandbox.step()  # the deadline again: regex's own timeout is loose under load
    return result


def _java_replacement(replacement: Any) -> Callable[[Any], str]:
    """A ``regex.sub`` replacement doing what Java's ``Matcher.appendReplacement`` does
    with ``replacement`` (``$n`` a group, ``\\x`` the character ``x``), each piece counted
    as text made before it is added."""
    if not isinstance(replacement, str):
        raise TemplateError("a replacement must be a string")
    sandbox = current()

    def expand(match: Any) -> str:
        pieces: list[str] = []
        index = 0
        while index < len(replacement):
            char = replacement[index]
            if char == "\\" and index + 1 < len(replacement):
                pieces.append(replacement[index + 1])
                index += 2
            elif char == "$" and index + 1 < len(replacement) and replacement[index + 1].isdigit():
                group = match.group(int(replacement[index + 1])) or ""
                sandbox.made_text(len(group))
                pieces.append(group)
                index += 2
            else:
                pieces.append(char)
                index += 1
        sandbox.made_text(len(pieces))
        return "".join(pieces)

    return expand


def _replace(text: str, target: Any, replacement: Any) -> str:
    """Java's ``String.replace``: every ``target`` (literal); the result's length is
    counted before it is made (``replace('', …)`` puts it between every character)."""
    target, replacement = java_text(target), java_text(replacement)
    found = text.count(target) if target else len(text) + 1
    current().made_text(len(text) + found * (len(replacement) - len(target)))
    return text.replace(target, replacement)


def _concat(text: str, other: Any) -> str:
    if not isinstance(other, str):
        raise TemplateError("concat takes a string")
    current().made_text(len(text) + len(other))
    return text + other


def _substring(text: str, start: int, end: int | None = None) -> str:
    """Java's ``substring``: indexes out of ``0 <= start <= end <= length`` fail."""
    stop = len(text) if end is None else end
    if not 0 <= start <= stop <= len(text):
        raise TemplateError(f"substring({start}, {stop}) of a string of {len(text)} characters")
    return text[start:stop]


def _char_at(text: str, index: int) -> str:
    if not 0 <= index < len(text):
        raise TemplateError(f"charAt({index}) of a string of {len(text)} characters")
    return text[index]


_COUNTED_EVERY: Final = 1024
"""``split`` counts its parts 1,024 at a time (a count per part added a third to the time
regex takes to split with a timeout)."""


def _split(text: str, pattern: Any) -> list[str]:
    """Java's ``split(regex)``: trailing empty strings removed; the parts counted (values
    and their text) as they are made, so splitting a large body into characters stops at
    the sandbox's bound rather than after millions of strings."""
    sandbox = current()
    parts: list[str] = []

    def collect(expression: str, subject: str, **options: Any) -> None:
        made = characters = 0
        for part in regex.splititer(expression, subject, **options):
            parts.append(part)
            made += 1
            characters += len(part)
            if made == _COUNTED_EVERY:
                sandbox.made_values(made)
                sandbox.made_text(characters)
                made = characters = 0
        sandbox.made_values(made)
        sandbox.made_text(characters)

    _regex(collect, pattern, text)
    while parts and not parts[-1]:
        parts.pop()
    return parts


STRING: Final[Mapping[str, Member]] = {
    "charAt": _char_at,
    "concat": _concat,
    "contains": lambda s, part: java_text(part) in s,
    "endsWith": lambda s, suffix: s.endswith(java_text(suffix)),
    "equals": lambda s, other: equal(s, other),
    "equalsIgnoreCase": lambda s, other: isinstance(other, str) and s.lower() == other.lower(),
    "indexOf": lambda s, part, start=0: s.find(java_text(part), start),
    "isEmpty": lambda s: not s,
    "lastIndexOf": lambda s, part: s.rfind(java_text(part)),
    "length": len,
    "matches": lambda s, pattern: _regex(regex.fullmatch, pattern, s) is not None,
    "replace": _replace,
    "replaceAll": lambda s, pattern, repl: _regex(regex.sub, pattern, _java_replacement(repl), s),
    "replaceFirst": lambda s, pattern, repl: _regex(
        regex.sub, pattern, _java_replacement(repl), s, count=1
    ),
    "split": _split,
    "startsWith": lambda s, prefix: s.startswith(java_text(prefix)),
    "substring": _substring,
    "toLowerCase": str.lower,
    "toString": lambda s: s,
    "toUpperCase": str.upper,
    "trim": str.strip,
}
"""``java.lang.String``'s methods templates use."""


def _index_of(items: Any, wanted: Any) -> int:
    return next((i for i, item in enumerate(items) if equal(item, wanted)), -1)


def _get(items: Any, index: int) -> Any:
    if not isinstance(index, int) or not 0 <= index < len(items):
        raise TemplateError(f"get({index}) of a list of {len(items)}")
    return items[index]


def _set(items: Any, index: int, value: Any) -> Any:
    previous = _get(items, index)
    items[index] = value
    return previous


def _add(items: Any, value: Any) -> bool:
    items.append(value)
    return True


LIST: Final[Mapping[str, Member]] = {
    "contains": lambda items, wanted: _index_of(items, wanted) >= 0,
    "get": _get,
    "indexOf": _index_of,
    "isEmpty": lambda items: not items,
    "size": len,
    "toString": java_text,
}
"""``java.util.List``'s methods templates use (``[1..5]`` and ``keySet()`` included)."""

MUTABLE_LIST: Final[Mapping[str, Member]] = {**LIST, "add": _add, "set": _set}


def _put(entries: MutableMapping[Any, Any], key: Any, value: Any) -> Any:
    previous = entries.get(key)
    entries[key] = value
    return previous


def _put_all(entries: MutableMapping[Any, Any], other: Any) -> None:
    if not isinstance(other, Mapping):
        raise TemplateError("putAll takes a map")
    current().step(len(other))
    entries.update(other)


def _key_set(entries: Mapping[Any, Any]) -> list[Any]:
    current().made_values(len(entries))
    return list(entries)


def _values(entries: Mapping[Any, Any]) -> list[Any]:
    current().made_values(len(entries))
    return list(entries.values())


MAP: Final[Mapping[str, Member]] = {
    "containsKey": lambda entries, key: key in entries,
    "containsValue": lambda entries, value: any(equal(v, value) for v in entries.values()),
    "get": lambda entries, key: entries.get(key),
    "isEmpty": lambda entries: not entries,
    "keySet": _key_set,
    "put": _put,
    "putAll": _put_all,
    "remove": lambda entries, key: entries.pop(key, None),
    "size": len,
    "toString": java_text,
    "values": _values,
}
"""``java.util.Map``'s methods templates use."""

SCALAR: Final[Mapping[str, Member]] = {"toString": java_text}
"""A number's or a boolean's."""


def _methods_of(value: Any) -> Mapping[str, Member]:
    if isinstance(value, str):
        return STRING
    if isinstance(value, list):
        return MUTABLE_LIST
    if isinstance(value, tuple | range):
        return LIST
    if isinstance(value, MutableMapping):
        return MAP
    if isinstance(value, bool | int | float):
        return SCALAR
    return {}


def read(value: Any, name: str) -> Any:
    """``$value.name``, without parentheses: a map's entry, or a property the value's
    class lists in ``TEMPLATE_PROPERTIES``; anything else is :data:`NULL`."""
    if isinstance(value, Mapping):
        return value.get(name)
    if name in getattr(type(value), "TEMPLATE_PROPERTIES", ()):
        return getattr(value, name)
    return NULL


def call(value: Any, name: str, arguments: list[Any]) -> Any:
    """``$value.name(arguments)``: a Java method of the value's kind, or a method its
    class lists in ``TEMPLATE_METHODS``; anything else is :data:`NULL`.

    Raises:
        TemplateError: the method fails as Java's would (an index out of range, a
            regular expression that does not parse or runs too long), or a bound of the
            rendering passed.
        TypeError: the arguments do not fit the method (the rendering fails too).
    """
    method = _methods_of(value).get(name)
    if method is not None:
        return method(value, *arguments)
    if name in getattr(type(value), "TEMPLATE_METHODS", ()):
        return getattr(value, name)(*arguments)
    return NULL
