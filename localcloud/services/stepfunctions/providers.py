"""``AWS::StepFunctions::StateMachine``: a state machine moto's interpreter executes; its
``lambda:invoke`` tasks (and tasks whose ``Resource`` is a function ARN) reach the
account's functions; its other Task resources are those of
:data:`~localcloud.services.stepfunctions.integrations.RUN_LOCALLY`, any other refused by
name before it is created. ``StateMachineName`` (SAM's ``Name``) is used as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, read_s3_object
from localcloud.cloudformation.template_limits import TemplateRefused, read_file
from localcloud.cloudformation.transform import LOCAL_PATHS, local_path
from localcloud.services.stepfunctions.integrations import first_refused

DEFINITION_BYTES: Final = 1024 * 1024
"""A state machine's definition: 1 MB ("Maximum size of a state machine definition", Step
Functions service quotas)."""


class StateMachineProvider(Provider):
    TYPE = "AWS::StepFunctions::StateMachine"
    PROPERTIES = frozenset(
        {
            "DefinitionS3Location",
            "DefinitionString",
            "Definition",
            "DefinitionSubstitutions",
            "RoleArn",
            "StateMachineType",
            "Tags",
            "StateMachineName",
        }
    )
    NAME_PROPERTY = "StateMachineName"
    NAME_LIMIT = 80

    def exists(self, stack: Deployment, name: str) -> bool:
        machines = stack.client("stepfunctions").get_paginator("list_state_machines").paginate()
        return any(m["name"] == name for page in machines for m in page["stateMachines"])

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        definition = _definition(stack, logical_id, properties)
        for key, value in properties.get("DefinitionSubstitutions", {}).items():
            definition = definition.replace(f"${{{key}}}", str(value))
        _check_integrations(logical_id, definition)
        name = self.name(stack, logical_id, properties)
        arn = stack.client("stepfunctions").create_state_machine(
            name=name,
            definition=definition,
            roleArn=str(properties["RoleArn"]),
            type=str(properties.get("StateMachineType", "STANDARD")),
        )["stateMachineArn"]
        stack.refs[logical_id] = arn
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Name")] = name

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("stepfunctions").delete_state_machine(stateMachineArn=stack.refs[logical_id])


def _check_integrations(logical_id: str, definition: str) -> None:
    """Refuse, naming the state, a Task resource the local cloud does not run.

    Raises:
        UnsupportedTemplate: ``<logical id>.Definition/States/<state>/Resource``.
    """
    try:
        document = json.loads(definition)
    except ValueError:
        return  # CreateStateMachine answers that
    refused = first_refused(document) if isinstance(document, dict) else None
    if refused is not None:
        path, reason = refused
        raise UnsupportedTemplate(f"{logical_id}.Definition{path}", reason)


def _definition(stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> str:
    """The definition text: inline (``Definition``, ``DefinitionString``), a local file
    (a from-source deploy's ``DefinitionUri``, read no further than
    :data:`DEFINITION_BYTES`) or the object ``sam deploy`` uploaded."""
    if "Definition" in properties:
        return json.dumps(properties["Definition"])
    if "DefinitionString" in properties:
        return str(properties["DefinitionString"])
    location = properties.get("DefinitionS3Location")
    where = f"{logical_id}.DefinitionS3Location"
    if not isinstance(location, Mapping):
        raise UnsupportedTemplate(where, "a definition is needed")
    if location.get("Bucket") == LOCAL_PATHS:
        path = local_path(str(location["Key"]))
        if not path.is_file():
            raise UnsupportedTemplate(f"{logical_id}.DefinitionUri", f"{path} is not a file")
        try:
            return read_file(path, DEFINITION_BYTES, "A state machine definition")
        except TemplateRefused as exc:
            raise UnsupportedTemplate(f"{logical_id}.DefinitionUri", str(exc)) from exc
    body = read_s3_object(
        stack, where, location["Bucket"], location["Key"], location.get("Version")
    )
    if len(body) > DEFINITION_BYTES:
        raise UnsupportedTemplate(where, f"a definition over {DEFINITION_BYTES} bytes")
    return body.decode()


PROVIDERS: Final = (StateMachineProvider(),)
