"""``sam deploy`` against the local server: CloudFormation change sets carried out by the
local deployer.

SAM CLI drives CloudFormation's own API: it uploads the artifacts to S3, then
``CreateChangeSet`` (``TemplateURL`` of the packaged template, its ``Parameters``),
``DescribeChangeSet`` until ``CREATE_COMPLETE``, ``ExecuteChangeSet``,
``DescribeStackEvents`` while it waits, and ``DescribeStacks`` for the Outputs. moto's
CloudFormation cannot run this application (it does not apply the SAM transform, and its
resources would not run the handlers), so :func:`install` replaces these methods of
moto's ``CloudFormationBackend``, as :mod:`localcloud.sqs.mapping` replaces
``LambdaBackend`` methods:

- a change set whose template declares the SAM transform and ``AWS::Serverless::*``
  resources is an *application* change set: its parameters are resolved and checked
  (:func:`localcloud.cfn.template.from_body`), the transform is applied with ``samtranslator``
  to list the changes as CloudFormation lists them, and any failure makes the change
  set ``FAILED`` with the reason, as CloudFormation does;
- executing it runs :func:`localcloud.cfn.deployer.deploy` with the packaged template: the
  functions run from the zip ``sam deploy`` uploaded (:mod:`localcloud.lambda_runtime.worker`),
  the state machine from the uploaded definition. A resource the deployer cannot create
  becomes ``CREATE_FAILED`` with the reason in the stack's events, and the rollback
  deletes what was created before it (keeping ``DeletionPolicy: Retain`` resources),
  then ``ROLLBACK_COMPLETE``; such a stack can only be deleted, as on AWS. The server
  never answers with a traceback;
- an UPDATE change set (a second ``sam deploy``) is carried out by
  :func:`localcloud.cfn.update.update`: kept queues and tables keep their data,
  functions are re-created from the new zip; the server's own stack (``make serve``'s
  ``order-guard``) can be updated so too. ``DeleteStack`` (``sam delete``) deletes the
  resources except those whose ``DeletionPolicy`` is ``Retain``; a retained resource's
  name is never given to a resource of a later stack (a new stack of the same name gets
  a new orders table, as on AWS);
- every other change set (SAM CLI's managed bucket stack) is moto's, with its Outputs
  computed after execution (moto leaves a stack created by a change set without them);
- ``TemplateURL`` is read from the local S3 whatever host it names: SAM CLI builds it
  from the endpoint (``http://127.0.0.1:5000/bucket/key``), which moto parses as a
  virtual-hosted bucket named ``127``.

Executing is synchronous (``ExecuteChangeSet`` returns once the stack is complete or
rolled back); SAM CLI's waiters see the final status on their first look.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import (
    Change,
    ChangeSet,
    CloudFormationBackend,
    Event,
    Stack,
)
from moto.cloudformation.utils import (
    generate_changeset_id,
    generate_stack_id,
    validate_create_change_set,
)

from localcloud.cfn import stacks as stack_module
from localcloud.cfn import update as stack_update
from localcloud.cfn.deployer import ClientFactory, Deployment, deploy, prepare
from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.template import Template, from_body, parse_body
from localcloud.cfn.transform import declares_transform

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
    adopt: Callable[[Deployment, Deployment | None], None]
    """Called with every deployment a change set made and the one it replaced, if any
    (start its pollers)."""
    served: Callable[[str], Deployment | None]
    """The deployment the server made itself for a stack name (``make serve``'s own
    stack), which a change set may update or ``DeleteStack`` delete."""
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
        raise AssertionError("a local change set is executed by localcloud.cfn.changesets")


def is_application(template: str) -> bool:
    """Whether a template is an application the local deployer carries out: it declares
    the SAM transform and at least one ``AWS::Serverless::*`` resource."""
    try:
        body = parse_body(template)
    except UnsupportedTemplate:
        return False
    resources = body.get("Resources", {})
    return declares_transform(body) and any(
        str(r.get("Type", "")).startswith("AWS::Serverless::")
        for r in resources.values()
        if isinstance(r, Mapping)
    )


def plan(
    template_text: str, parameters: Mapping[str, str], host: Host
) -> tuple[Template, Template, list[Change]]:
    """Parse and check an application template, apply the SAM transform, and list the
    resources CloudFormation would add, as the transform names them
    (``QueueWorkerFunctionJobs`` …).

    Returns:
        The template as written, as deployed (transformed), and the changes.

    Raises:
        UnsupportedTemplate: the template, a parameter or the transform is refused; the
            message is the change set's status reason.
    """
    template = from_body(parse_body(template_text), dict(parameters))
    deployed, _ = prepare(template, host.client, host.region)
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
            changes = _update_changes(stack.deployment, deployed)
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


def _update_changes(previous: Deployment, deployed: Template) -> list[Change]:
    """An update's changes as CloudFormation lists them, resource by resource of the
    templates as deployed (after the transform, so ``Globals`` and the resources SAM
    generates are compared as CloudFormation compares them): ``Add`` for a new resource,
    ``Modify`` for one whose definition or whose parameters (directly or through a
    condition) changed, ``Remove`` for one the template no longer has."""
    changes: list[Change] = []
    for logical_id, resource in deployed.resources.items():
        kind = str(resource.get("Type"))
        if logical_id not in previous.refs:
            changes.append(Change("Add", logical_id, kind))
        elif _changed(previous.template, deployed, logical_id):
            changes.append(Change("Modify", logical_id, kind))
    changes += [
        Change("Remove", logical_id, str(previous.template.resources[logical_id]["Type"]))
        for logical_id in previous.refs
        if logical_id not in deployed.resources and logical_id in previous.template.resources
    ]
    return changes


def _changed(old: Template, new: Template, logical_id: str) -> bool:
    """Whether ``logical_id``'s definition, or anything it depends on, differs: a
    parameter it names directly or through a condition, or the definition of a condition
    it uses. ``Metadata`` is left out: CloudFormation updates no resource for it alone
    (``sam build`` adds ``SamResourceId`` to every resource)."""

    def definition(template: Template) -> dict[str, Any]:
        resource = template.resources.get(logical_id, {})
        return {k: v for k, v in resource.items() if k != "Metadata"}

    after = definition(new)
    if definition(old) != after:
        return True
    parameters, conditions = _references([after], new)
    old_conditions = old.body.get("Conditions", {})
    new_conditions = new.body.get("Conditions", {})
    return any(old.parameters.get(name) != new.parameters.get(name) for name in parameters) or any(
        old_conditions.get(name) != new_conditions.get(name) for name in conditions
    )


def _references(value: Any, template: Template) -> tuple[set[str], set[str]]:
    """The parameters and the conditions a template value uses: ``Ref``, ``${Name}`` in
    ``Fn::Sub``, and the conditions it names (``Condition``, ``Fn::If``) with what they
    use in turn."""
    names: set[str] = set()
    conditions: Mapping[str, Any] = template.body.get("Conditions", {})
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if isinstance(node, str):
            names.update(re.findall(r"\$\{([A-Za-z0-9]+)\}", node))
            return
        if not isinstance(node, dict):
            return
        for key, item in node.items():
            if key == "Ref" and isinstance(item, str):
                names.add(item)
            elif key in ("Condition", "Fn::If"):  # (an IAM policy's Condition is a map)
                condition = item[0] if key == "Fn::If" and isinstance(item, list) else item
                if isinstance(condition, str) and condition not in seen:
                    seen.add(condition)
                    walk(conditions.get(condition))
            walk(item)

    walk(value)
    return {name for name in names if name in template.parameters}, seen


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


def _event(
    stack: Stack,
    logical_id: str,
    physical_id: str,
    kind: str,
    status: str,
    reason: str | None = None,
) -> None:
    stack.events.append(
        Event(
            stack_id=stack.stack_id,
            stack_name=stack.name,
            logical_resource_id=logical_id,
            physical_resource_id=physical_id,
            resource_type=kind,
            resource_status=status,
            resource_status_reason=reason,
            resource_properties=None,
        )
    )


def execute(self: CloudFormationBackend, host: Host, change_set: LocalChangeSet) -> None:
    """``ExecuteChangeSet`` of an application change set: the local deployer creates or
    updates the stack, with CloudFormation's events, statuses and rollbacks."""
    if change_set.execution_status != "AVAILABLE":
        raise ValidationError(
            message=f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current "
            f"status of [{change_set.status}]"
        )
    stack = self.stacks[change_set.stack_id]
    assert isinstance(stack, LocalStack)
    assert change_set.template_obj is not None
    previous = stack.deployment if change_set.change_set_type == "UPDATE" else None
    verb = "UPDATE" if previous is not None else "CREATE"
    change_set.execution_status = "EXECUTE_IN_PROGRESS"
    stack.status = f"{verb}_IN_PROGRESS"
    stack._add_stack_event(stack.status, resource_status_reason="User Initiated")
    removed: list[stack_update.Removed] = []
    partial: list[Deployment] = []
    with LOCK:
        try:
            if previous is None:
                deployment = deploy(
                    change_set.template_obj,
                    host.client,
                    stack_name=stack.name,
                    region=host.region,
                    visibility_timeout=host.visibility_timeout,
                    reserved_names=frozenset(host.retained_names),
                    on_failure=partial.append,
                )
            else:
                deployment, removed = stack_update.update(
                    previous,
                    change_set.template_obj,
                    host.client,
                )
        except Exception as exc:  # noqa: BLE001 - every failure is a stack status, as on AWS
            if previous is None:
                _roll_back(stack, change_set, exc, host, partial[0] if partial else None)
            else:
                _update_failed(stack, change_set, exc, host, previous)
            return
        _resource_events(stack, deployment, f"{verb}_IN_PROGRESS", f"{verb}_COMPLETE")
        for gone in removed:
            _removed_event(stack, gone)
        host.retained_names |= stack_update.retained_names(removed)
        stack.deployment = deployment
        stack.template_obj = change_set.template_obj
        stack.template = change_set.template
        stack.template_dict = change_set.template_dict
        stack.description = change_set.template_dict.get("Description")
        stack_module.publish(deployment, stack.stack_id)
        host.adopt(deployment, previous)
    stack.status = f"{verb}_COMPLETE"
    stack._add_stack_event(stack.status)
    change_set.execution_status = "EXECUTE_COMPLETE"


def _resource_events(stack: Stack, deployment: Deployment, *statuses: str) -> None:
    """One event per status for each resource of ``deployment``, as the stack lists it."""
    for listed in stack_module.resources_of(deployment):
        for status in statuses:
            _event(
                stack,
                listed.logical_resource_id,
                listed.physical_resource_id,
                listed.cf_resource_type,
                status,
            )


def _removed_event(stack: Stack, gone: stack_update.Removed) -> None:
    kind = gone.resource_type
    if gone.retained:
        _event(stack, gone.logical_id, gone.physical_id, kind, "DELETE_SKIPPED")
        return
    if gone.failure is not None:
        _event(stack, gone.logical_id, gone.physical_id, kind, "DELETE_IN_PROGRESS")
        _event(stack, gone.logical_id, gone.physical_id, kind, "DELETE_FAILED", gone.failure)
        return
    for status in ("DELETE_IN_PROGRESS", "DELETE_COMPLETE"):
        _event(stack, gone.logical_id, gone.physical_id, kind, status)


def _failed_resource(
    change_set: LocalChangeSet, exc: Exception, failed_at: str | None
) -> tuple[str, str, str]:
    """The resource a deployer error names (or, for an error that names none, such as an
    API error, the one being created, ``failed_at``), as the deployed stack lists it (a
    function's event is its event source mapping, ``QueueWorkerFunctionJobs``), and the
    reason: ``(logical id, type, reason)``."""
    where = getattr(exc, "where", "") or failed_at or ""
    logical_id = where.split(".")[0] if where else change_set.stack_name
    reason = str(exc) if isinstance(exc, UnsupportedTemplate) else f"{type(exc).__name__}: {exc}"
    declared = change_set.deployed.declared_resources if change_set.deployed else {}
    kind = str(declared.get(logical_id, {}).get("Type", "AWS::CloudFormation::Stack"))
    return logical_id, kind, reason


def _update_failed(
    stack: LocalStack,
    change_set: LocalChangeSet,
    exc: Exception,
    host: Host,
    previous: Deployment,
) -> None:
    """A failed update, as CloudFormation reports it: the failing resource's
    ``UPDATE_FAILED`` with the reason, ``UPDATE_ROLLBACK_IN_PROGRESS``, then
    ``UPDATE_ROLLBACK_COMPLETE`` with the previous template running again (an unsupported
    type is found before anything changed; a later failure is rolled back by
    :func:`localcloud.cfn.update.update`), or ``UPDATE_ROLLBACK_FAILED`` when the
    rollback itself failed (the stack is then to be deleted and deployed again)."""
    rolled_back = exc if isinstance(exc, stack_update.UpdateRolledBack) else None
    failure = rolled_back.cause if rolled_back is not None else exc
    failed_at = rolled_back.failed_at if rolled_back is not None else None
    logical_id, kind, reason = _failed_resource(change_set, failure, failed_at)
    _event(stack, logical_id, "", kind, "UPDATE_FAILED", reason)
    stack._add_stack_event(
        "UPDATE_ROLLBACK_IN_PROGRESS",
        resource_status_reason=f"The following resource(s) failed to update: [{logical_id}].",
    )
    where = getattr(exc, "where", "") or ""
    untouched = isinstance(exc, UnsupportedTemplate) and where.endswith(".Type")
    if rolled_back is not None:
        restored = rolled_back.deployment
        _resource_events(stack, restored, "UPDATE_COMPLETE")
        stack.deployment = restored
        stack_module.publish(restored, stack.stack_id)
        host.adopt(restored, previous)
    stack.status = (
        "UPDATE_ROLLBACK_COMPLETE" if untouched or rolled_back else "UPDATE_ROLLBACK_FAILED"
    )
    stack._add_stack_event(stack.status)
    change_set.execution_status = "EXECUTE_FAILED"


def delete_stack(self: CloudFormationBackend, host: Host, name_or_stack_id: str) -> bool:
    """``DeleteStack`` of an application stack: its resources deleted except those whose
    ``DeletionPolicy`` is ``Retain`` (``DELETE_SKIPPED``), its pollers and worker
    processes stopped, then ``DELETE_COMPLETE``.

    Returns:
        False when the stack is not the local deployer's (moto deletes it).
    """
    stack = next(
        (s for s in self.stacks.values() if name_or_stack_id in (s.name, s.stack_id)), None
    )
    if stack is None:
        return False
    stack = as_local(self, stack, host)
    if not isinstance(stack, LocalStack) or stack.deployment is None:
        return False
    deployment = stack.deployment
    stack.status = "DELETE_IN_PROGRESS"
    stack._add_stack_event("DELETE_IN_PROGRESS", resource_status_reason="User Initiated")
    with LOCK:
        try:
            removed = stack_update.delete(deployment, host.client)
        except Exception as exc:  # noqa: BLE001 - a failed delete is a stack status
            stack._add_stack_event(
                "DELETE_FAILED", resource_status_reason=f"{type(exc).__name__}: {exc}"
            )
            stack.status = "DELETE_FAILED"
            return True
        for gone in removed:
            _removed_event(stack, gone)
        host.retained_names |= stack_update.retained_names(removed)
        host.forget(deployment)
        stack_module.forget(stack.name, stack.stack_id)
        stack.deployment = None
    self.stacks.pop(stack.stack_id)
    self.deleted_stacks[stack.stack_id] = stack
    stack.status = "DELETE_COMPLETE"
    stack._add_stack_event("DELETE_COMPLETE")
    return True


def _roll_back(
    stack: LocalStack,
    change_set: LocalChangeSet,
    exc: Exception,
    host: Host,
    partial: Deployment | None,
) -> None:
    """A failed create, as CloudFormation carries it out: the resources created before the
    failure (``CREATE_COMPLETE``), the failing one's ``CREATE_FAILED`` with the reason,
    then ``ROLLBACK_IN_PROGRESS``, each created resource deleted in reverse order
    (``DELETE_COMPLETE``; ``DELETE_SKIPPED`` for ``DeletionPolicy: Retain``, which a
    create rollback keeps, unlike ``RetainExceptOnCreate``), then ``ROLLBACK_COMPLETE``;
    ``DELETE_FAILED`` and ``ROLLBACK_FAILED`` if a delete fails."""
    failed_at = partial.failed_at if partial is not None else None
    logical_id, kind, reason = _failed_resource(change_set, exc, failed_at)
    if partial is not None:
        _resource_events(stack, partial, "CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    _event(stack, logical_id, "", kind, "CREATE_FAILED", reason)
    stack._add_stack_event(
        "ROLLBACK_IN_PROGRESS",
        resource_status_reason=f"The following resource(s) failed to create: [{logical_id}]. "
        "Rollback requested by user.",
    )
    change_set.execution_status = "EXECUTE_FAILED"
    # The stack keeps the template and parameters it failed to create with (GetTemplate,
    # GetTemplateSummary, a parameter's UsePreviousValue).
    stack.template_obj = change_set.template_obj
    stack.template = change_set.template
    stack.template_dict = change_set.template_dict
    stack.description = change_set.template_dict.get("Description")
    if partial is not None:
        try:
            removed = stack_update.delete(partial, host.client, create_rollback=True)
        except Exception as failed:  # noqa: BLE001 - a failed rollback is a stack status
            stack._add_stack_event(
                "ROLLBACK_FAILED", resource_status_reason=f"{type(failed).__name__}: {failed}"
            )
            stack.status = "ROLLBACK_FAILED"
            return
        for gone in removed:
            _removed_event(stack, gone)
        host.retained_names |= stack_update.retained_names(removed)
    stack._add_stack_event("ROLLBACK_COMPLETE")
    stack.status = "ROLLBACK_COMPLETE"
