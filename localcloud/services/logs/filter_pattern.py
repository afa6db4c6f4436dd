"""CloudWatch Logs filter patterns, as AWS documents them.

moto 5.2.5 honours only plain and quoted terms in ``FilterLogEvents``
(``moto.logs.utils.EventMessageFilter``); a JSON pattern such as
``{ $.level = "ERROR" }``, an OR group ``?a ?b`` or an exclusion ``-term`` gives
every event or none, silently. :func:`matches` implements the syntax of the CloudWatch
Logs user guide, "Filter pattern syntax for metric filters, subscription filters, filter
log events, and Live Tail"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html;
the older text of the same page is ``doc_source/FilterAndPatternSyntax.md`` in
github.com/awsdocs/amazon-cloudwatch-logs-user-guide). Below, "the guide" is that page.

Unstructured events (section "Using filter patterns to match terms in unstructured log
events"):

* the empty pattern matches every event;
* a term matches an event whose message contains it; terms are case sensitive;
* several terms match only an event that contains all of them;
* ``"an exact phrase"`` in double quotes is one term, spaces included; a term holding a
  character other than a letter, a digit or ``_`` must be quoted;
* ``?a ?b`` matches an event that contains any of the ``?`` terms;
* ``-term`` excludes the events that contain the term (``ERROR -WARN``).

JSON events (section "Using filter patterns to match terms in JSON log events"):
``{ SELECTOR = "string" }``, ``!=``, the numeric comparisons ``= != < <= > >=``, the
wildcard ``*`` at the start or end of a string, ``IS TRUE``, ``IS FALSE``, ``IS NULL``,
``NOT EXISTS``, selectors ``$.a.b`` and ``$.a[0]``, ``&&`` and ``||`` with parentheses.
An event that is not a JSON object never matches a JSON pattern.

Anything else -- space-delimited patterns ``[w1, w2]``, regular expressions ``%...%``,
``?`` terms mixed with plain or excluded terms, unquoted terms with other characters --
raises :class:`FilterPatternError`, and ``FilterLogEvents`` fails with
``InvalidParameterException`` (HTTP 400) naming it (:mod:`localcloud.services.logs.patches`): a
refusal, never a wrong answer.
"""

from __future__ import annotations

import functools

from localcloud.services.logs.json_pattern import JsonPattern, parse_json
from localcloud.services.logs.term_pattern import FilterPatternError, TermPattern, parse_terms

__all__ = [
    "FilterPatternError",
    "JsonPattern",
    "Pattern",
    "TermPattern",
    "matches",
    "parse",
]

Pattern = TermPattern | JsonPattern


@functools.lru_cache(maxsize=256)
def parse(pattern: str) -> Pattern:
    """The compiled form of ``pattern``; ``FilterPatternError`` if it is not implemented.

    The guide starts a JSON pattern with ``{``, a space-delimited one with ``[`` and a
    regular expression with ``%``; the last two are refused.
    """
    stripped = pattern.strip()
    if stripped.startswith("{"):
        return parse_json(stripped)
    if stripped.startswith("["):
        raise FilterPatternError(
            "space-delimited patterns ([w1, w2, ...]) are not implemented by the local cloud"
        )
    if stripped.startswith("%"):
        raise FilterPatternError(
            "regular expression patterns (%...%) are not implemented by the local cloud"
        )
    return parse_terms(stripped)


def matches(pattern: str, message: str) -> bool:
    """Whether the log event ``message`` matches the CloudWatch Logs filter ``pattern``.

    Raises ``FilterPatternError`` for a pattern outside what this module implements (see
    the module docstring), whatever the message.
    """
    return parse(pattern).matches(message)
