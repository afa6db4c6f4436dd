"""A template's text parsed as CloudFormation takes it, within CloudFormation's quotas:
the one way every entry point reads a template (the API's ``TemplateBody`` and
``TemplateURL``, moto's own parses, ``serve --template``, the files a template points at).

- Parsed by cfn-lint's decoder (YAML with the short-form tags, or JSON), which builds only
  plain values: a ``!!python/...`` tag is a format error, never an object. (moto parses
  with PyYAML's unsafe ``yaml.Loader``; :mod:`.api_templates` sends every moto parse
  here.)
- Bounded before it is parsed: :data:`TEMPLATE_BODY_BYTES` for a ``TemplateBody``,
  :data:`TEMPLATE_URL_BYTES` for a template in S3 and for a local file; and after: YAML
  aliases resolved to at most cfn-lint's 250,000 values and no more text than the text's
  own bound (:data:`EXPANDED_BYTES` for a template: a "billion laughs" of a few hundred
  bytes is refused in milliseconds), nesting within Python's recursion limit.
- :data:`RESOURCES` resources at most (checked as written, and after the SAM transform by
  the deployer), :data:`PARAMETER_VALUE_BYTES` a parameter value; intrinsic functions that
  may resolve to no more than :mod:`.expansion` allows.

Each refusal is CloudFormation's ``ValidationError``, its message AWS's where AWS's is
known ("Template format error: …", "Template may not exceed 1000000 bytes in size.").
The quotas are those of "CloudFormation quotas"
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from cfnlint.decode.decode import decode_str

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.expansion import resolved_bytes_problem

__all__ = [
    "EXPANDED_BYTES",
    "PARAMETER_VALUE_BYTES",
    "RESOURCES",
    "TEMPLATE_BODY_BYTES",
    "TEMPLATE_URL_BYTES",
    "TemplateRefused",
    "check_parameter_value",
    "check_resources",
    "check_sections",
    "check_template_body",
    "check_template_size",
    "parse",
    "read_file",
]

TEMPLATE_BODY_BYTES: Final = 51_200
"""A ``TemplateBody`` in a request ("Template body size in a request")."""
TEMPLATE_URL_BYTES: Final = 1_000_000
"""A template in S3 ("Template body size in an Amazon S3 object": 1 MB, which AWS's own
error counts as 1,000,000 bytes)."""
EXPANDED_BYTES: Final = TEMPLATE_URL_BYTES
"""A template with its YAML aliases resolved: CloudFormation takes no aliases, SAM CLI and
``aws cloudformation package`` resolve them before they send it, so it must fit then."""
RESOURCES: Final = 500
"""Resources a template declares ("Resources")."""
SECTION_ENTRIES: Final = {"Parameters": 200, "Outputs": 200, "Mappings": 200}
"""Parameters, outputs and mappings a template declares, at most ("Parameters", "Outputs",
"Mappings")."""
DESCRIPTION_BYTES: Final = 1_024
"""A template's ``Description`` ("Template description")."""
PARAMETER_VALUE_BYTES: Final = 4_096
"""A parameter's value ("Parameter value")."""


class TemplateRefused(UnsupportedTemplate):
    """CloudFormation refuses the template: ``message`` is its ``ValidationError``'s."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.where = "Template"
        self.message = message


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def check_template_body(body: str) -> None:
    """Refuse a ``TemplateBody`` over :data:`TEMPLATE_BODY_BYTES`, as the API does.

    Raises:
        TemplateRefused: with AWS's message (its value quoted, as AWS quotes it).
    """
    if _size(body) > TEMPLATE_BODY_BYTES:
        raise TemplateRefused(
            f"1 validation error detected: Value '{body}' at 'templateBody' failed to satisfy "
            f"constraint: Member must have length less than or equal to {TEMPLATE_BODY_BYTES}"
        )


def check_template_size(text: str, limit: int = TEMPLATE_URL_BYTES, what: str = "Template") -> None:
    """Refuse a template (or a file it points at: ``what``) over ``limit`` bytes.

    Raises:
        TemplateRefused: "Template may not exceed <limit> bytes in size." (AWS's, for a
            ``TemplateURL``).
    """
    if _size(text) > limit:
        raise TemplateRefused(f"{what} may not exceed {limit} bytes in size.")


def read_file(path: Path, limit: int = TEMPLATE_URL_BYTES, what: str = "Template") -> str:
    """A template's (or a file it points at's: ``what``) text, read no further than
    ``limit`` bytes.

    Raises:
        TemplateRefused: the file is over ``limit`` bytes, or is not UTF-8.
        OSError: it cannot be read.
    """
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise TemplateRefused(f"{what} may not exceed {limit} bytes in size.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateRefused(f"Template format error: {path.name} is not UTF-8 ({exc})") from exc


def _expanded_bytes(value: Any, limit: int) -> int:
    """The size of ``value`` as text once every YAML alias in it is resolved, computed
    over its distinct values (an alias is the same object as its anchor), refused past
    ``limit``."""
    sizes: dict[int, int] = {}

    def size(item: Any) -> int:
        known = sizes.get(id(item))
        if known is not None:
            return known
        if isinstance(item, Mapping):
            total = 2 + sum(len(str(k)) + 4 + size(v) for k, v in item.items())
        elif isinstance(item, list):
            total = 2 + sum(2 + size(v) for v in item)
        else:
            total = len(str(item))
        sizes[id(item)] = total
        if total > limit:
            raise TemplateRefused(
                f"Template format error: the template is over {limit} bytes once its YAML "
                "aliases are resolved"
            )
        return total

    return size(value)


def _plain(value: Any) -> Any:
    """``value`` as plain ``dict``, ``list`` and ``str`` (cfn-lint's node types dropped);
    every YAML timestamp as the text it was written as (CloudFormation and SAM CLI read
    ``AWSTemplateFormatVersion: 2010-09-09`` unquoted as a string)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)
    return value


def check_resources(body: Mapping[str, Any]) -> None:
    """Refuse a template declaring more than :data:`RESOURCES` resources.

    Raises:
        TemplateRefused: "Template format error: Number of resources, N, is greater than
            maximum allowed, 500" (AWS's).
    """
    resources = body.get("Resources")
    count = len(resources) if isinstance(resources, Mapping) else 0
    if count > RESOURCES:
        raise TemplateRefused(
            f"Template format error: Number of resources, {count}, is greater than maximum "
            f"allowed, {RESOURCES}"
        )


def check_sections(body: Mapping[str, Any]) -> None:
    """Refuse a template past CloudFormation's other quotas: more than 200 parameters,
    outputs or mappings (:data:`SECTION_ENTRIES`), a ``Description`` over 1,024 bytes, a
    parameter's ``Default`` over :data:`PARAMETER_VALUE_BYTES`.

    Raises:
        TemplateRefused: "Template format error: Number of outputs, 201, is greater than
            maximum allowed, 200" (the wording of AWS's for resources; AWS's own for these
            is not on record here), and the like.
    """
    for section, most in SECTION_ENTRIES.items():
        entries = body.get(section)
        count = len(entries) if isinstance(entries, Mapping) else 0
        if count > most:
            raise TemplateRefused(
                f"Template format error: Number of {section.lower()}, {count}, is greater "
                f"than maximum allowed, {most}"
            )
    description = body.get("Description")
    if isinstance(description, str) and _size(description) > DESCRIPTION_BYTES:
        raise TemplateRefused(
            f"Template format error: the template's Description is {_size(description)} bytes,"
            f" more than the {DESCRIPTION_BYTES} allowed"
        )
    parameters = body.get("Parameters")
    for name, spec in parameters.items() if isinstance(parameters, Mapping) else ():
        if isinstance(spec, Mapping) and "Default" in spec:
            check_parameter_value(str(name), str(spec["Default"]))


def check_parameter_value(name: str, value: str) -> None:
    """Refuse a parameter value over :data:`PARAMETER_VALUE_BYTES`.

    Raises:
        TemplateRefused: naming the parameter (CloudFormation's wording for this one is
            not recorded here; the code is its ``ValidationError``).
    """
    if _size(value) > PARAMETER_VALUE_BYTES:
        raise TemplateRefused(
            f"Parameter '{name}' has a value of {_size(value)} bytes: a parameter value may "
            f"not exceed {PARAMETER_VALUE_BYTES} bytes"
        )


def parse(text: str, limit: int = TEMPLATE_URL_BYTES) -> dict[str, Any]:
    """A template (or an OpenAPI definition) as plain values, within the quotas of this
    module.

    Args:
        text: YAML or JSON.
        limit: the most bytes ``text`` may have, and have once its YAML aliases are
            resolved (:data:`EXPANDED_BYTES` for a template).

    Raises:
        TemplateRefused: over ``limit`` (:func:`check_template_size`), not YAML or JSON,
            not a mapping, a tag that is not CloudFormation's, aliases resolving past
            cfn-lint's 250,000 values or ``limit``, nested too deeply, intrinsic functions
            that may resolve past :mod:`.expansion`'s bounds, more than :data:`RESOURCES`
            resources: "Template format error: …".
    """
    check_template_size(text, limit)
    try:
        decoded, matches = decode_str(text)
    except RecursionError as exc:  # cfn-lint's JSON fallback of a deeply nested text
        raise TemplateRefused("Template format error: the template is nested too deeply") from exc
    if matches:
        match = matches[0]
        where = f" (line {match.linenumber}, column {match.columnnumber})"
        detail = match.message if match.linenumber <= 1 else f"{match.message}{where}"
        raise TemplateRefused(f"Template format error: {detail}")
    if not isinstance(decoded, Mapping):
        raise TemplateRefused("Template format error: not a JSON or YAML mapping")
    try:
        _expanded_bytes(decoded, limit)
        body: dict[str, Any] = _plain(decoded)
        expansion = resolved_bytes_problem(body)
    except RecursionError as exc:
        raise TemplateRefused("Template format error: the template is nested too deeply") from exc
    if expansion is not None:
        raise TemplateRefused(f"Template format error: {expansion}")
    check_resources(body)
    check_sections(body)
    return body
