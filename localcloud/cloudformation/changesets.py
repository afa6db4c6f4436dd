"""``sam deploy`` against the local server: application change sets, planned as
CloudFormation plans them.

SAM CLI drives CloudFormation's own API: it uploads the artifacts to S3, then
``CreateChangeSet`` (``TemplateURL`` of the packaged template, its ``Parameters``),
``DescribeChangeSet`` until ``CREATE_COMPLETE``, ``ExecuteChangeSet``,
``DescribeStackEvents`` while it waits, and ``DescribeStacks`` for the Outputs. moto's
CloudFormation cannot run this kind of application, so the patched change-set calls
(:mod:`localcloud.cloudformation.api`) hand an *application* change set (one that
declares the SAM transform and ``AWS::Serverless::*`` resources) to this module: its
parameters are resolved and checked (:func:`localcloud.cloudformation.template.from_body`), the SAM
transform applied (:func:`localcloud.cloudformation.deployer.prepare`) and the changes listed as
CloudFormation lists them (an update's: what is added, modified or removed, compared
after the transform); any failure makes the change set ``FAILED`` with the reason.
Executing it, and deleting a stack, is :mod:`localcloud.cloudformation.execution`'s. An UPDATE
change set may update the server's own stack (the one ``serve --template`` deployed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import (
    Change,
    ChangeSet,
    CloudFormationBackend,
    Stack,
)
from moto.cloudformation.utils import (
    generate_changeset_id,
    generate_stack_id,
    validate_create_change_set,
)

from localcloud.cloudformation.changes import update_changes
from localcloud.cloudformation.deployer import prepare
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import ClientFactory, Deployment, Provider
from localcloud.cloudformation.template import Template, from_body, parse_body
from localcloud.cloudformation.transform import declares_transform

NO_CHANGES = (
    "The submitted information didn't contain changes. Submit different information to "
    "create a change set."
)

LOCK = threading.RLock()
"""Held while a change set executes: the local cloud's mapping discovery takes it, so it
never polls a mapping the deployer is still creating (the deployer's own poller does)."""


@dataclass
class Host:
    """What the change-set deployer needs from the running local cloud."""

    client: ClientFactory
    region: str
    providers: Mapping[str, Provider]
    """The provider of each resource type the account deploys."""
    adopt: Callable[[Deployment, Deployment | None], None]
    """Called with every deployment a change set made and the one it replaced, if any
    (start its pollers)."""
    served: Callable[[str], Deployment | None]
    """The deployment the server made itself for a stack name (the one ``serve
    --template`` deployed), which a change set may update or ``DeleteStack`` delete."""
    forget: Callable[[Deployment], None]
    """Called with a deployment whose stack was deleted."""
    visibility_timeout: int | None = None
    """The server's local visibility timeout (``serve --visibility-timeout``), for every
    stack a change set creates."""
    retained_names: set[str] = field(default_factory=set)
    """Physical names of resources that deleted or rolled-back stacks retained
    (``DeletionPolicy: Retain``): they still exist, so a new stack's resource never
    takes one of them (CloudFormation names every resource it creates afresh)."""


_HOST: Host | None = None


def serve(host: Host | None) -> None:
    """Carry out application change sets for ``host`` (``None``: every change set is
    moto's own again)."""
    global _HOST
    _HOST = host


def host() -> Host | None:
    """The local cloud whose application change sets the deployer carries out, if any."""
    return _HOST


class LocalStack(Stack):
    """A moto stack whose resources the local deployer created."""

    deployment: Deployment | None = None
    template_obj: Template | None = None

    @property
    def outputs(self) -> list[dict[str, Any]] | None:
        if self.deployment is None:
            return None
        declared = self.deployment.template.outputs
        return [
            {
                "OutputKey": name,
                "OutputValue": value,
                "Description": declared.get(name, {}).get("Description"),
                "ExportName": None,
            }
            for name, value in self.deployment.outputs.items()
        ] or None

    @property
    def parameter_list(self) -> list[dict[str, Any]]:
        if self.template_obj is None:
            return [{"ParameterKey": k, "ParameterValue": v} for k, v in self.parameters.items()]
        return [
            {"ParameterKey": k, "ParameterValue": v}
            for k, v in self.template_obj.parameters.items()
        ]

    @property
    def stack_parameters(self) -> dict[str, Any]:
        if self.template_obj is None:
            return dict(self.parameters)
        return dict(self.template_obj.parameters)


class LocalChangeSet(ChangeSet):
    """A change set of the application: its changes come from the SAM transform, and
    executing it runs the local deployer."""

    def __init__(
        self,
        *,
        planned: list[Change],
        template_obj: Template | None,
        deployed: Template | None,
        **kwargs: Any,
    ) -> None:
        self._planned = planned
        self.template_obj = template_obj
        self.deployed = deployed
        """The template as the deployer creates it (after the SAM transform)."""
        super().__init__(**kwargs)

    def diff(self) -> list[Change]:
        return list(self._planned)

    def apply(self) -> None:  # moto's execute path must never run for these
        raise AssertionError(
            "a local change set is executed by localcloud.cloudformation.changesets"
        )


def is_application(template: str) -> bool:
    """Whether a template is an application the local deployer carries out: it declares
    the SAM transform (every SAM template does, whatever its resources are written as;
    SAM CLI's managed bucket stack does not, and stays moto's)."""
    try:
        body = parse_body(template)
    except UnsupportedTemplate:
        return False
    return declares_transform(body)


def plan(
    template_text: str, parameters: Mapping[str, str], host: Host
) -> tuple[Template, Template, list[Change]]:
    """Parse and check an application template, apply the SAM transform, and list the
    resources CloudFormation would add, as the transform names them
    (a function's ``SQS`` event ``<Event>`` is ``<Function><Event>``, its event source
    mapping).

    Returns:
        The template as written, as deployed (transformed), and the changes.

    Raises:
        UnsupportedTemplate: the template, a parameter or the transform is refused; the
            message is the change set's status reason.
    """
    template = from_body(parse_body(template_text), dict(parameters))
    deployed, _ = prepare(template, host.region)
    changes = [
        Change("Add", logical_id, str(resource.get("Type")))
        for logical_id, resource in deployed.resources.items()
    ]
    return template, deployed, changes


def create(
    self: CloudFormationBackend,
    host: Host,
    stack_name: str,
    change_set_name: str,
    template: str,
    parameters: dict[str, str],
    description: str,
    change_set_type: str,
    notification_arns: list[str] | None = None,
    tags: dict[str, str] | None = None,
    role_arn: str | None = None,
) -> tuple[str, str]:
    validate_create_change_set(change_set_name)
    existing = next((s for s in self.stacks.values() if s.name == stack_name), None)
    if change_set_type == "UPDATE":
        if existing is None:
            raise ValidationError(stack_name)
        if existing.status in ("ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "UPDATE_ROLLBACK_FAILED"):
            # A stack whose creation failed holds nothing but its name, and one whose update
            # rollback failed is in an unknown state: CloudFormation refuses updates (and
            # offers ContinueUpdateRollback, which the local cloud has not: delete it).
            raise ValidationError(
                stack_name,
                message=f"Stack:{existing.stack_id} is in {existing.status} state and can "
                "not be updated.",
            )
        stack = as_local(self, existing, host)
    elif existing is not None and existing.status != "REVIEW_IN_PROGRESS":
        raise ValidationError(
            stack_name,
            message=f"Stack [{stack_name}] already exists and cannot be created again with "
            "the changeSet",
        )
    elif existing is not None:
        stack = existing
    else:
        stack = LocalStack(  # type: ignore[abstract]  # moto's Stack is instantiated so too
            stack_id=generate_stack_id(stack_name, self.region_name, self.account_id),
            name=stack_name,
            template={},
            parameters=parameters,
            account_id=self.account_id,
            region_name=self.region_name,
            notification_arns=notification_arns,
            tags=tags,
            role_arn=role_arn,
        )
        self.stacks[stack.stack_id] = stack
        stack.status = "REVIEW_IN_PROGRESS"
        stack._add_stack_event("REVIEW_IN_PROGRESS", resource_status_reason="User Initiated")
    reason: str | None = None
    template_obj: Template | None = None
    deployed: Template | None = None
    changes: list[Change] = []
    if change_set_type == "UPDATE" and (
        not isinstance(stack, LocalStack) or stack.deployment is None
    ):
        reason = f"Stack [{stack_name}] was not created by a change set of the local cloud"
    else:
        try:
            template_obj, deployed, changes = plan(template, parameters, host)
        except UnsupportedTemplate as exc:
            reason = str(exc)
    if reason is None and change_set_type == "UPDATE":
        assert isinstance(stack, LocalStack)
        assert stack.template_obj is not None
        assert stack.deployment is not None
        assert template_obj is not None
        if stack.template == template and stack.template_obj.parameters == template_obj.parameters:
            reason = NO_CHANGES
        else:
            assert deployed is not None
            changes = update_changes(stack.deployment, deployed)
            if (
                not changes
                and stack.template_obj.outputs == template_obj.outputs
                and stack.template_obj.parameters == template_obj.parameters
            ):
                reason = NO_CHANGES  # Metadata alone changed: nothing for CloudFormation
    change_set = LocalChangeSet(
        planned=changes,
        template_obj=template_obj,
        deployed=deployed,
        change_set_type=change_set_type,
        change_set_id=generate_changeset_id(change_set_name, self.region_name, self.account_id),
        change_set_name=change_set_name,
        stack=stack,
        template=template,
        parameters=parameters,
        description=description,
        notification_arns=notification_arns,
        tags=tags,
        role_arn=role_arn,
    )
    if reason is None:
        change_set.status, change_set.execution_status = "CREATE_COMPLETE", "AVAILABLE"
    else:
        change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
        change_set.status_reason = reason
    self.change_sets[change_set.change_set_id] = change_set
    return change_set.change_set_id, stack.stack_id


def as_local(self: CloudFormationBackend, stack: Stack, host: Host) -> Stack:
    """The server's own stack (published by ``make serve`` from source) as a stack a
    change set can update: the same stack id and events, its deployment attached."""
    if isinstance(stack, LocalStack):
        return stack
    served = host.served(stack.name)
    if served is None:
        return stack
    local = LocalStack(  # type: ignore[abstract]  # moto's Stack is instantiated so too
        stack_id=stack.stack_id,
        name=stack.name,
        template={},
        parameters=dict(stack.parameters),
        account_id=self.account_id,
        region_name=self.region_name,
    )
    local.template = stack.template
    local.template_dict = stack.template_dict
    local.creation_time = stack.creation_time
    local.events = stack.events
    local.status = stack.status
    local.deployment = served
    local.template_obj = served.written
    self.stacks[stack.stack_id] = local
    return local


def find_change_set(
    self: CloudFormationBackend, change_set_name: str, stack_name: str | None
) -> ChangeSet:
    if change_set_name in self.change_sets:
        return self.change_sets[change_set_name]
    for change_set in reversed(self.change_sets.values()):
        if change_set.change_set_name == change_set_name and stack_name in (
            None,
            change_set.stack_name,
            change_set.stack_id,
        ):
            return change_set
    raise ValidationError(message=f"ChangeSet [{change_set_name}] does not exist")
