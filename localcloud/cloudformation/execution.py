"""Carrying out an application change set, and ``DeleteStack``, with CloudFormation's
statuses, events and rollbacks.

- executing runs :func:`localcloud.cloudformation.deployer.deploy` (a CREATE) or
  :func:`localcloud.cloudformation.update.update` (an UPDATE); a resource the deployer cannot create
  becomes ``CREATE_FAILED`` (``UPDATE_FAILED``) with the reason in the stack's events, and
  the rollback deletes what was created before it (keeping ``DeletionPolicy: Retain``
  resources), then ``ROLLBACK_COMPLETE`` (``UPDATE_ROLLBACK_COMPLETE``, the previous
  template running again); a stack in ``ROLLBACK_COMPLETE`` can only be deleted, as on
  AWS. The server never answers with a traceback;
- ``DeleteStack`` deletes the resources except those whose ``DeletionPolicy`` is
  ``Retain``; a retained resource's name is never given to a resource of a later stack;
- executing is synchronous: ``ExecuteChangeSet`` returns once the stack is complete or
  rolled back, and SAM CLI's waiters see the final status on their first look.
"""

from __future__ import annotations

from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import CloudFormationBackend, Event, Stack

from localcloud.cloudformation import stacks as stack_module
from localcloud.cloudformation import update as stack_update
from localcloud.cloudformation.changesets import LOCK, Host, LocalChangeSet, LocalStack, as_local
from localcloud.cloudformation.deployer import deploy
from localcloud.cloudformation.exceptions import AlreadyExists, HandlerFailed, UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment


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
                    providers=host.providers,
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
    function's event is its event source mapping, ``<Function><Event>``), and the
    reason: ``(logical id, type, reason)``."""
    where = getattr(exc, "where", "") or failed_at or ""
    logical_id = where.split(".")[0] if where else change_set.stack_name
    reason = (
        str(exc)
        if isinstance(exc, UnsupportedTemplate | AlreadyExists | HandlerFailed)
        else f"{type(exc).__name__}: {exc}"
    )
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
    :func:`localcloud.cloudformation.update.update`), or ``UPDATE_ROLLBACK_FAILED`` when the
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
