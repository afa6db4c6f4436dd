"""What every resource provider is, and the deployment it creates into: one provider
class per CloudFormation type, holding how the type is created, updated in place,
deleted and kept; each service of the local cloud gives its own
(``localcloud/services/<service>/providers.py``), and the engine is handed them all.

A provider is told the stack being deployed (:class:`Deployment`: its name, region,
client factory and the values already created) and a resource's properties, resolved.
It creates the resource through the AWS APIs of the local account (moto's, behind the
patches), and records what ``Ref`` and ``Fn::GetAtt`` give for it. A property it does
not list in :attr:`Provider.PROPERTIES` is refused by name before anything is created
(:func:`check_properties`), never silently dropped.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import AlreadyExists, NotCreated, UnsupportedTemplate
from localcloud.cloudformation.intrinsics import resolve
from localcloud.cloudformation.template import Template

ACCOUNT_ID = "123456789012"
"""The local account (moto's default)."""
ClientFactory = Callable[[str], Any]


class Provider:
    """One CloudFormation resource type (LocalStack's ``ResourceProvider``, moto's
    ``*_from_cloudformation_json``, in one class)."""

    TYPE: ClassVar[str]
    """The CloudFormation type, ``AWS::SQS::Queue``."""
    PROPERTIES: ClassVar[frozenset[str]]
    """The properties the local cloud honours; any other is refused by name."""
    KEPT: ClassVar[bool] = False
    """Whether an update keeps the resource in place (it holds data, or a name others
    hold on to) and applies :meth:`update`; otherwise an update deletes and creates it."""
    NAME_PROPERTY: ClassVar[str | None] = None
    """The property that names the resource explicitly (``TableName``), if the type has
    one: :meth:`name` uses a given name as written. An update that changes it replaces
    the resource, as CloudFormation does."""
    NAME_LIMIT: ClassVar[int] = 64
    """The longest name the service takes (a derived name is cut to fit)."""

    def exists(self, stack: Deployment, name: str) -> bool:
        """Whether a resource of this type named ``name`` exists in the stack's account
        and region (outside the stack: a stack asks before it creates)."""
        return False

    def name(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> str:
        """The physical name of the resource about to be created: the explicit one
        (:attr:`NAME_PROPERTY`) as written, or one derived by :func:`physical_name`.

        Raises:
            AlreadyExists: the explicit name is taken (:meth:`exists`), as CloudFormation
                fails the resource (it never adopts a resource it did not create).
        """
        given = properties.get(self.NAME_PROPERTY) if self.NAME_PROPERTY else None
        if given is None:
            return physical_name(
                stack, logical_id, self.NAME_LIMIT, lambda n: self.exists(stack, n)
            )
        name = str(given)
        if name in stack.reserved_names or self.exists(stack, name):
            raise AlreadyExists(self.TYPE, name, f"{logical_id}.{self.NAME_PROPERTY}")
        return name

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        """Create the resource and record its ``Ref`` (``stack.refs``) and attributes
        (``stack.attributes``); record ``Ref`` only once it exists, so a rollback deletes
        nothing it did not make.

        Raises:
            UnsupportedTemplate: naming ``logical_id`` and the property at fault.
            botocore.exceptions.ClientError: what the local account's API refused.
        """
        raise NotImplementedError

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        """Bring a kept resource (:attr:`KEPT`) to ``properties`` in place; a property no
        longer declared goes back to its default. Its ``Ref`` and attributes are the
        previous deployment's, already carried over."""

    def delete(self, stack: Deployment, logical_id: str) -> None:
        """Delete the resource ``stack`` made under ``logical_id``."""
        raise NotImplementedError

    def local_output(self, stack: Deployment, name: str, value: str) -> str:
        """The stack output ``name`` as the local cloud gives it: ``value`` unless it holds
        an address of this type's resources that only AWS answers at (an API's
        execute-api URL), which is written as the local one."""
        return value


@dataclass
class Deployment:
    """A stack as deployed: what its resources' ``Ref`` and attributes are, its Outputs,
    what the deploy noted, and the providers that made its resources (the same ones
    update and delete them)."""

    template: Template
    """The template as deployed: plain CloudFormation, after the SAM transform."""
    stack_name: str
    region: str
    client: ClientFactory
    source: Template | None = None
    """The template as written (before the transform), if it declared the transform."""
    refs: dict[str, Any] = field(default_factory=dict)
    attributes: dict[tuple[str, str], Any] = field(default_factory=dict)
    providers: Mapping[str, Provider] = field(default_factory=dict)
    """The provider of each resource type the account deploys, by type."""
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
        none; :class:`~localcloud.cloudformation.exceptions.NotCreated` for a resource whose
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

    def provider(self, resource_type: str, logical_id: str) -> Provider:
        """The provider of a type (:func:`provider_of` this deployment's)."""
        return provider_of(self.providers, resource_type, logical_id)

    def properties(self, logical_id: str) -> Mapping[str, Any]:
        """A resource's properties, resolved, each checked by its provider.

        Raises:
            UnsupportedTemplate: a property the provider does not honour, or an intrinsic
                the local cloud cannot resolve.
        """
        resource = self.template.resources[logical_id]
        declared = resource.get("Properties", {})
        check_properties(self.provider(str(resource["Type"]), logical_id), logical_id, declared)
        resolved: Mapping[str, Any] = self.resolve(declared, logical_id)
        return resolved


def provider_of(providers: Mapping[str, Provider], resource_type: str, logical_id: str) -> Provider:
    """The provider of a type among ``providers``.

    Raises:
        UnsupportedTemplate: ``<logical id>.Type``: the local cloud does not deploy it.
    """
    try:
        return providers[resource_type]
    except KeyError:
        raise UnsupportedTemplate(
            f"{logical_id}.Type", f"{resource_type} is not supported locally"
        ) from None


def check_properties(provider: Provider, logical_id: str, properties: Mapping[str, Any]) -> None:
    """Refuse, by name, the first property ``provider`` does not honour.

    Raises:
        UnsupportedTemplate: ``<logical id>.<property>``.
    """
    unknown = sorted(set(properties) - provider.PROPERTIES)
    if unknown:
        raise UnsupportedTemplate(
            f"{logical_id}.{unknown[0]}", f"{provider.TYPE} property not supported locally"
        )


def refuse_unknown(keys: Mapping[str, Any], allowed: set[str], where: str, kind: str) -> None:
    """Refuse, by name, the first key of a nested property the local cloud does not honour."""
    unknown = sorted(set(keys) - allowed)
    if unknown:
        raise UnsupportedTemplate(f"{where}.{unknown[0]}", f"{kind} property not supported locally")


def physical_name(
    stack: Deployment,
    logical_id: str,
    limit: int = 64,
    taken: Callable[[str], bool] = lambda _: False,
) -> str:
    """``<stack>-<LogicalId>-<SUFFIX>``, as CloudFormation names resources.

    The suffix is derived from the stack name and logical id, so every local deployment
    of a stack has the same names and a checked-in file (``env-vars.local.json``) can
    carry them. A name in ``stack.reserved_names`` (a retained resource of an earlier
    stack of that name) or ``taken`` (a resource of that name exists outside the stack)
    is skipped for the next derived one, as CloudFormation never gives a created resource
    a name already in use."""
    prefix = f"{stack.stack_name}-{logical_id}"[: limit - 12 - 1]
    for generation in itertools.count():
        seed = f"{stack.stack_name}/{logical_id}" + (f"/{generation}" if generation else "")
        name = f"{prefix}-{hashlib.sha256(seed.encode()).hexdigest()[:12].upper()}"
        if name not in stack.reserved_names and not taken(name):
            return name
    raise AssertionError("unreachable")  # pragma: no cover - itertools.count() is endless


def flag(value: Any) -> bool:
    """A CloudFormation boolean (``true``, ``"true"``, ``"True"``)."""
    return str(value).lower() == "true"


def read_s3_object(
    stack: Deployment, where: str, bucket: object, key: object, version: object = None
) -> bytes:
    """The object a template's S3 location names (a ``sam deploy`` upload: a function's
    ``Code``, a state machine's ``DefinitionS3Location``).

    Raises:
        UnsupportedTemplate: naming ``where`` and the object, when S3 refuses it.
    """
    kwargs = {"Bucket": str(bucket), "Key": str(key)}
    if version:
        kwargs["VersionId"] = str(version)
    try:
        body: bytes = stack.client("s3").get_object(**kwargs)["Body"].read()
    except ClientError as exc:
        raise UnsupportedTemplate(
            where, f"s3://{bucket}/{key}: {exc.response['Error']['Code']}"
        ) from exc
    return body
