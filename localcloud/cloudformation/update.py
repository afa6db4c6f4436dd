"""Update and delete a deployed stack, as CloudFormation carries out an UPDATE change set
and ``DeleteStack``.

Semantics kept simple and safe for data:

- a resource whose logical id and type are unchanged and which holds data or names
  that others hold on to (queues, tables, log groups, KMS keys, SNS topics) is *kept*:
  the same physical resource, its data intact, its in-place properties applied
  (:func:`localcloud.cloudformation.deployer.deploy` with ``kept``);
- every other resource of the old stack is deleted and created again from the new
  template: functions (a new zip, new execution environments, their event source mappings),
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

from collections.abc import Mapping
from dataclasses import dataclass

from localcloud.cloudformation.deployer import (
    check_supported,
    creation_order,
    deploy,
    prepare,
)
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import ClientFactory, Deployment, Provider
from localcloud.cloudformation.template import Template


def kept_types(providers: Mapping[str, Provider]) -> frozenset[str]:
    """The types an update keeps in place (queues, tables, log groups, keys, topics: they
    hold data, or names others hold on to): each provider says so (``KEPT``)."""
    return frozenset(kind for kind, found in providers.items() if found.KEPT)


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
    """The logical ids an update keeps: same id, same type, a type of :func:`kept_types`,
    and the same explicit name as written (a changed ``TableName`` replaces the table, as
    CloudFormation does) (``template``: as deployed, after the transform)."""
    old = previous.template.resources
    kept = kept_types(previous.providers)

    # The names as resolved: a name is usually built from parameters (``!Sub``); what
    # the new template's name refers to resolves as the previous deployment's would.
    upcoming = Deployment(
        template=template,
        stack_name=previous.stack_name,
        region=previous.region,
        client=previous.client,
        refs=dict(previous.refs),
        attributes=dict(previous.attributes),
    )

    def same_name(logical_id: str, kind: str) -> bool:
        key = previous.providers[kind].NAME_PROPERTY
        if key is None:
            return True
        before = old[logical_id].get("Properties", {}).get(key)
        after = template.resources[logical_id].get("Properties", {}).get(key)
        where = f"{logical_id}.{key}"
        try:
            return bool(previous.resolve(before, where) == upcoming.resolve(after, where))
        except (UnsupportedTemplate, KeyError):
            return bool(before == after)  # the deploy itself reports what cannot resolve

    return frozenset(
        logical_id
        for logical_id, resource in template.resources.items()
        if logical_id in previous.refs
        and logical_id in old
        and old[logical_id].get("Type") == resource.get("Type")
        and resource.get("Type") in kept
        and same_name(logical_id, str(resource["Type"]))
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
    deployed, _ = prepare(template, previous.region)
    check_supported(deployed, previous.providers)
    kept = kept_resources(previous, deployed)
    keeps_data = kept_types(previous.providers)
    # Removed from the template and holding data, or retained: left in place until the
    # update succeeded (the cleanup phase), so a rollback finds them as they were.
    later: list[str] = []
    for logical_id in reversed(creation_order(previous.template)):
        if logical_id in kept or logical_id not in previous.refs:
            continue
        resource = previous.template.resources[logical_id]
        still = deployed.resources.get(logical_id, {}).get("Type") == resource.get("Type")
        if not still and (
            resource.get("Type") in keeps_data or resource.get("DeletionPolicy") in RETAINED
        ):
            later.append(logical_id)
        else:
            delete_resource(previous, logical_id, client)
    partial: list[Deployment] = []
    try:
        deployment = deploy(
            template,
            client,
            providers=previous.providers,
            stack_name=previous.stack_name,
            region=previous.region,
            visibility_timeout=previous.visibility_timeout,
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
            previous.written,
            client,
            providers=previous.providers,
            stack_name=previous.stack_name,
            region=previous.region,
            visibility_timeout=previous.visibility_timeout,
            previous=previous,
            kept=kept | frozenset(later),
            reserved_names=previous.reserved_names | kept_by_policy,
        )
        failed_at = partial[0].failed_at if partial else None
        raise UpdateRolledBack(restored, exc, failed_at) from exc
    removed: list[Removed] = []
    for logical_id in reversed(creation_order(previous.template)):
        resource = previous.template.resources[logical_id]
        gone = deployed.resources.get(logical_id, {}).get("Type") != resource.get("Type")
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
    and execution environments. A partial deployment (what a failed create made) is deleted
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
    return removed


def delete_resource(deployment: Deployment, logical_id: str, client: ClientFactory) -> None:
    """Delete one resource of ``deployment`` as its provider deletes it."""
    kind = str(deployment.template.resources[logical_id]["Type"])
    deployment.provider(kind, logical_id).delete(deployment, logical_id)
