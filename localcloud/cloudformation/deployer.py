"""Deploy a template into the local account, as CloudFormation deploys a stack.

The SAM transform comes first (:mod:`localcloud.cloudformation.transform`), as ``sam deploy`` has
CloudFormation apply it; then every resource of the plain CloudFormation template is
created by the provider of its type (:mod:`localcloud.services`), in dependency
order. A type the local cloud does not deploy is refused, naming the resource, before
anything is created; a property it cannot honour is refused by its provider, naming the
resource and the property (the caller rolls back what was made). Physical names follow
CloudFormation's pattern ``<stack>-<LogicalId>-<SUFFIX>`` and flow to functions and
Outputs through the same ``Ref``/``GetAtt`` resolution as on AWS.

A resource whose ``Condition`` is false is not created (``Template.resources`` leaves it
out), and a ``Ref`` or ``GetAtt`` of it fails naming the condition; ``Fn::If`` and
``AWS::NoValue`` choose properties, and an Output with a false ``Condition`` is not
published.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from localcloud.cloudformation.exceptions import NotCreated, UnsupportedTemplate
from localcloud.cloudformation.provider import ClientFactory, Deployment, Provider, provider_of
from localcloud.cloudformation.template import Template
from localcloud.cloudformation.template_limits import check_resources
from localcloud.cloudformation.transform import (
    aws_managed_policy_arns,
    declares_transform,
    transform,
)

_PSEUDO = {"AWS::AccountId", "AWS::Region", "AWS::StackName", "AWS::Partition", "AWS::URLSuffix"}


def prepare(template: Template, region: str) -> tuple[Template, Template | None]:
    """The template the deployer creates, and the template as written when the SAM
    transform was applied to it (``None`` otherwise).

    Raises:
        UnsupportedTemplate: the transform refused the template; it made more than
            CloudFormation's 500 resources (CloudFormation counts the processed template).
    """
    if not declares_transform(template.body):
        return template, None

    transformed = transform(
        template.body,
        template.parameters,
        folder=template.path.parent,
        region=region,
        managed_policies=aws_managed_policy_arns,
    )
    check_resources(transformed)
    deployed = Template(
        path=template.path,
        body=transformed,
        parameters=template.parameters,
        config_env=template.config_env,
        parameter_sources=template.parameter_sources,
    )
    return deployed, template


def function_properties(
    template: Template, logical_id: str, region: str = "us-east-1"
) -> dict[str, Any]:
    """A function's properties as CloudFormation deploys them: after the SAM transform
    (``Globals`` merged as SAM merges them, ``Environment.Variables`` key by key),
    intrinsics unresolved."""
    deployed, _ = prepare(template, region)
    properties: dict[str, Any] = dict(deployed.resources[logical_id].get("Properties", {}))
    return properties


def deploy(
    template: Template,
    client: ClientFactory,
    *,
    providers: Mapping[str, Provider],
    stack_name: str,
    region: str,
    visibility_timeout: int | None = None,
    previous: Deployment | None = None,
    kept: frozenset[str] = frozenset(),
    reserved_names: frozenset[str] = frozenset(),
    on_failure: Callable[[Deployment], None] | None = None,
) -> Deployment:
    """Create every resource of ``template`` through ``client(service)``.

    Args:
        template: the template as written; the SAM transform is applied if it asks.
        providers: the provider of each resource type the account deploys (the services'
            :func:`localcloud.services.providers`); a type none gives is refused.
        visibility_timeout: a shorter visibility timeout, in seconds, for every queue
            that declares one, so that redelivery and redrive take seconds locally
            (recorded in ``notes``).
        previous, kept: an update (:mod:`localcloud.cloudformation.update`): the resources in
            ``kept`` are those of ``previous``, brought to the new properties in place
            (a queue's attributes, a table's deletion protection), not created again.
        reserved_names: physical names taken by retained resources of earlier stacks; a
            resource whose usual name is among them gets a new suffix, as CloudFormation
            gives every created resource a name of its own.
        on_failure: called with the deployment as far as it got (the resources created
            before the failing one) when a resource fails, before the error propagates:
            the caller rolls it back.

    Raises:
        UnsupportedTemplate: naming the resource and property the local cloud cannot
            honour (or the transform's reason).
    """
    deployed, source = prepare(template, region)
    deployment = Deployment(
        template=deployed,
        source=source,
        stack_name=stack_name,
        region=region,
        client=client,
        visibility_timeout=visibility_timeout,
        reserved_names=reserved_names,
        providers=providers,
    )
    check_supported(deployed, providers)
    skipped: dict[str, list[str]] = {}
    for logical_id in deployed.declared_resources:
        if logical_id not in deployed.resources:
            skipped.setdefault(str(deployed.condition_of(logical_id)), []).append(logical_id)
    for condition, logical_ids in skipped.items():
        deployment.notes.append(
            f"{', '.join(logical_ids)}: not created, Condition {condition} is false with "
            "these parameters (as in CloudFormation)"
        )
    try:
        for logical_id in creation_order(deployed):
            deployment.failed_at = logical_id
            kind = str(deployed.resources[logical_id]["Type"])
            properties = deployment.properties(logical_id)
            if previous is not None and logical_id in kept:
                carry_over(deployment, previous, logical_id)
                deployment.provider(kind, logical_id).update(deployment, logical_id, properties)
                continue
            deployment.provider(kind, logical_id).create(deployment, logical_id, properties)
        deployment.failed_at = "Outputs"
        for name, output in deployed.outputs.items():
            value = str(deployment.resolve(output["Value"], f"Outputs.{name}"))
            for provider in {id(p): p for p in deployment.providers.values()}.values():
                value = provider.local_output(deployment, name, value)
            deployment.outputs[name] = value
    except Exception:
        if on_failure is not None:
            on_failure(deployment)
        raise
    deployment.failed_at = None
    deployment.notes.append(
        "IAM policies are created but not enforced locally, and CloudWatch metrics and "
        "X-Ray traces are not recorded, so alarms are created but never change state "
        "(docs/local-cloud.md: what is emulated)"
    )
    return deployment


def check_supported(template: Template, providers: Mapping[str, Provider]) -> None:
    """Raises UnsupportedTemplate for the first resource whose type none of ``providers``
    deploys."""
    for logical_id, resource in template.declared_resources.items():
        provider_of(providers, str(resource.get("Type", "")), logical_id)


def carry_over(deployment: Deployment, previous: Deployment, logical_id: str) -> None:
    """Keep ``previous``'s resource (its data stays): its ``Ref``, attributes and record
    (the provider's ``update`` keeps the rest: a function, its mappings)."""
    deployment.refs[logical_id] = previous.refs[logical_id]
    for (owner, attribute), value in previous.attributes.items():
        if owner == logical_id:
            deployment.attributes[(owner, attribute)] = value
    if logical_id in previous.records:
        deployment.records[logical_id] = previous.records[logical_id]


def creation_order(template: Template) -> list[str]:
    """Logical ids in an order where every referenced resource comes first."""
    resources = template.resources
    depends: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        found = _references(dict(resource)) & set(resources)
        declared = resource.get("DependsOn", [])
        for dependency in [declared] if isinstance(declared, str) else declared:
            if dependency in template.declared_resources and dependency not in resources:
                reason = NotCreated(dependency, str(template.condition_of(dependency))).reason
                raise UnsupportedTemplate(f"{logical_id}.DependsOn", reason)
            found.add(dependency)
        depends[logical_id] = found - {logical_id}
    order: list[str] = []
    visiting: set[str] = set()

    def visit(logical_id: str) -> None:
        if logical_id in order:
            return
        if logical_id in visiting:
            raise UnsupportedTemplate(logical_id, "circular reference")
        visiting.add(logical_id)
        for dependency in sorted(depends[logical_id]):
            visit(dependency)
        visiting.discard(logical_id)
        order.append(logical_id)

    for logical_id in resources:
        visit(logical_id)
    return order


def _references(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == "Ref" and isinstance(item, str):
                found.add(item)
            elif key == "Fn::GetAtt":
                found.add(str(item[0] if isinstance(item, list) else str(item).split(".")[0]))
            elif key == "Fn::Sub":
                text = item[0] if isinstance(item, list) else item
                for name in re.findall(r"\$\{([^}!.]+)", str(text)):
                    found.add(name)
                if isinstance(item, list):
                    found |= _references(item[1])
            else:
                found |= _references(item)
    elif isinstance(value, list):
        for item in value:
            found |= _references(item)
    return found - _PSEUDO
