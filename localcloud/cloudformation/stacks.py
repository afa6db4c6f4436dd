"""The local stack as CloudFormation shows it: Parameters, Outputs and every resource
with its physical id.

:func:`deploy <localcloud.cloudformation.deployer.deploy>` creates the resources itself; this module
publishes them as a CloudFormation stack in moto, so ``describe-stacks`` shows the
resolved parameters and the Outputs, and ``describe-stack-resources`` /
``list-stack-resources`` list the resources as the SAM transform names them
(``AWS::Serverless::Function`` → ``AWS::Lambda::Function`` plus one
``AWS::Lambda::EventSourceMapping`` per SQS event), each with its physical id (the value
``Ref`` gives, the mapping's UUID).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localcloud.cloudformation.provider import Deployment


@dataclass(frozen=True)
class StackResource:
    """What moto's stack-resource responses read from a resource."""

    logical_resource_id: str
    physical_resource_id: str
    cf_resource_type: str


_RESOURCES: dict[str, list[StackResource]] = {}  # by stack name and by stack id


def resources_of(deployment: Deployment) -> list[StackResource]:
    """Every resource of the deployment, as the deployed (transformed) stack lists it."""
    return [
        StackResource(logical_id, str(deployment.refs[logical_id]), str(resource["Type"]))
        for logical_id, resource in deployment.template.resources.items()
        if logical_id in deployment.refs
    ]


def register(deployment: Deployment, client: Callable[[str], Any]) -> None:
    """Publish ``deployment`` as a CloudFormation stack named ``deployment.stack_name``."""
    parameters = deployment.template.parameters
    body = {
        "Description": "a stack on the local cloud (resources made by its deployer)",
        "Parameters": {name: {"Type": "String"} for name in parameters},
        "Resources": {"LocalCloudMarker": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {name: {"Value": value} for name, value in deployment.outputs.items()},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # moto: WaitConditionHandle unsupported
        stack_id = client("cloudformation").create_stack(
            StackName=deployment.stack_name,
            TemplateBody=json.dumps(body),
            Parameters=[
                {"ParameterKey": name, "ParameterValue": value}
                for name, value in parameters.items()
            ],
        )["StackId"]
    listed = resources_of(deployment)
    _RESOURCES[deployment.stack_name] = listed
    _RESOURCES[stack_id] = listed


def publish(deployment: Deployment, stack_id: str) -> None:
    """List ``deployment``'s resources as those of an existing stack (a change set's)."""
    listed = resources_of(deployment)
    _RESOURCES[deployment.stack_name] = listed
    _RESOURCES[stack_id] = listed


def forget(*names: str) -> None:
    """A deleted stack lists no resources (by name and by stack id)."""
    for name in names:
        _RESOURCES.pop(name, None)


def listed(name_or_stack_id: str) -> list[StackResource] | None:
    """The resources of a local stack, by stack name or id (``None``: not a local stack)."""
    return _RESOURCES.get(name_or_stack_id)
