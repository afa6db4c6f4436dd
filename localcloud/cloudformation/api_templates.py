"""moto's CloudFormation reading templates as CloudFormation does: within its quotas, and
never as Python objects.

moto parses a template with PyYAML's unsafe loader (``yaml.load(body,
Loader=yaml.Loader)``, after a ``yaml.add_multi_constructor("", …)`` that also changes
PyYAML's global loaders), so a ``!!python/object/apply:os.system [...]`` in a
``TemplateBody`` ran in the server, and a few hundred bytes of YAML aliases took it past
gigabytes. Every moto parse goes through :func:`.template_limits.parse` instead, and a
request is checked as CloudFormation's API checks it before moto changes anything:

- ``Stack._parse_template``, ``Stack.has_template`` and ``ChangeSet._parse_template``:
  every stack, stack set and change set moto makes;
- ``get_template_summary_response_from_template`` (``GetTemplateSummary``) and
  ``CloudFormationResponse.validate_template`` (``ValidateTemplate``, whose cfn-lint run
  stays moto's);
- ``CreateStack``, ``UpdateStack``, ``CreateChangeSet``, ``GetTemplateSummary``: a
  ``TemplateBody`` within 51,200 bytes, parameter values within 4,096 bytes, and the
  template (body or ``TemplateURL``) parsed before moto's own code runs.

A refusal is CloudFormation's ``ValidationError`` (:class:`.template_limits.TemplateRefused`'s
message).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

from moto.cloudformation import responses as moto_responses
from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import ChangeSet, Stack
from moto.cloudformation.responses import CloudFormationResponse
from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult

from localcloud.cloudformation.template_limits import (
    TemplateRefused,
    check_parameter_value,
    check_template_body,
    parse,
)
from localcloud.patches.registry import Method, Patch

__all__ = ["PATCHES", "parsed"]


@contextlib.contextmanager
def _as_validation_error() -> Iterator[None]:
    try:
        yield
    except TemplateRefused as exc:
        raise ValidationError(message=exc.message) from exc


def parsed(template: Any) -> dict[str, Any]:
    """``template`` (text, or a template moto holds as parsed already) as moto reads it.

    Raises:
        ValidationError: CloudFormation refuses it (:func:`.template_limits.parse`).
    """
    if isinstance(template, dict):
        return template
    with _as_validation_error():
        return parse(str(template))


def _stack_parse(_original: Method) -> Method:
    def _parse_template(self: Stack) -> None:
        self.template_dict = parsed(self.template)

    return _parse_template


def _stack_has_template(_original: Method) -> Method:
    def has_template(self: Stack, other_template: str) -> bool:
        self._parse_template()
        return bool(self.template_dict == parsed(other_template))

    return has_template


def _change_set_parse(_original: Method) -> Method:
    def _parse_template(self: ChangeSet) -> None:
        self.template_dict = parsed(self.template)

    return _parse_template


def _summary(_original: Method) -> Method:
    def get_template_summary_response_from_template(template_body: str) -> dict[str, Any]:
        """moto's summary of ``template_body``, from the bounded parse."""
        template = dict(parsed(template_body))
        resources = template.get("Resources")
        template["ResourceTypes"] = [
            resource.get("Type")
            for resource in (resources.values() if isinstance(resources, dict) else [])
            if isinstance(resource, dict)
        ]
        if "AWSTemplateFormatVersion" in template:
            template["Version"] = template["AWSTemplateFormatVersion"]
        declared = template.get("Parameters")
        summary = []
        for key, value in declared.items() if isinstance(declared, dict) else []:
            spec = value if isinstance(value, dict) else {}
            parameter: dict[str, Any] = {
                "ParameterKey": key,
                "Description": spec.get("Description", ""),
                "DefaultValue": spec.get("Default", None),
                "NoEcho": spec.get("NoEcho", False),
                "ParameterType": spec.get("Type", "String"),
                "ParameterConstraints": {},
            }
            if "AllowedValues" in spec:
                parameter["ParameterConstraints"]["AllowedValues"] = spec["AllowedValues"]
            summary.append(parameter)
        template["Parameters"] = summary
        return template

    return get_template_summary_response_from_template


def _checked_request(self: CloudFormationResponse) -> None:
    """The request's ``TemplateBody``, ``TemplateURL`` and ``Parameters`` as
    CloudFormation's API checks them, before moto's code runs.

    Raises:
        ValidationError: a body over 51,200 bytes, a parameter value over 4,096 bytes, a
            template CloudFormation refuses.
    """
    body = self._get_param("TemplateBody")
    url = self._get_param("TemplateURL")
    with _as_validation_error():
        if body:
            check_template_body(str(body))
        for parameter in self._get_param("Parameters", []) or []:
            value = parameter.get("ParameterValue")
            if value is not None:
                check_parameter_value(str(parameter.get("ParameterKey")), str(value))
    if body:
        parsed(body)
    elif url:
        parsed(self._get_stack_from_s3_url(url))


def _checked(original: Method) -> Method:
    def action(self: CloudFormationResponse) -> Any:
        _checked_request(self)
        try:
            return original(self)
        except JsonRESTError as refused:
            # moto creates a stack's resources in the call itself, and another service's
            # refusal (Lambda's of a Timeout over 900 s) left the call with that service's
            # JSON error in CloudFormation's XML answer, which no SDK parses. On AWS the
            # resource fails with the handler's message; here the call does, with it.
            raise ValidationError(
                message=f'Resource handler returned message: "{refused.message}" '
                f"(Error Code: {refused.error_type}, Status Code: {refused.code}, "
                "HandlerErrorCode: InvalidRequest)"
            ) from refused

    return action


def _validate_template(_original: Method) -> Method:
    def validate_template(self: CloudFormationResponse) -> ActionResult:
        _checked_request(self)
        body, url = self._get_param("TemplateBody"), self._get_param("TemplateURL")
        if not body and not url:
            raise ValidationError(message="Either Template URL or Template Body must be specified.")
        body = body or self._get_stack_from_s3_url(url)
        template = parsed(body)
        found = self.cloudformation_backend.validate_template(body)  # moto's cfn-lint run
        if found:
            raise ValidationError(message=str(found[0].message))
        description = template.get("Description")
        return ActionResult(
            {
                "Description": description if isinstance(description, str) else "",
                "Parameters": [],
                "Capabilities": [],
                "DeclaredTransforms": [],
            }
        )

    return validate_template


_TEMPLATE_PARSED = "a template is parsed within CloudFormation's quotas, never as Python objects"
_REQUEST_CHECKED = (
    "TemplateBody within 51,200 bytes, parameter values within 4,096, the template parsed first"
)

PATCHES: Final = (
    Patch(Stack, "_parse_template", ("self",), _stack_parse, _TEMPLATE_PARSED),
    Patch(Stack, "has_template", ("self", "other_template"), _stack_has_template, _TEMPLATE_PARSED),
    Patch(ChangeSet, "_parse_template", ("self",), _change_set_parse, _TEMPLATE_PARSED),
    Patch(
        moto_responses,
        "get_template_summary_response_from_template",
        ("template_body",),
        _summary,
        _TEMPLATE_PARSED,
    ),
    Patch(
        CloudFormationResponse,
        "validate_template",
        ("self",),
        _validate_template,
        _TEMPLATE_PARSED + "; the request checked as the API checks it",
    ),
    *(
        Patch(CloudFormationResponse, name, ("self",), _checked, _REQUEST_CHECKED)
        for name in ("create_stack", "update_stack", "create_change_set", "get_template_summary")
    ),
)
