"""Create the template's resources in moto.

There is no second list of resources: every resource in ``template.yaml`` is created by
the handler for its ``Type``, in dependency order, and a type or property the local cloud
cannot honour fails with :class:`~localcloud.cfn.template.UnsupportedTemplate` naming the
resource and the property. Physical names follow CloudFormation's pattern
``<stack>-<LogicalId>-<RANDOM>``; they flow to functions and outputs through the same
``Ref``/``GetAtt`` resolution as on AWS.

A resource whose ``Condition`` is false is not created (``Template.resources`` leaves it
out), and a ``Ref`` or ``GetAtt`` of it fails naming the condition; ``Fn::If`` and
``AWS::NoValue`` choose properties, and an Output with a false ``Condition`` is not
published. Everything moto can hold is created for real (SNS topics and subscriptions,
KMS keys, alarms with metric math and actions, dashboards); a saved Logs Insights query
is created if moto implements ``PutQueryDefinition`` and recorded otherwise (moto 5.2.5
does not; :attr:`Deployment.query_definitions`, and a note says so).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import uuid
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import moto
from botocore.exceptions import ClientError
from moto.logs.responses import LogsResponse

from localcloud.cfn.exceptions import NotCreated, UnsupportedTemplate
from localcloud.cfn.intrinsics import resolve
from localcloud.cfn.template import Template
from localcloud.lambda_runtime import (
    Function,
    InProcessFunction,
    LogSink,
    WorkerFunction,
    extract,
    register,
)
from localcloud.lambda_runtime.environment import reserved_in
from localcloud.project import ROOT
from localcloud.sqs.mapping import SqsEventSourceMapping

ACCOUNT_ID = "123456789012"  # moto's default account
ClientFactory = Callable[[str], Any]

_TABLE_PROPERTIES = {
    "AttributeDefinitions",
    "KeySchema",
    "BillingMode",
    "SSESpecification",
    "PointInTimeRecoverySpecification",
    "DeletionProtectionEnabled",
}
_QUEUE_ATTRIBUTES = {
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "MaximumMessageSize",
    "ReceiveMessageWaitTimeSeconds",
    "SqsManagedSseEnabled",
    "RedrivePolicy",
}
_FUNCTION_PROPERTIES = {
    "Handler",
    "Runtime",
    "CodeUri",
    "Role",
    "Timeout",
    "MemorySize",
    "Architectures",
    "Tracing",
    "Environment",
    "LoggingConfig",
    "Events",
    "Description",
}
_STATE_MACHINE_PROPERTIES = {"Type", "DefinitionUri", "DefinitionSubstitutions", "Role"}
_TOPIC_PROPERTIES = {"DisplayName", "KmsMasterKeyId"}
_SUBSCRIPTION_PROPERTIES = {"TopicArn", "Protocol", "Endpoint"}
_KEY_PROPERTIES = {"Description", "EnableKeyRotation", "KeyPolicy"}
_QUERY_DEFINITION_PROPERTIES = {"Name", "QueryString", "LogGroupNames"}
_PSEUDO = {"AWS::AccountId", "AWS::Region", "AWS::StackName", "AWS::Partition", "AWS::URLSuffix"}


@dataclass(frozen=True)
class QueryDefinition:
    """An ``AWS::Logs::QueryDefinition`` as deployed: its resolved properties, and whether
    moto holds it (``created``) or the local cloud only recorded it."""

    query_definition_id: str
    name: str
    query_string: str
    log_group_names: tuple[str, ...]
    created: bool


@dataclass
class Deployment:
    """What :func:`deploy` created: names, functions, event sources and Outputs."""

    template: Template
    stack_name: str
    region: str
    refs: dict[str, Any] = field(default_factory=dict)
    attributes: dict[tuple[str, str], Any] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    event_sources: list[SqsEventSourceMapping] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    query_definitions: dict[str, QueryDefinition] = field(default_factory=dict)
    visibility_timeout: int | None = None
    """The local visibility timeout override (``deploy``'s argument), kept by updates."""
    failed_at: str | None = None
    """The logical id whose creation failed (``Outputs`` for an Output), if one did."""
    reserved_names: frozenset[str] = frozenset()
    """Physical names a new resource must not take: those of resources an earlier stack
    retained (``DeletionPolicy: Retain``), which still exist outside any stack."""

    def ref(self, name: str) -> Any:
        """Ref of a parameter, pseudo parameter or created resource (KeyError if none;
        :class:`~localcloud.cfn.template.NotCreated` for a resource whose condition is false)."""
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
        """A function by logical id or physical name (KeyError if none)."""
        if name_or_logical_id in self.functions:
            return self.functions[name_or_logical_id]
        for function in self.functions.values():
            if function.name == name_or_logical_id:
                return function
        raise KeyError(name_or_logical_id)


def deploy(
    template: Template,
    client: ClientFactory,
    *,
    stack_name: str,
    region: str,
    function_environment: Mapping[str, str] | None = None,
    visibility_timeout: int | None = None,
    log_sink: LogSink | None = None,
    previous: Deployment | None = None,
    kept: frozenset[str] = frozenset(),
    reserved_names: frozenset[str] = frozenset(),
    on_failure: Callable[[Deployment], None] | None = None,
) -> Deployment:
    """Create every resource of ``template`` through ``client(service)``.

    Args:
        function_environment: extra variables for every function (the local endpoint
            and fake credentials in server mode).
        visibility_timeout: a shorter visibility timeout, in seconds, for every queue
            that declares one, so that redelivery and redrive take seconds locally
            (recorded in ``notes``).
        previous, kept: an update (:mod:`localcloud.cfn.update`): the resources in
            ``kept`` are those of ``previous``, updated in place (a queue's attributes, a
            table's deletion protection), not created again.
        reserved_names: physical names taken by retained resources of earlier stacks; a
            resource whose usual name is among them gets a new suffix, as CloudFormation
            gives every created resource a name of its own.
        on_failure: called with the deployment as far as it got (the resources created
            before the failing one) when a resource fails, before the error propagates:
            the caller rolls it back.

    Raises:
        UnsupportedTemplate: naming the resource and property the local cloud cannot
            honour.
    """
    deployment = Deployment(
        template=template,
        stack_name=stack_name,
        region=region,
        visibility_timeout=visibility_timeout,
        reserved_names=reserved_names,
    )
    check_supported(template)
    skipped: dict[str, list[str]] = {}
    for logical_id in template.declared_resources:
        if logical_id not in template.resources:
            skipped.setdefault(str(template.condition_of(logical_id)), []).append(logical_id)
    for condition, logical_ids in skipped.items():
        deployment.notes.append(
            f"{', '.join(logical_ids)}: not created, Condition {condition} is false with "
            "these parameters (as in CloudFormation)"
        )
    try:
        for logical_id in creation_order(template):
            deployment.failed_at = logical_id
            resource = template.resources[logical_id]
            if previous is not None and logical_id in kept:
                _carry_over(deployment, previous, logical_id, resource, client)
                continue
            _CREATORS[resource["Type"]](
                deployment,
                logical_id,
                resource,
                client,
                function_environment=function_environment or {},
                visibility_timeout=visibility_timeout,
                log_sink=log_sink,
            )
        deployment.failed_at = "Outputs"
        for name, output in template.outputs.items():
            deployment.outputs[name] = str(deployment.resolve(output["Value"], f"Outputs.{name}"))
    except Exception:
        if on_failure is not None:
            on_failure(deployment)
        raise
    deployment.failed_at = None
    deployment.notes.append(
        "IAM policies are created but not enforced locally, and CloudWatch metrics and "
        "X-Ray traces are not recorded, so alarms are created but never change state "
        "(README: what is emulated)"
    )
    return deployment


def check_supported(template: Template) -> None:
    """Raises UnsupportedTemplate for the first resource whose type is not created locally."""
    for logical_id, resource in template.declared_resources.items():
        kind = resource.get("Type", "")
        if kind not in _CREATORS:
            raise UnsupportedTemplate(f"{logical_id}.Type", f"{kind} is not supported locally")


def _carry_over(
    deployment: Deployment,
    previous: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
) -> None:
    """Keep ``previous``'s resource (its data stays): its ``Ref`` and attributes, with the
    properties an update changes in place applied (a property no longer declared goes
    back to its default)."""
    deployment.refs[logical_id] = previous.refs[logical_id]
    for (owner, attribute), value in previous.attributes.items():
        if owner == logical_id:
            deployment.attributes[(owner, attribute)] = value
    kind = resource["Type"]
    if kind == "AWS::SQS::Queue":
        attributes = {
            **_QUEUE_DEFAULTS,
            **_queue_attributes(deployment, logical_id, resource, deployment.visibility_timeout),
        }
        client("sqs").set_queue_attributes(
            QueueUrl=deployment.refs[logical_id], Attributes=attributes
        )
    elif kind == "AWS::DynamoDB::Table":
        properties = deployment.resolve(resource.get("Properties", {}), logical_id)
        client("dynamodb").update_table(
            TableName=deployment.refs[logical_id],
            DeletionProtectionEnabled=_flag(properties.get("DeletionProtectionEnabled", False)),
        )
    elif kind == "AWS::Logs::LogGroup":
        properties = deployment.resolve(resource.get("Properties", {}), logical_id)
        logs = client("logs")
        if "RetentionInDays" in properties:
            logs.put_retention_policy(
                logGroupName=deployment.refs[logical_id],
                retentionInDays=int(properties["RetentionInDays"]),
            )
        else:
            logs.delete_retention_policy(logGroupName=deployment.refs[logical_id])


# What a queue attribute returns to when the template stops declaring it (SQS's defaults,
# CreateQueue reference), so an update, or the rollback of one, never leaves a removed
# property in force. A removed RedrivePolicy is not cleared locally.
_QUEUE_DEFAULTS = {
    "DelaySeconds": "0",
    "MaximumMessageSize": "262144",
    "MessageRetentionPeriod": "345600",
    "ReceiveMessageWaitTimeSeconds": "0",
    "VisibilityTimeout": "30",
}


def _physical_name(
    deployment: Deployment,
    logical_id: str,
    limit: int = 64,
    taken: Callable[[str], bool] = lambda _: False,
) -> str:
    """``<stack>-<LogicalId>-<SUFFIX>`` as CloudFormation names resources. The suffix is
    derived from the stack name and logical id, so every local deployment of a stack
    has the same names and a checked-in file (``env-vars.local.json``) can carry them;
    a name in ``deployment.reserved_names`` (a retained resource of an earlier stack of
    that name), or ``taken`` (a resource of that name exists outside the stack, such as
    one a failed rollback left), is skipped for the next derived one, as CloudFormation
    never gives a created resource a name already in use."""
    prefix = f"{deployment.stack_name}-{logical_id}"[: limit - 12 - 1]
    for generation in itertools.count():
        seed = f"{deployment.stack_name}/{logical_id}" + (f"/{generation}" if generation else "")
        name = f"{prefix}-{hashlib.sha256(seed.encode()).hexdigest()[:12].upper()}"
        if name not in deployment.reserved_names and not taken(name):
            return name
    raise AssertionError("unreachable")  # pragma: no cover - itertools.count() is endless


def _properties(
    resource: Mapping[str, Any], allowed: set[str], logical_id: str
) -> Mapping[str, Any]:
    properties: Mapping[str, Any] = resource.get("Properties", {})
    _reject_unknown(properties, allowed, logical_id, resource["Type"])
    return properties


def _reject_unknown(
    properties: Mapping[str, Any], allowed: set[str], logical_id: str, kind: str
) -> None:
    unknown = sorted(set(properties) - allowed)
    if unknown:
        raise UnsupportedTemplate(
            f"{logical_id}.{unknown[0]}", f"{kind} property not supported locally"
        )


def _queue(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **options: Any,
) -> None:
    attributes = _queue_attributes(
        deployment, logical_id, resource, options.get("visibility_timeout")
    )
    sqs = client("sqs")

    def exists(name: str) -> bool:
        # CreateQueue returns an existing queue of that name (same attributes) as if new:
        # a stack must never adopt, and later delete, a queue it did not create.
        try:
            sqs.get_queue_url(QueueName=name)
        except ClientError:
            return False
        return True

    name = _physical_name(deployment, logical_id, 80, taken=exists)
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    deployment.refs[logical_id] = url
    deployment.attributes[(logical_id, "Arn")] = arn
    deployment.attributes[(logical_id, "QueueUrl")] = url
    deployment.attributes[(logical_id, "QueueName")] = arn.rsplit(":", 1)[1]


def _queue_attributes(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    override: int | None,
) -> dict[str, str]:
    properties = deployment.resolve(
        _properties(resource, _QUEUE_ATTRIBUTES, logical_id), logical_id
    )
    attributes: dict[str, str] = {}
    for name, value in properties.items():
        if name == "RedrivePolicy":
            attributes[name] = json.dumps(
                {
                    "deadLetterTargetArn": value["deadLetterTargetArn"],
                    "maxReceiveCount": int(value["maxReceiveCount"]),
                }
            )
        else:
            attributes[name] = str(value).lower() if isinstance(value, bool) else str(value)
    if override is not None and "VisibilityTimeout" in attributes:
        # Only queues that declare a visibility timeout (the consumer's queue); a
        # dead-letter queue nobody consumes keeps the SQS default.
        declared = attributes["VisibilityTimeout"]
        attributes["VisibilityTimeout"] = str(override)
        deployment.notes.append(
            f"{logical_id}: visibility timeout {override} s locally (template: {declared} s), "
            "so redelivery and redrive take seconds, not minutes"
        )
    return attributes


def create_table(client: Any, logical_id: str, name: str, properties: Mapping[str, Any]) -> str:
    """Create an ``AWS::DynamoDB::Table`` from its (resolved) template properties.

    Returns:
        The table ARN.

    Raises:
        UnsupportedTemplate: a property this function does not translate.
    """
    _reject_unknown(properties, _TABLE_PROPERTIES, logical_id, "AWS::DynamoDB::Table")
    kwargs: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": list(properties["AttributeDefinitions"]),
        "KeySchema": list(properties["KeySchema"]),
        "BillingMode": properties.get("BillingMode", "PROVISIONED"),
    }
    if kwargs["BillingMode"] != "PAY_PER_REQUEST":
        raise UnsupportedTemplate(f"{logical_id}.BillingMode", "only PAY_PER_REQUEST is supported")
    sse = properties.get("SSESpecification")
    if sse is not None:
        kwargs["SSESpecification"] = {"Enabled": _flag(sse.get("SSEEnabled", False))}
    if "DeletionProtectionEnabled" in properties:
        kwargs["DeletionProtectionEnabled"] = _flag(properties["DeletionProtectionEnabled"])
    arn: str = client.create_table(**kwargs)["TableDescription"]["TableArn"]
    pitr = properties.get("PointInTimeRecoverySpecification")
    if pitr is not None:
        client.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": _flag(pitr.get("PointInTimeRecoveryEnabled", False))
            },
        )
    return arn


def _flag(value: Any) -> bool:
    return str(value).lower() == "true"


def _table(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(resource.get("Properties", {}), logical_id)
    dynamodb = client("dynamodb")

    def exists(name: str) -> bool:
        try:
            dynamodb.describe_table(TableName=name)
        except ClientError:
            return False
        return True

    name = _physical_name(deployment, logical_id, 255, taken=exists)
    arn = create_table(dynamodb, logical_id, name, properties)
    deployment.refs[logical_id] = name  # only once created: a rollback deletes what is ours
    deployment.attributes[(logical_id, "Arn")] = arn


def _log_group(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(
        _properties(resource, {"RetentionInDays"}, logical_id), logical_id
    )
    name = _physical_name(deployment, logical_id, 512)
    logs = client("logs")
    logs.create_log_group(logGroupName=name)
    if "RetentionInDays" in properties:
        logs.put_retention_policy(
            logGroupName=name, retentionInDays=int(properties["RetentionInDays"])
        )
    deployment.refs[logical_id] = name
    deployment.attributes[(logical_id, "Arn")] = (
        f"arn:aws:logs:{deployment.region}:{ACCOUNT_ID}:log-group:{name}:*"
    )


def _role(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(
        _properties(resource, {"AssumeRolePolicyDocument", "Policies"}, logical_id), logical_id
    )
    iam = client("iam")
    name = _physical_name(deployment, logical_id, 64)
    arn = iam.create_role(
        RoleName=name, AssumeRolePolicyDocument=json.dumps(properties["AssumeRolePolicyDocument"])
    )["Role"]["Arn"]
    for policy in properties.get("Policies", []):
        iam.put_role_policy(
            RoleName=name,
            PolicyName=policy["PolicyName"],
            PolicyDocument=json.dumps(policy["PolicyDocument"]),
        )
    deployment.refs[logical_id] = name
    deployment.attributes[(logical_id, "Arn")] = arn


def function_properties(template: Template, logical_id: str) -> dict[str, Any]:
    """A function's properties with ``Globals.Function`` merged in, as SAM merges them
    (maps such as ``Environment.Variables`` merge key by key; the function wins)."""
    resource = template.resources[logical_id]
    merged: dict[str, Any] = {key: value for key, value in template.function_globals.items()}
    for key, value in resource.get("Properties", {}).items():
        if key == "Environment" and "Environment" in merged:
            merged[key] = {
                "Variables": {
                    **merged["Environment"].get("Variables", {}),
                    **value.get("Variables", {}),
                }
            }
        else:
            merged[key] = value
    _reject_unknown(merged, _FUNCTION_PROPERTIES, logical_id, "AWS::Serverless::Function")
    return merged


def _function(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    *,
    function_environment: Mapping[str, str],
    log_sink: LogSink | None,
    **_: Any,
) -> None:
    properties = function_properties(deployment.template, logical_id)
    events = properties.pop("Events", {})
    properties = deployment.resolve(properties, logical_id)
    name = _physical_name(deployment, logical_id, 64)
    variables = {
        k: str(v) for k, v in properties.get("Environment", {}).get("Variables", {}).items()
    }
    reserved = reserved_in(variables)
    if reserved:
        raise UnsupportedTemplate(
            f"{logical_id}.Environment.Variables.{reserved[0]}",
            f"{', '.join(reserved)} reserved by Lambda: the deploy would fail",
        )
    package = _package(deployment, logical_id, properties["CodeUri"], client)
    if package is None:
        code_uri = (ROOT / str(properties["CodeUri"])).resolve()
        if not code_uri.is_dir():
            raise UnsupportedTemplate(f"{logical_id}.CodeUri", f"{code_uri} is not a directory")
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr("README.txt", f"runs in-process from {code_uri}")
        code = archive.getvalue()
    else:
        code = package
        code_uri = extract(package, name)
    lambda_client = client("lambda")
    arn = lambda_client.create_function(
        FunctionName=name,
        Runtime=properties["Runtime"],
        Role=properties["Role"],
        Handler=properties["Handler"],
        Code={"ZipFile": code},
        Timeout=int(properties.get("Timeout", 3)),
        MemorySize=int(properties.get("MemorySize", 128)),
        Architectures=list(properties.get("Architectures", ["x86_64"])),
        Environment={"Variables": variables},
    )["FunctionArn"]
    log_group = properties.get("LoggingConfig", {}).get("LogGroup") or f"/aws/lambda/{name}"
    logs = client("logs")
    if not logs.describe_log_groups(logGroupNamePrefix=log_group).get("logGroups"):
        logs.create_log_group(logGroupName=log_group)
    local = (InProcessFunction if package is None else WorkerFunction)(
        name=name,
        arn=arn,
        code_uri=code_uri,
        handler=properties["Handler"],
        environment={**variables, **function_environment},
        timeout_s=int(properties.get("Timeout", 3)),
        memory_mb=int(properties.get("MemorySize", 128)),
        log_group=log_group,
        region=deployment.region,
        log_sink=log_sink,
    )
    register(local)
    deployment.functions[logical_id] = local
    deployment.refs[logical_id] = name
    deployment.attributes[(logical_id, "Arn")] = arn
    for event_id, event in events.items():
        where = f"{logical_id}.Events.{event_id}"
        if event.get("Type") != "SQS":
            raise UnsupportedTemplate(
                f"{where}.Type", f"{event.get('Type')} events are not supported locally"
            )
        spec = deployment.resolve(event.get("Properties", {}), where)
        _reject_unknown(
            spec, {"Queue", "BatchSize", "FunctionResponseTypes", "Enabled"}, where, "SQS event"
        )
        enabled = str(spec.get("Enabled", True)).lower() != "false"
        if not enabled:
            deployment.notes.append(f"{where}: Enabled is false, so nothing polls its queue")
        queue_arn = spec["Queue"]
        queue_id = next(
            (
                lid
                for (lid, att), value in deployment.attributes.items()
                if att == "Arn" and value == queue_arn
            ),
            None,
        )
        if queue_id is None:
            raise UnsupportedTemplate(f"{where}.Queue", "must reference a queue of this template")
        # A mapping of the Lambda API, as CloudFormation creates it: the CLI lists,
        # reads, updates and deletes it, and the poller reads it back on every poll.
        batch_size = int(spec.get("BatchSize", 10))
        response_types = list(spec.get("FunctionResponseTypes", []))
        uuid = lambda_client.create_event_source_mapping(
            FunctionName=arn,
            EventSourceArn=queue_arn,
            BatchSize=batch_size,
            FunctionResponseTypes=response_types,
            Enabled=enabled,
        )["UUID"]
        deployment.event_sources.append(
            SqsEventSourceMapping(
                sqs=client("sqs"),
                queue_url=deployment.refs[queue_id],
                queue_arn=queue_arn,
                region=deployment.region,
                function=local,
                batch_size=batch_size,
                report_batch_item_failures="ReportBatchItemFailures" in response_types,
                lambda_client=lambda_client,
                uuid=uuid,
                enabled=enabled,
            )
        )


def _package(
    deployment: Deployment, logical_id: str, code_uri: Any, client: ClientFactory
) -> bytes | None:
    """The deployment package a packaged template's ``CodeUri`` names (``s3://bucket/key``
    or ``{Bucket, Key}``, as ``sam deploy`` uploads it), or ``None`` for a local folder.

    Raises:
        UnsupportedTemplate: the object cannot be read, or is not a zip archive.
    """
    where = f"{logical_id}.CodeUri"
    if isinstance(code_uri, Mapping):
        location: Mapping[str, Any] = code_uri
    elif isinstance(code_uri, str) and code_uri.startswith("s3://"):
        bucket, _, key = code_uri.removeprefix("s3://").partition("/")
        location = {"Bucket": bucket, "Key": key}
    else:
        return None
    archive = _s3_object(client, location, where)
    if not zipfile.is_zipfile(io.BytesIO(archive)):
        raise UnsupportedTemplate(where, "the S3 object is not a zip archive")
    return archive


def _s3_object(client: ClientFactory, location: Mapping[str, Any], where: str) -> bytes:
    kwargs = {"Bucket": str(location["Bucket"]), "Key": str(location["Key"])}
    if location.get("Version"):
        kwargs["VersionId"] = str(location["Version"])
    try:
        body: bytes = client("s3").get_object(**kwargs)["Body"].read()
    except ClientError as exc:
        raise UnsupportedTemplate(
            where, f"s3://{kwargs['Bucket']}/{kwargs['Key']}: {exc.response['Error']['Code']}"
        ) from exc
    return body


def _state_machine(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(
        _properties(resource, _STATE_MACHINE_PROPERTIES, logical_id), logical_id
    )
    location = properties["DefinitionUri"]
    if isinstance(location, Mapping):  # packaged by sam deploy: {Bucket, Key[, Version]}
        definition = _s3_object(client, location, f"{logical_id}.DefinitionUri").decode()
    else:
        definition = (ROOT / location).read_text()
    for key, value in properties.get("DefinitionSubstitutions", {}).items():
        definition = definition.replace(f"${{{key}}}", str(value))
    name = _physical_name(deployment, logical_id, 80)
    arn = client("stepfunctions").create_state_machine(
        name=name,
        definition=definition,
        roleArn=properties["Role"],
        type=properties.get("Type", "STANDARD"),
    )["stateMachineArn"]
    deployment.refs[logical_id] = arn
    deployment.attributes[(logical_id, "Arn")] = arn
    deployment.attributes[(logical_id, "Name")] = name


_SINGLE_METRIC_PROPERTIES = {"Namespace", "MetricName", "Dimensions", "Statistic", "Period"}
_ALARM_PROPERTIES = {
    "AlarmDescription",
    *_SINGLE_METRIC_PROPERTIES,
    "Metrics",
    "EvaluationPeriods",
    "Threshold",
    "ComparisonOperator",
    "TreatMissingData",
    "AlarmActions",
}
_METRIC_QUERY_KEYS = {"Id", "Expression", "Label", "MetricStat", "ReturnData", "Period"}
_METRIC_STAT_KEYS = {"Metric", "Period", "Stat", "Unit"}


def _alarm(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    """A metric alarm on one metric (``Namespace``, ``MetricName`` …) or on metric math
    (``Metrics``), never both, as ``PutMetricAlarm`` requires; ``AlarmActions`` as given
    (``Fn::If`` … ``AWS::NoValue`` leaves none)."""
    properties = deployment.resolve(
        _properties(resource, _ALARM_PROPERTIES, logical_id), logical_id
    )
    name = _physical_name(deployment, logical_id, 255)
    kwargs: dict[str, Any] = {
        "AlarmName": name,
        "AlarmDescription": properties.get("AlarmDescription", ""),
        "EvaluationPeriods": int(properties["EvaluationPeriods"]),
        "Threshold": float(properties["Threshold"]),
        "ComparisonOperator": properties["ComparisonOperator"],
        "TreatMissingData": properties.get("TreatMissingData", "missing"),
        "AlarmActions": [str(action) for action in properties.get("AlarmActions", [])],
    }
    single = sorted(_SINGLE_METRIC_PROPERTIES & set(properties))
    if "Metrics" in properties:
        if single:
            raise UnsupportedTemplate(
                f"{logical_id}.{single[0]}", "Metrics and a single metric exclude each other"
            )
        kwargs["Metrics"] = [
            _metric_query(query, f"{logical_id}.Metrics[{i}]")
            for i, query in enumerate(properties["Metrics"])
        ]
    else:
        kwargs.update(
            Namespace=properties["Namespace"],
            MetricName=properties["MetricName"],
            Dimensions=list(properties.get("Dimensions", [])),
            Statistic=properties["Statistic"],
            Period=int(properties["Period"]),
        )
    client("cloudwatch").put_metric_alarm(**kwargs)
    deployment.refs[logical_id] = name
    deployment.attributes[(logical_id, "Arn")] = (
        f"arn:aws:cloudwatch:{deployment.region}:{ACCOUNT_ID}:alarm:{name}"
    )


def _metric_query(query: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One ``MetricDataQuery`` of an alarm's ``Metrics``, unknown keys refused."""
    _reject_unknown(query, _METRIC_QUERY_KEYS, where, "MetricDataQuery")
    result = dict(query)
    if "MetricStat" in query:
        stat = query["MetricStat"]
        _reject_unknown(stat, _METRIC_STAT_KEYS, f"{where}.MetricStat", "MetricStat")
        result["MetricStat"] = {**stat, "Period": int(stat["Period"])}
    if "ReturnData" in query:
        result["ReturnData"] = _flag(query["ReturnData"])
    return result


def _dashboard(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    """``PutDashboard`` with the body as the template's ``Fn::Sub`` resolves it; the body
    must be JSON text (CloudFormation takes a string, CloudWatch parses it)."""
    properties = deployment.resolve(
        _properties(resource, {"DashboardBody"}, logical_id), logical_id
    )
    body = properties["DashboardBody"]
    where = f"{logical_id}.DashboardBody"
    if not isinstance(body, str):
        raise UnsupportedTemplate(where, "must be a string of JSON (use Fn::Sub)")
    try:
        json.loads(body)
    except ValueError as exc:
        raise UnsupportedTemplate(where, f"not valid JSON once resolved: {exc}") from exc
    name = _physical_name(deployment, logical_id, 255)
    client("cloudwatch").put_dashboard(DashboardName=name, DashboardBody=body)
    deployment.refs[logical_id] = name


def _topic(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(
        _properties(resource, _TOPIC_PROPERTIES, logical_id), logical_id
    )
    name = _physical_name(deployment, logical_id, 256)
    attributes = {key: str(value) for key, value in properties.items()}
    arn = client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
    deployment.refs[logical_id] = arn
    deployment.attributes[(logical_id, "TopicArn")] = arn
    deployment.attributes[(logical_id, "TopicName")] = name


def _subscription(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(
        _properties(resource, _SUBSCRIPTION_PROPERTIES, logical_id), logical_id
    )
    arn = client("sns").subscribe(
        TopicArn=properties["TopicArn"],
        Protocol=properties["Protocol"],
        Endpoint=str(properties["Endpoint"]),
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]
    deployment.refs[logical_id] = arn
    if properties["Protocol"] == "email":
        deployment.notes.append(
            f"{logical_id}: SNS would e-mail {properties['Endpoint']} a confirmation "
            "request; locally nothing is sent"
        )


def _key(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    properties = deployment.resolve(_properties(resource, _KEY_PROPERTIES, logical_id), logical_id)
    kms = client("kms")
    kwargs: dict[str, Any] = {"Description": str(properties.get("Description", ""))}
    if "KeyPolicy" in properties:
        kwargs["Policy"] = json.dumps(properties["KeyPolicy"])
    metadata = kms.create_key(**kwargs)["KeyMetadata"]
    if _flag(properties.get("EnableKeyRotation", False)):
        kms.enable_key_rotation(KeyId=metadata["KeyId"])
    deployment.refs[logical_id] = metadata["KeyId"]
    deployment.attributes[(logical_id, "Arn")] = metadata["Arn"]
    deployment.attributes[(logical_id, "KeyId")] = metadata["KeyId"]


def _query_definition(
    deployment: Deployment,
    logical_id: str,
    resource: Mapping[str, Any],
    client: ClientFactory,
    **_: Any,
) -> None:
    """``PutQueryDefinition`` when moto implements it; otherwise the definition is
    recorded in :attr:`Deployment.query_definitions` with a stable id and a note."""
    properties = deployment.resolve(
        _properties(resource, _QUERY_DEFINITION_PROPERTIES, logical_id), logical_id
    )
    log_groups = tuple(str(group) for group in properties.get("LogGroupNames", []))
    created = hasattr(LogsResponse, "put_query_definition")
    if created:
        definition_id = str(
            client("logs").put_query_definition(
                name=properties["Name"],
                queryString=properties["QueryString"],
                logGroupNames=list(log_groups),
            )["queryDefinitionId"]
        )
    else:
        definition_id = str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"localcloud:{deployment.stack_name}/{logical_id}")
        )
        deployment.notes.append(
            f"{logical_id}: saved query recorded, not created (moto {moto.__version__} has "
            "no PutQueryDefinition); run its query string in Logs Insights on AWS"
        )
    deployment.query_definitions[logical_id] = QueryDefinition(
        query_definition_id=definition_id,
        name=str(properties["Name"]),
        query_string=str(properties["QueryString"]),
        log_group_names=log_groups,
        created=created,
    )
    deployment.refs[logical_id] = definition_id


_CREATORS: dict[str, Callable[..., None]] = {
    "AWS::SQS::Queue": _queue,
    "AWS::DynamoDB::Table": _table,
    "AWS::Logs::LogGroup": _log_group,
    "AWS::IAM::Role": _role,
    "AWS::Serverless::Function": _function,
    "AWS::Serverless::StateMachine": _state_machine,
    "AWS::CloudWatch::Alarm": _alarm,
    "AWS::CloudWatch::Dashboard": _dashboard,
    "AWS::SNS::Topic": _topic,
    "AWS::SNS::Subscription": _subscription,
    "AWS::KMS::Key": _key,
    "AWS::Logs::QueryDefinition": _query_definition,
}


def creation_order(template: Template) -> list[str]:
    """Logical ids in an order where every referenced resource comes first."""
    resources = template.resources
    depends: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        body: Any = dict(resource)
        if resource.get("Type") == "AWS::Serverless::Function":
            body = {"Globals": template.function_globals, **body}
        found = _references(body) & set(resources)
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
