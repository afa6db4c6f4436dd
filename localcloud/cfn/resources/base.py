"""What every resource provider is: one class per CloudFormation type, holding how the
type is created, updated in place, deleted and kept.

A provider is told the stack being deployed (:class:`~localcloud.cfn.deployer.Deployment`:
its name, region, client factory and the values already created) and a resource's
properties, resolved. It creates the resource through the AWS APIs of the local account
(moto's, behind the patches), and records what ``Ref`` and ``Fn::GetAtt`` give for it.
A property it does not list in :attr:`Provider.PROPERTIES` is refused by name before
anything is created (:func:`check_properties`), never silently dropped.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from botocore.exceptions import ClientError

from localcloud.cfn.exceptions import UnsupportedTemplate

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment

ACCOUNT_ID = "123456789012"
"""The local account (moto's default)."""


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
