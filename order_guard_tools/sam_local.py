"""The ``--env-vars`` file that points ``sam local invoke`` at a stack.

SAM CLI gives a function's container the template's own variables, with ``!Ref`` of a
resource resolved to its logical id (``ORDERS_TABLE_NAME=OrdersTable``), and overrides
only the variables the template declares. :func:`env_vars` maps every such variable to
the stack's physical name, read from the Output whose value is the same ``!Ref``, and
sets ``AWS_ENDPOINT_URL`` (declared empty in the template) when the stack is a local
server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localcloud.cloudformation.deployer import function_properties
from localcloud.cloudformation.template import Template


def env_vars(
    template: Template, outputs: Mapping[str, str], endpoint_url: str | None
) -> dict[str, dict[str, str]]:
    """``{FunctionLogicalId: {VARIABLE: value}}`` for ``sam local invoke --env-vars``.

    Args:
        template: the template the stack was deployed from.
        outputs: the stack's Outputs (``OutputKey → OutputValue``).
        endpoint_url: the endpoint as the container reaches it (a local server), or
            ``None`` for a stack on AWS.

    Raises:
        KeyError: a variable refers to a resource that no Output publishes.
    """
    published = {
        _ref(spec.get("Value")): outputs[key]
        for key, spec in template.outputs.items()
        if _ref(spec.get("Value")) is not None and key in outputs
    }
    result: dict[str, dict[str, str]] = {}
    for logical_id in template.of_type("AWS::Serverless::Function"):
        variables = function_properties(template, logical_id).get("Environment", {})
        names: dict[str, str] = {}
        for name, value in variables.get("Variables", {}).items():
            target = _ref(value)
            if target in template.resources:
                names[name] = published[target]
        if endpoint_url is not None and "AWS_ENDPOINT_URL" in variables.get("Variables", {}):
            names["AWS_ENDPOINT_URL"] = endpoint_url
        result[logical_id] = names
    return result


def _ref(value: Any) -> str | None:
    if isinstance(value, Mapping) and set(value) == {"Ref"}:
        return str(value["Ref"])
    return None
