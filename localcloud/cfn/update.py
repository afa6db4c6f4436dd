"""Update and delete a deployed stack, as CloudFormation carries out an UPDATE change set
and ``DeleteStack``.

Semantics kept simple and safe for data:

- a resource whose logical id and type are unchanged and which holds data or names
  that others hold on to (queues, tables, log groups, KMS keys, SNS topics) is *kept*:
  the same physical resource, its data intact, its in-place properties applied
  (:func:`localcloud.cfn.deployer.deploy` with ``kept``);
- every other resource of the old stack is deleted and created again from the new
  template: functions (a new zip, a new worker process, their event source mappings),
  roles, the state machine, alarms, dashboards, subscriptions;
- a resource removed from the template is deleted, unless its ``DeletionPolicy`` is
  ``Retain`` (one that holds data only after the update succeeded, CloudFormation's
  cleanup phase); so is every resource when the stack is deleted;
- a failed update is rolled back: what it created is deleted and the previous template
  is deployed again over the kept resources (``UPDATE_ROLLBACK_COMPLETE``);
- the rollback of a failed *create* deletes what it made, except ``Retain`` resources.

Physical names are derived from the stack name and logical id, so a re-created resource
has its old name: the Outputs do not change. A retained resource's name is reserved
(:attr:`Deployment.reserved_names`): a later resource of that logical id gets another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from localcloud.cfn.deployer import (
    ClientFactory,
    Deployment,
    check_supported,
    creation_order,
    deploy,
)
from localcloud.cfn.template import Template
from localcloud.lambda_runtime import LogSink

KEPT_TYPES = frozenset(
    {
        "AWS::SQS::Queue",
        "AWS::DynamoDB::Table",
        "AWS::Logs::LogGroup",
        "AWS::KMS::Key",
        "AWS::SNS::Topic",
    }
)
RETAINED = frozenset({"Retain", "RetainExceptOnCreate"})
"""The ``DeletionPolicy`` values that keep a resource when its stack is deleted or an
update removes it."""
RETAINED_ON_CREATE_ROLLBACK = frozenset({"Retain"})
"""...and when the rollback of the stack's failed creation deletes what it made:
``RetainExceptOnCreate`` resources are deleted then (CloudFormation's DeletionPolicy
attribute reference)."""


@dataclass(frozen=True)
class Removed:
    """One resource a delete or update took out: ``retained`` when its
    ``DeletionPolicy`` kept it (CloudFormation's ``DELETE_SKIPPED``)."""

    logical_id: str
    resource_type: str
    physical_id: str
    retained: bool
    failure: str | None = None
    """Why deleting it failed (CloudFormation's ``DELETE_FAILED``): it still exists."""


def kept_resources(previous: Deployment, template: Template) -> frozenset[str]:
    """The logical ids an update keeps: same id, same type, a type in :data:`KEPT_TYPES`."""
    old = previous.template.resources
    return frozenset(
        logical_id
        for logical_id, resource in template.resources.items()
        if logical_id in previous.refs
        and logical_id in old
        and old[logical_id].get("Type") == resource.get("Type")
        and resource.get("Type") in KEPT_TYPES
    )


class UpdateRolledBack(Exception):  # noqa: N818 - named for the stack status it leads to
    """An update failed and was rolled back: ``deployment`` is the previous template
    deployed again (kept resources with their data, the others re-created), ``cause``
    the failure (also ``__cause__``)."""

    def __init__(self, deployment: Deployment, cause: Exception, failed_at: str | None) -> None:
        super().__init__(str(cause))
        self.deployment = deployment
        self.cause = cause
        self.failed_at = failed_at
        """The logical id whose update failed (``Deployment.failed_at``)."""


def update(
    previous: Deployment,
    template: Template,
    client: ClientFactory,
    *,
    function_environment: Mapping[str, str],
    log_sink: LogSink | None,
) -> tuple[Deployment, list[Removed]]:
    """Bring ``previous`` to ``template``, as CloudFormation updates a stack: delete what is
    replaced (in reverse creation order), create the rest and carry the kept resources
    over; only then, in the cleanup phase, delete what the template no longer has.

    A failure while creating rolls the update back: what the new template created is
    deleted and the previous template is deployed again over the kept resources (their
    data intact, their in-place properties restored), so the stack runs as before.
    A queue, table, log group, key or topic the new template removed is deleted only
    after the update succeeded, so a rollback finds it with its data.

    Returns:
        The new deployment and the resources removed from the stack (replaced ones are
        not listed: they come back in the new deployment).

    Raises:
        UnsupportedTemplate: a resource type the local cloud cannot create (checked
            before anything is deleted; the stack is untouched).
        UpdateRolledBack: a resource failed; the previous template runs again.
        Exception: a failure of the rollback itself, unchanged (the stack is left as the
            failure found it: CloudFormation's ``UPDATE_ROLLBACK_FAILED``).
    """
    check_supported(template)
    kept = kept_resources(previous, template)
    # Removed from the template and holding data, or retained: left in place until the
    # update succeeded (the cleanup phase), so a rollback finds them as they were.
    later: list[str] = []
    for logical_id in reversed(creation_order(previous.template)):
        if logical_id in kept or logical_id not in previous.refs:
            continue
        resource = previous.template.resources[logical_id]
        still = template.resources.get(logical_id, {}).get("Type") == resource.get("Type")
        if not still and (
            resource.get("Type") in KEPT_TYPES or resource.get("DeletionPolicy") in RETAINED
        ):
            later.append(logical_id)
        else:
            delete_resource(previous, logical_id, client)
    partial: list[Deployment] = []
    try:
        deployment = deploy(
            template,
            client,
            stack_name=previous.stack_name,
            region=previous.region,
            function_environment=function_environment,
            visibility_timeout=previous.visibility_timeout,
            log_sink=log_sink,
            previous=previous,
            kept=kept,
            reserved_names=previous.reserved_names,
            on_failure=partial.append,
        )
    except Exception as exc:
        kept_by_policy: frozenset[str] = frozenset()
        for made in partial:
            kept_by_policy |= _delete_created(made, previous, kept, client)
        restored = deploy(
            previous.template,
            client,
            stack_name=previous.stack_name,
            region=previous.region,
            function_environment=function_environment,
            visibility_timeout=previous.visibility_timeout,
            log_sink=log_sink,
            previous=previous,
            kept=kept | frozenset(later),
            reserved_names=previous.reserved_names | kept_by_policy,
        )
        failed_at = partial[0].failed_at if partial else None
        raise UpdateRolledBack(restored, exc, failed_at) from exc
    removed: list[Removed] = []
    for logical_id in reversed(creation_order(previous.template)):
        resource = previous.template.resources[logical_id]
        gone = template.resources.get(logical_id, {}).get("Type") != resource.get("Type")
        if not gone or logical_id not in previous.refs or logical_id in kept:
            continue
        retained = resource.get("DeletionPolicy") in RETAINED
        failure = None
        if logical_id in later and not retained:
            try:
                delete_resource(previous, logical_id, client)
            except Exception as exc:  # noqa: BLE001 - a cleanup failure is an event, not a rollback
                failure = f"{type(exc).__name__}: {exc}"
        physical_id = str(previous.refs[logical_id])
        removed.append(Removed(logical_id, str(resource["Type"]), physical_id, retained, failure))
    deployment.reserved_names |= retained_names(removed)
    return deployment, removed


def _delete_created(
    made: Deployment, previous: Deployment, kept: frozenset[str], client: ClientFactory
) -> frozenset[str]:
    """Delete what a failed update created (not the kept resources it carried over).
    A resource the update added with ``DeletionPolicy: Retain`` stays, as CloudFormation
    keeps it on rollback unless the policy is ``RetainExceptOnCreate``.

    Returns:
        The physical names of the resources that stayed.
    """
    stayed: set[str] = set()
    for logical_id in reversed(creation_order(made.template)):
        if logical_id not in made.refs or logical_id in kept:
            continue
        policy = made.template.resources[logical_id].get("DeletionPolicy")
        if logical_id not in previous.refs and policy in RETAINED_ON_CREATE_ROLLBACK:
            stayed.add(str(made.refs[logical_id]))
            continue
        delete_resource(made, logical_id, client)
    for source in made.event_sources:
        source.stop()
    return frozenset(stayed)


def retained_names(removed: list[Removed]) -> frozenset[str]:
    """The physical names of the removed resources that still exist (retained, or their
    delete failed)."""
    return frozenset(gone.physical_id for gone in removed if gone.retained or gone.failure)


def delete(
    deployment: Deployment, client: ClientFactory, *, create_rollback: bool = False
) -> list[Removed]:
    """Delete every resource of the stack in reverse creation order, except those whose
    ``DeletionPolicy`` keeps them (:data:`RETAINED`, or on the rollback of a failed
    create, ``create_rollback``, :data:`RETAINED_ON_CREATE_ROLLBACK`); stop its pollers
    and worker processes. A partial deployment (what a failed create made) is deleted
    the same way: only the resources it holds."""
    keeps = RETAINED_ON_CREATE_ROLLBACK if create_rollback else RETAINED
    removed: list[Removed] = []
    for logical_id in reversed(creation_order(deployment.template)):
        if logical_id not in deployment.refs:
            continue
        resource = deployment.template.resources[logical_id]
        retained = resource.get("DeletionPolicy") in keeps
        if not retained:
            delete_resource(deployment, logical_id, client)
        removed.append(
            Removed(logical_id, str(resource["Type"]), str(deployment.refs[logical_id]), retained)
        )
    for source in deployment.event_sources:  # mappings made through the Lambda API too
        source.stop()
    return removed


def delete_resource(deployment: Deployment, logical_id: str, client: ClientFactory) -> None:
    """Delete one resource of ``deployment`` with the API call its type needs."""
    kind = str(deployment.template.resources[logical_id]["Type"])
    _DELETERS[kind](deployment, logical_id, deployment.refs[logical_id], client)


def _function(deployment: Deployment, logical_id: str, name: str, client: ClientFactory) -> None:
    function = deployment.functions[logical_id]
    lambda_client = client("lambda")
    for source in [s for s in deployment.event_sources if s.function is function]:
        source.stop()
        source.deleted = True
        if source.uuid:
            lambda_client.delete_event_source_mapping(UUID=source.uuid)
        deployment.event_sources.remove(source)
    lambda_client.delete_function(FunctionName=name)
    close = getattr(function, "close", None)
    if close is not None:
        close()  # the worker process stops, the extracted package goes


def _role(deployment: Deployment, logical_id: str, name: str, client: ClientFactory) -> None:
    iam = client("iam")
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    iam.delete_role(RoleName=name)


def _query_definition(
    deployment: Deployment, logical_id: str, ref: str, client: ClientFactory
) -> None:
    if deployment.query_definitions[logical_id].created:
        client("logs").delete_query_definition(queryDefinitionId=ref)


def _call(service: str, operation: str, key: str, *, listed: bool = False) -> Callable[..., None]:
    def delete(deployment: Deployment, logical_id: str, ref: str, client: ClientFactory) -> None:
        value: Any = [ref] if listed else ref
        getattr(client(service), operation)(**{key: value})

    return delete


_DELETERS: dict[str, Callable[[Deployment, str, Any, ClientFactory], None]] = {
    "AWS::SQS::Queue": _call("sqs", "delete_queue", "QueueUrl"),
    "AWS::DynamoDB::Table": _call("dynamodb", "delete_table", "TableName"),
    "AWS::Logs::LogGroup": _call("logs", "delete_log_group", "logGroupName"),
    "AWS::IAM::Role": _role,
    "AWS::Serverless::Function": _function,
    "AWS::Serverless::StateMachine": _call(
        "stepfunctions", "delete_state_machine", "stateMachineArn"
    ),
    "AWS::CloudWatch::Alarm": _call("cloudwatch", "delete_alarms", "AlarmNames", listed=True),
    "AWS::CloudWatch::Dashboard": _call(
        "cloudwatch", "delete_dashboards", "DashboardNames", listed=True
    ),
    "AWS::SNS::Topic": _call("sns", "delete_topic", "TopicArn"),
    "AWS::SNS::Subscription": _call("sns", "unsubscribe", "SubscriptionArn"),
    "AWS::KMS::Key": lambda _d, _l, key_id, client: client("kms").schedule_key_deletion(
        KeyId=key_id, PendingWindowInDays=7
    ),
    "AWS::Logs::QueryDefinition": _query_definition,
}
