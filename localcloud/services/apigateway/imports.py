"""API definitions imported as API Gateway refuses them: an OpenAPI definition that is not
YAML (or whose YAML aliases resolve past their bound, :mod:`localcloud.patches.yaml_documents`)
is ``400 BadRequestException`` ("Invalid OpenAPI input.", API Gateway's message, followed
by what is wrong), never a ``500``.

moto 5.2.5 parses the body of ``ImportRestApi`` and ``PutRestApi``
(``moto.apigateway.utils.deserialize_body``) and of ``ReimportApi``
(``moto.apigatewayv2.models.Api.import_api``) with ``yaml.safe_load`` and lets its
``YAMLError`` out: the server answered 500 with a traceback on its output, and botocore
retried the call four times.
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from moto.apigateway import responses as rest_responses
from moto.apigateway.exceptions import BadRequestException
from moto.apigatewayv2.exceptions import BadRequestException as HttpBadRequestException
from moto.apigatewayv2.models import Api

from localcloud.patches.registry import Method, Patch

__all__ = ["PATCHES", "invalid_input"]


def invalid_input(error: yaml.YAMLError) -> str:
    """API Gateway's message for a definition that does not parse, naming why."""
    problem = getattr(error, "problem", None) or str(error)
    return f"Invalid OpenAPI input. The definition is not valid YAML: {problem}"


def _rest_body(original: Method) -> Method:
    def deserialize_body(body: str) -> Any:
        try:
            return original(body)
        except yaml.YAMLError as exc:
            raise BadRequestException(invalid_input(exc)) from exc

    return deserialize_body


def _http_import(original: Method) -> Method:
    def import_api(self: Api, body_str: str, fail_on_warnings: bool) -> None:
        try:
            original(self, body_str, fail_on_warnings)
        except yaml.YAMLError as exc:
            raise HttpBadRequestException(invalid_input(exc)) from exc

    return import_api


PATCHES: Final = (
    Patch(
        rest_responses,
        "deserialize_body",
        ("body",),
        _rest_body,
        "ImportRestApi and PutRestApi of a definition that is not YAML answer 400 "
        "BadRequestException",
    ),
    Patch(
        Api,
        "import_api",
        ("self", "body_str", "fail_on_warnings"),
        _http_import,
        "ReimportApi of a definition that is not YAML answers 400 BadRequestException",
    ),
)
