"""Deploy a template into the local account, as CloudFormation deploys a stack.

The SAM transform comes first (:mod:`localcloud.cfn.transform`), as ``sam deploy`` has
CloudFormation apply it; then every resource of the plain CloudFormation template is
created by the provider of its type (:mod:`localcloud.cfn.resources`), in dependency
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
from dataclasses import dataclass, field
from typing import Any

from localcloud.cfn.exceptions import NotCreated, UnsupportedTemplate
from localcloud.cfn.intrinsics import resolve
from localcloud.cfn.resources import provider
from localcloud.cfn.resources.base import ACCOUNT_ID, check_properties
from localcloud.cfn.template import Template
from localcloud.cfn.transform import aws_managed_policy_arns, declares_transform, transform
from localcloud.lambda_runtime import Function
from localcloud.sqs import SqsEventSourceMapping

ClientFactory = Callable[[str], Any]
_PSEUDO = {"AWS::AccountId", "AWS::Region", "AWS::StackName", "AWS::Partition", "AWS::URLSuffix"}


@dataclass
class Deployment:
    """A stack as deployed: what its resources' ``Ref`` and attributes are, its
    functions, event source mappings and Outputs, and what the deploy noted."""

    template: Template
    """The template as deployed: plain CloudFormation, after the SAM transform."""
    stack_name: str
    region: str
    client: ClientFactory
    source: Template | None = None
    """The template as written (before the transform), if it declared the transform."""
    refs: dict[str, Any] = field(default_factory=dict)
    attributes: dict[tuple[str, str], Any] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    event_sources: list[SqsEventSourceMapping] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    """What a provider keeps about a resource the emulator does not hold (a saved query
    moto cannot store), by logical id; carried over with the resource."""
    visibility_timeout: int | None = None
    """The local visibility timeout override (``deploy``'s argument), kept by updates."""
    failed_at: str | None = None
    """The logical id whose creation failed (``Outputs`` for an Output), if one did."""
    reserved_names: frozenset[str] = frozenset()
    """Physical names a new resource must not take: those of resources an earlier stack
    retained (``DeletionPolicy: Retain``), which still exist outside any stack."""

    @property
    def written(self) -> Template:
        """The template as written (the SAM template of a SAM application)."""
        return self.source or self.template

    def ref(self, name: str) -> Any:
        """``Ref`` of a parameter, pseudo parameter or created resource (``KeyError`` if
        none; :class:`~localcloud.cfn.exceptions.NotCreated` for a resource whose
        condition is false)."""
        if name in self.refs:
            return self.refs[name]
        self._refuse_not_created(name)
        if name in self.template.parameters:
            return self.template.parameters[name]
        pseudo = {
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::Region": self.region,
            "AWS::StackName": self.stack_name,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }
        return pseudo[name]

    def get_att(self, logical_id: str, attribute: str) -> Any:
        self._refuse_not_created(logical_id)
        return self.attributes[(logical_id, attribute)]

    def resolve(self, value: Any, where: str) -> Any:
        return resolve(
            value,
            where=where,
            ref=self.ref,
            get_att=self.get_att,
            condition=self.template.condition_holds,
        )

    def _refuse_not_created(self, logical_id: str) -> None:
        template = self.template
        if logical_id in template.declared_resources and logical_id not in template.resources:
            raise NotCreated(logical_id, str(template.condition_of(logical_id)))

    def function(self, name_or_logical_id: str) -> Function:
        """A function by logical id or physical name (``KeyError`` if none)."""
        if name_or_logical_id in self.functions:
            return self.functions[name_or_logical_id]
        for function in self.functions.values():
            if function.name == name_or_logical_id:
                return function
        raise KeyError(name_or_logical_id)

    def properties(self, logical_id: str) -> Mapping[str, Any]:
        """A resource's properties, resolved, each checked by its provider.

        Raises:
            UnsupportedTemplate: a property the provider does not honour, or an intrinsic
                the local cloud cannot resolve.
        """
        resource = self.template.resources[logical_id]
        declared = resource.get("Properties", {})
        check_properties(provider(str(resource["Type"]), logical_id), logical_id, declared)
        resolved: Mapping[str, Any] = self.resolve(declared, logical_id)
        return resolved


def prepare(template: Template, region: str) -> tuple[Template, Template | None]:
    """The template the deployer creates, and the template as written when the SAM
    transform was applied to it (``None`` otherwise).

    Raises:
        UnsupportedTemplate: the transform refused the template.
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
        visibility_timeout: a shorter visibility timeout, in seconds, for every queue
            that declares one, so that redelivery and redrive take seconds locally
            (recorded in ``notes``).
        previous, kept: an update (:mod:`localcloud.cfn.update`): the resources in
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
    )
    check_supported(deployed)
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
                provider(kind, logical_id).update(deployment, logical_id, properties)
                continue
            provider(kind, logical_id).create(deployment, logical_id, properties)
        deployment.failed_at = "Outputs"
        for name, output in deployed.outputs.items():
            deployment.outputs[name] = str(deployment.resolve(output["Value"], f"Outputs.{name}"))
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


def check_supported(template: Template) -> None:
    """Raises UnsupportedTemplate for the first resource whose type is not deployed locally."""
    for logical_id, resource in template.declared_resources.items():
        provider(str(resource.get("Type", "")), logical_id)


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
