"""Observability on AWS: the alarms, the dashboard and the saved Logs Insights queries.

Every metric an alarm or a dashboard widget uses is either one the code emits or one an
AWS service publishes, with dimensions that point at this stack's resources:

- the code's metrics: the names come from the workers' ``add_metric`` calls (read from
  the source: ``decision.metric_name`` is every :class:`~order_guard.store.Decision`'s
  ``Orders<Decision>``, a string is itself); the namespace is the template's
  ``POWERTOOLS_METRICS_NAMESPACE``; the dimensions are what Powertools puts on them,
  taken from the EMF lines the deployed workers really write (Powertools 3.37 adds one
  dimension, ``service`` = ``POWERTOOLS_SERVICE_NAME``, when no other is set:
  ``AmazonCloudWatchEMFProvider.serialize_metric_set``);
- the services' metrics: :data:`SERVICE_METRICS`, from the AWS documentation.

The alarms notify the topic that exists only with ``AlarmEmail`` set; the queries read
both workers' log groups and only fields the workers' ``RESULT`` lines carry. The local
cloud deploys all of it, with and without an ``AlarmEmail``.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from localcloud.account import LocalCloud
from localcloud.cfn.deployer import Deployment, deploy, function_properties
from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.intrinsics import resolve
from localcloud.cfn.template import Template
from localcloud.cfn.transform import local_path
from localcloud.project import ROOT
from localcloud.tools.scenarios import load_event
from order_guard.store import Decision
from tests.support.aws import REGION
from tests.support.environment import default_template, function_environment

ALARM = "AWS::CloudWatch::Alarm"
WORKERS = ("QueueWorkerFunction", "WorkflowWorkerFunction")
ALARM_ACTIONS = {"Fn::If": ["HasAlarmEmail", [{"Ref": "AlarmTopic"}], {"Ref": "AWS::NoValue"}]}
EMAIL = "oncall@example.com"


@dataclass(frozen=True)
class ServiceMetrics:
    """Metrics an AWS service publishes, the dimension that names the resource, and how
    the template must refer to that resource (``Ref`` or ``GetAtt <attribute>``)."""

    names: frozenset[str]
    dimension: str
    resource_type: str
    reference: str  # "Ref" or the GetAtt attribute


SERVICE_METRICS: dict[str, ServiceMetrics] = {
    # Amazon SQS Developer Guide, "Available CloudWatch metrics for Amazon SQS" (dimension
    # QueueName: the queue's name, which GetAtt QueueName gives): docs.aws.amazon.com/
    # AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
    "AWS/SQS": ServiceMetrics(
        frozenset(
            {
                "ApproximateAgeOfOldestMessage",
                "ApproximateNumberOfMessagesDelayed",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesVisible",
                "NumberOfEmptyReceives",
                "NumberOfMessagesDeleted",
                "NumberOfMessagesReceived",
                "NumberOfMessagesSent",
                "SentMessageSize",
            }
        ),
        "QueueName",
        "AWS::SQS::Queue",
        "QueueName",
    ),
    # AWS Step Functions Developer Guide, "Monitoring Step Functions metrics using Amazon
    # CloudWatch" (execution metrics: dimension StateMachineArn; Ref of a SAM state machine
    # is its ARN): https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html
    "AWS/States": ServiceMetrics(
        frozenset(
            {
                "ExecutionTime",
                "ExecutionThrottled",
                "ExecutionsAborted",
                "ExecutionsFailed",
                "ExecutionsStarted",
                "ExecutionsSucceeded",
                "ExecutionsTimedOut",
            }
        ),
        "StateMachineArn",
        "AWS::Serverless::StateMachine",
        "Ref",
    ),
    # AWS Lambda Developer Guide, "Types of metrics for Lambda functions" (dimension
    # FunctionName; Ref of a function is its name):
    # https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
    "AWS/Lambda": ServiceMetrics(
        frozenset(
            {
                "ConcurrentExecutions",
                "Duration",
                "Errors",
                "Invocations",
                "Throttles",
            }
        ),
        "FunctionName",
        "AWS::Serverless::Function",
        "Ref",
    ),
}


@dataclass(frozen=True)
class MetricUse:
    """One metric an alarm or a widget reads; dimension values as the template gives
    them (a literal, ``{"Ref": …}`` or ``{"Fn::GetAtt": […]}``)."""

    where: str
    namespace: str
    name: str
    dimensions: Mapping[str, Any]


# --- what the code emits ---------------------------------------------------------------


def handler_module(template: Template, function: str) -> Path:
    """The source file of a function's handler (``order_guard.queue_worker.lambda_handler``)."""
    properties = function_properties(template, function)
    module = str(properties["Handler"]).rsplit(".", 1)[0]
    return local_path(properties["Code"]["S3Key"]) / (module.replace(".", "/") + ".py")


def emitted_metric_names(source: Path) -> set[str]:
    """The metric names a module's ``add_metric`` calls can emit, read from its source."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_metric"
        ):
            continue
        keyword = [k.value for k in node.keywords if k.arg == "name"]
        (name,) = keyword or node.args[:1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            names.add(name.value)
        elif isinstance(name, ast.Attribute) and name.attr == "metric_name":
            names |= {decision.metric_name for decision in Decision}
        else:
            raise AssertionError(f"{source.name}:{node.lineno}: a metric name not read here")
    return names


def worker_environment(function: str) -> dict[str, str]:
    return function_environment(function, orders_table="orders", attempts_table="attempts")


@dataclass(frozen=True)
class Emitted:
    """What the workers emit: per ``service`` value, the metric names; the namespace and
    the dimension names Powertools puts on them (from the deployed workers' EMF lines)."""

    namespace: str
    dimension_names: frozenset[str]
    names_by_service: Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class Stack:
    """A local deployment of template.yaml as read before its local cloud stopped (two
    local clouds alive at once would share one moto, so none outlives its fixture)."""

    template: Template
    deployment: Deployment
    alarms: list[dict[str, Any]]
    topics: dict[str, dict[str, str]]
    """Topic ARN → attributes."""
    subscriptions: list[dict[str, Any]]
    keys: dict[str, dict[str, Any]]
    """Key id → description, rotation and policy, for every customer managed key."""
    dashboard_body: dict[str, Any]
    worker_logs: dict[str, list[dict[str, Any]]]
    """Every JSON line each worker wrote to its log group."""

    @property
    def outputs(self) -> dict[str, str]:
        return self.deployment.outputs

    def alarm_topic_keys(self) -> list[str]:
        """The keys with AlarmTopicKey's description (moto's DynamoDB SSE makes its own)."""
        key = self.template.declared_resources["AlarmTopicKey"]["Properties"]
        return [k for k, v in self.keys.items() if v["Description"] == key["Description"]]


def read_stack(cloud: LocalCloud) -> Stack:
    sns, kms, logs = cloud.client("sns"), cloud.client("kms"), cloud.client("logs")
    cloudwatch = cloud.client("cloudwatch")
    keys = {}
    for key in kms.list_keys()["Keys"]:
        metadata = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
        if metadata["KeyManager"] == "CUSTOMER":
            keys[key["KeyId"]] = {
                "Description": metadata.get("Description"),
                "Rotation": kms.get_key_rotation_status(KeyId=key["KeyId"])["KeyRotationEnabled"],
                "Policy": json.loads(
                    kms.get_key_policy(KeyId=key["KeyId"], PolicyName="default")["Policy"]
                ),
            }
    worker_logs: dict[str, list[dict[str, Any]]] = {}
    for function in WORKERS:
        group = cloud.outputs[f"{function.removesuffix('Function')}LogGroupName"]
        pages = logs.get_paginator("filter_log_events").paginate(logGroupName=group)
        messages = [event["message"] for page in pages for event in page["events"]]
        worker_logs[function] = [json.loads(m) for m in messages if m.startswith("{")]
    dashboard = cloudwatch.get_dashboard(DashboardName=cloud.outputs["OperationsDashboardName"])
    return Stack(
        template=cloud.template,
        deployment=cloud.deployment,
        alarms=cloudwatch.describe_alarms()["MetricAlarms"],
        topics={
            topic["TopicArn"]: sns.get_topic_attributes(TopicArn=topic["TopicArn"])["Attributes"]
            for topic in sns.list_topics()["Topics"]
        },
        subscriptions=sns.list_subscriptions()["Subscriptions"],
        keys=keys,
        dashboard_body=json.loads(dashboard["DashboardBody"]),
        worker_logs=worker_logs,
    )


@pytest.fixture(scope="module")
def default_stack() -> Stack:
    """The stack as the default samconfig environment deploys it (AlarmEmail empty),
    after each worker made every decision: accepted, duplicate, conflict and invalid,
    and the summary stage found and not found."""
    with LocalCloud() as cloud, warnings.catch_warnings():
        # Powertools warns of an invocation without metrics: the summary of no order.
        warnings.filterwarnings("ignore", "No application metrics", UserWarning)
        queue = cloud.deployment.function("QueueWorkerFunction")
        for event in (
            "sqs-first-order",
            "sqs-two-copies",
            "sqs-conflicting-copy",
            "sqs-mixed-batch",
        ):
            queue.invoke(load_event(event))
        workflow = cloud.deployment.function("WorkflowWorkerFunction")
        for payload in (
            {"id": "observed-order", "quantity": 1},
            {"id": "observed-order", "quantity": 1},
            {"id": "observed-order", "quantity": 2},
            {"id": "observed-order", "quantity": 0},
            {"stage": "summary", "id": "observed-order"},
            {"stage": "summary", "id": "never-stored"},
        ):
            workflow.invoke(payload)
        return read_stack(cloud)


@pytest.fixture(scope="module")
def email_stack() -> Stack:
    """The stack deployed with an AlarmEmail."""
    with LocalCloud(parameter_overrides={"AlarmEmail": EMAIL}) as cloud:
        return read_stack(cloud)


@pytest.fixture(scope="module")
def worker_logs(default_stack: Stack) -> dict[str, list[dict[str, Any]]]:
    return default_stack.worker_logs


@pytest.fixture(scope="module")
def emitted(worker_logs: dict[str, list[dict[str, Any]]]) -> Emitted:
    template = default_template()
    namespaces: set[str] = set()
    dimension_names: set[frozenset[str]] = set()
    names_by_service: dict[str, frozenset[str]] = {}
    for function in WORKERS:
        environment = worker_environment(function)
        service = environment["POWERTOOLS_SERVICE_NAME"]
        parsed = emitted_metric_names(handler_module(template, function))
        for line in worker_logs[function]:
            for directive in line.get("_aws", {}).get("CloudWatchMetrics", []):
                namespaces.add(directive["Namespace"])
                for dimension_set in directive["Dimensions"]:
                    dimension_names.add(frozenset(dimension_set))
                    assert {name: line[name] for name in dimension_set} == {"service": service}
                written = {metric["Name"] for metric in directive["Metrics"]}
                assert written <= parsed, f"{function} emits metrics its source does not name"
        names_by_service[service] = frozenset(parsed)
    (namespace,) = namespaces
    (dimensions,) = dimension_names
    return Emitted(namespace, dimensions, names_by_service)


# --- checking one metric use -----------------------------------------------------------


def check_metric(use: MetricUse, template: Template, emitted: Emitted) -> None:
    """``use`` reads a metric the code emits or the service publishes, about this stack."""
    if use.namespace in SERVICE_METRICS:
        service = SERVICE_METRICS[use.namespace]
        assert use.name in service.names, f"{use.where}: {use.namespace} has no {use.name}"
        assert set(use.dimensions) == {service.dimension}, use.where
        value = use.dimensions[service.dimension]
        if service.reference == "Ref":
            assert set(value) == {"Ref"}, f"{use.where}: {service.dimension} must be a Ref"
            target = value["Ref"]
        else:
            assert set(value) == {"Fn::GetAtt"}, f"{use.where}: must be a GetAtt"
            target, attribute = value["Fn::GetAtt"]
            assert attribute == service.reference, use.where
        resource = template.declared_resources[target]
        assert resource["Type"] == service.resource_type, f"{use.where}: {target}"
        return
    assert use.namespace == emitted.namespace, f"{use.where}: namespace {use.namespace}"
    for function in WORKERS:
        assert worker_environment(function)["POWERTOOLS_METRICS_NAMESPACE"] == use.namespace
    assert frozenset(use.dimensions) == emitted.dimension_names, use.where
    service = use.dimensions["service"]
    assert service in emitted.names_by_service, f"{use.where}: no worker is service {service}"
    assert use.name in emitted.names_by_service[service], (
        f"{use.where}: {service} never emits {use.name}"
    )


def alarm_metric_uses(logical_id: str, properties: Mapping[str, Any]) -> list[MetricUse]:
    def dimensions(metric: Mapping[str, Any]) -> dict[str, Any]:
        return {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}

    if "Metrics" not in properties:
        return [
            MetricUse(
                logical_id,
                properties["Namespace"],
                properties["MetricName"],
                dimensions(properties),
            )
        ]
    return [
        MetricUse(
            f"{logical_id}.Metrics.{query['Id']}",
            query["MetricStat"]["Metric"]["Namespace"],
            query["MetricStat"]["Metric"]["MetricName"],
            dimensions(query["MetricStat"]["Metric"]),
        )
        for query in properties["Metrics"]
        if "MetricStat" in query
    ]


def alarms(template: Template) -> dict[str, Mapping[str, Any]]:
    return {
        logical_id: resource["Properties"]
        for logical_id, resource in template.declared_resources.items()
        if resource["Type"] == ALARM
    }


# --- alarms ----------------------------------------------------------------------------


def test_every_alarm_metric_is_emitted_by_the_code_or_published_by_the_service(
    template: Template, emitted: Emitted
) -> None:
    uses = [use for lid, props in alarms(template).items() for use in alarm_metric_uses(lid, props)]
    assert uses
    for use in uses:
        check_metric(use, template, emitted)


def test_the_alarms_watch_what_the_issue_asks_for(template: Template) -> None:
    watched = {
        (use.namespace, use.name, json.dumps(dict(use.dimensions), sort_keys=True))
        for lid, props in alarms(template).items()
        for use in alarm_metric_uses(lid, props)
    }

    def key(namespace: str, name: str, **dimensions: Any) -> tuple[str, str, str]:
        return namespace, name, json.dumps(dimensions, sort_keys=True)

    state_machine = {"Ref": "OrdersStateMachine"}
    assert watched == {
        key(
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            QueueName={"Fn::GetAtt": ["JobsDeadLetterQueue", "QueueName"]},
        ),
        key("OrderGuard", "OrdersConflict", service="queue-worker"),
        key("OrderGuard", "OrdersConflict", service="workflow-worker"),
        key("AWS/States", "ExecutionsFailed", StateMachineArn=state_machine),
        key("AWS/States", "ExecutionsTimedOut", StateMachineArn=state_machine),
        key("AWS/States", "ExecutionsAborted", StateMachineArn=state_machine),
        key(
            "AWS/SQS",
            "ApproximateAgeOfOldestMessage",
            QueueName={"Fn::GetAtt": ["JobsQueue", "QueueName"]},
        ),
        key("AWS/Lambda", "Errors", FunctionName={"Ref": "QueueWorkerFunction"}),
    }


def test_every_alarm_fires_above_zero_except_the_age_alarm_at_its_parameter(
    template: Template,
) -> None:
    for logical_id, properties in alarms(template).items():
        assert properties["ComparisonOperator"] == "GreaterThanThreshold", logical_id
        assert properties["TreatMissingData"] == "notBreaching", logical_id
        expected = {"Ref": "JobsQueueAgeAlarmSeconds"} if logical_id == "JobsQueueAgeAlarm" else 0
        assert properties["Threshold"] == expected, logical_id
    parameter = template.body["Parameters"]["JobsQueueAgeAlarmSeconds"]
    assert parameter["Type"] == "Number"
    assert parameter["Default"] == 300
    assert parameter["MinValue"] == 60


def test_metric_math_sums_exactly_its_metrics_with_missing_data_as_zero(
    template: Template,
) -> None:
    """Each AWS/States metric exists only for periods with such executions: the one
    returned expression must FILL every metric it sums, and use no other."""
    for logical_id, properties in alarms(template).items():
        if "Metrics" not in properties:
            continue
        metrics = {q["Id"] for q in properties["Metrics"] if "MetricStat" in q}
        (returned,) = [q for q in properties["Metrics"] if q.get("ReturnData", True)]
        assert "MetricStat" not in returned, logical_id
        filled = set(re.findall(r"FILL\((\w+), 0\)", returned["Expression"]))
        used = set(re.findall(r"\b([a-z]\w*)\b", returned["Expression"]))
        assert filled == used == metrics, logical_id


def test_every_alarm_notifies_the_topic_that_exists_only_with_an_alarm_email(
    template: Template,
) -> None:
    assert template.body["Conditions"]["HasAlarmEmail"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]
    }
    assert template.body["Parameters"]["AlarmEmail"]["Default"] == ""
    for logical_id, properties in alarms(template).items():
        assert properties["AlarmActions"] == ALARM_ACTIONS, logical_id
    resources = template.declared_resources
    for logical_id in ("AlarmTopic", "AlarmTopicKey", "AlarmEmailSubscription"):
        assert resources[logical_id]["Condition"] == "HasAlarmEmail", logical_id
    assert resources["AlarmEmailSubscription"]["Properties"] == {
        "TopicArn": {"Ref": "AlarmTopic"},
        "Protocol": "email",
        "Endpoint": {"Ref": "AlarmEmail"},
    }
    assert template.declared_outputs["AlarmTopicArn"] == {
        "Condition": "HasAlarmEmail",
        "Description": template.declared_outputs["AlarmTopicArn"]["Description"],
        "Value": {"Ref": "AlarmTopic"},
    }


def test_the_topic_is_encrypted_with_a_key_cloudwatch_alarms_may_use(template: Template) -> None:
    """Not the AWS managed key alias/aws/sns: its key policy cannot be changed and does
    not let CloudWatch alarms call kms:GenerateDataKey, so their notifications to such a
    topic fail ("CloudWatch Alarms does not have authorization to access the SNS topic
    encryption key": AWS re:Post knowledge center, cloudwatch-configure-alarm-sns)."""
    topic = template.declared_resources["AlarmTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    key = template.declared_resources["AlarmTopicKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    (cloudwatch,) = [
        s
        for s in key["KeyPolicy"]["Statement"]
        if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    ]
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}


# --- the dashboard ----------------------------------------------------------------------


def dashboard_body(template: Template) -> dict[str, Any]:
    """The dashboard's JSON after ``Fn::Sub``: a resource's ``Ref`` becomes ``<Ref X>``
    and its ``GetAtt`` ``<GetAtt X.Attribute>`` (so each value still says what it points
    at), parameters and pseudo parameters their values."""
    pseudo = {"AWS::Region": REGION, "AWS::AccountId": "123456789012", "AWS::Partition": "aws"}

    def ref(name: str) -> str:
        if name in template.declared_resources:
            return f"<Ref {name}>"
        if name in template.parameters:
            return template.parameters[name]
        return pseudo[name]

    def get_att(logical_id: str, attribute: str) -> str:
        if logical_id not in template.declared_resources:
            raise KeyError(logical_id)
        return f"<GetAtt {logical_id}.{attribute}>"

    body = template.declared_resources["OperationsDashboard"]["Properties"]["DashboardBody"]
    assert set(body) == {"Fn::Sub"}, "the body is built with !Sub"
    text = resolve(body, where="OperationsDashboard.DashboardBody", ref=ref, get_att=get_att)
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def as_intrinsic(value: Any) -> Any:
    """``<Ref X>`` → ``{"Ref": "X"}``, ``<GetAtt X.A>`` → ``{"Fn::GetAtt": ["X", "A"]}``."""
    if isinstance(value, str) and (match := re.fullmatch(r"<Ref (\w+)>", value)):
        return {"Ref": match.group(1)}
    if isinstance(value, str) and (match := re.fullmatch(r"<GetAtt (\w+)\.(\w+)>", value)):
        return {"Fn::GetAtt": [match.group(1), match.group(2)]}
    return value


def widget_metric_uses(body: Mapping[str, Any]) -> list[MetricUse]:
    uses = []
    for i, widget in enumerate(body["widgets"]):
        for j, metric in enumerate(widget["properties"].get("metrics", [])):
            fields = [part for part in metric if not isinstance(part, dict)]
            namespace, name, *pairs = fields
            assert len(pairs) % 2 == 0, f"widget {i} metric {j}: dimension without a value"
            dimensions = {pairs[k]: as_intrinsic(pairs[k + 1]) for k in range(0, len(pairs), 2)}
            where = f"widget {i} ({widget['properties'].get('title')}) metric {j}"
            uses.append(MetricUse(where, namespace, name, dimensions))
    return uses


def test_the_dashboard_body_is_json_after_substitution(template: Template) -> None:
    body = dashboard_body(template)
    assert {widget["type"] for widget in body["widgets"]} == {"alarm", "metric", "log"}
    for widget in body["widgets"]:
        if widget["type"] != "alarm":
            assert widget["properties"]["region"] == REGION


def test_every_dashboard_metric_is_emitted_by_the_code_or_published_by_the_service(
    template: Template, emitted: Emitted
) -> None:
    uses = widget_metric_uses(dashboard_body(template))
    assert len(uses) > 20
    for use in uses:
        check_metric(use, template, emitted)


def test_the_dashboard_shows_what_the_issue_asks_for(template: Template) -> None:
    body = dashboard_body(template)
    shown = {
        (use.namespace, use.name, json.dumps(dict(use.dimensions), sort_keys=True))
        for use in widget_metric_uses(body)
    }

    def has(namespace: str, name: str, **dimensions: Any) -> bool:
        return (namespace, name, json.dumps(dimensions, sort_keys=True)) in shown

    for function in WORKERS:
        service = worker_environment(function)["POWERTOOLS_SERVICE_NAME"]
        for decision in Decision:
            assert has("OrderGuard", decision.metric_name, service=service), (service, decision)
        for name in ("Errors", "Duration", "Throttles"):
            assert has("AWS/Lambda", name, FunctionName={"Ref": function}), (function, name)
    jobs = {"QueueName": {"Fn::GetAtt": ["JobsQueue", "QueueName"]}}
    for name in (
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateAgeOfOldestMessage",
    ):
        assert has("AWS/SQS", name, **jobs), name
    dlq = {"QueueName": {"Fn::GetAtt": ["JobsDeadLetterQueue", "QueueName"]}}
    assert has("AWS/SQS", "ApproximateNumberOfMessagesVisible", **dlq)
    for name in ("ExecutionsStarted", "ExecutionsSucceeded", "ExecutionsFailed"):
        assert has("AWS/States", name, StateMachineArn={"Ref": "OrdersStateMachine"}), name
    (alarm_widget,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert alarm_widget["properties"]["alarms"] == [
        f"<GetAtt {logical_id}.Arn>" for logical_id in alarms(template)
    ]


# --- the saved queries --------------------------------------------------------------------


def query_fields(query: str) -> set[str]:
    """The log fields a Logs Insights query reads: its ``fields`` and ``display`` lists,
    the left side of each comparison in ``filter``, and the ``sort`` field;
    ``@``-fields are CloudWatch's own and left out."""
    names: set[str] = set()
    for command in (part.strip() for part in query.split("|")):
        verb, _, rest = command.partition(" ")
        if verb in ("fields", "display"):
            names |= {item.strip().split(" as ")[0] for item in rest.split(",")}
        elif verb == "filter":
            names |= set(re.findall(r"([@\w][\w.]*)\s*(?:=|!=|<|>|\blike\b|\bin\b)", rest))
        elif verb == "sort":
            names.add(rest.split()[0])
    return {name for name in names if not name.startswith("@")}


def query_sources(query: str) -> list[str]:
    """The log groups of a dashboard log widget's ``SOURCE '…'`` commands."""
    return re.findall(r"SOURCE '([^']+)'", query)


def result_keys(lines: list[dict[str, Any]]) -> set[str]:
    """Every field of the ``RESULT`` lines, nested ones as Logs Insights names them."""
    keys: set[str] = set()
    for line in lines:
        if line.get("message") != "RESULT":
            continue
        for key, value in line.items():
            keys.add(key)
            if isinstance(value, dict):
                keys |= {f"{key}.{inner}" for inner in value}
    return keys


@pytest.fixture(scope="module")
def logged_fields(worker_logs: dict[str, list[dict[str, Any]]]) -> set[str]:
    return result_keys([line for lines in worker_logs.values() for line in lines])


def query_definitions(template: Template) -> dict[str, Mapping[str, Any]]:
    return {
        logical_id: resource["Properties"]
        for logical_id, resource in template.declared_resources.items()
        if resource["Type"] == "AWS::Logs::QueryDefinition"
    }


def worker_log_groups(template: Template) -> list[dict[str, str]]:
    return [
        template.declared_resources[function]["Properties"]["LoggingConfig"]["LogGroup"]
        for function in WORKERS
    ]


def test_the_saved_queries_read_both_worker_log_groups(template: Template) -> None:
    definitions = query_definitions(template)
    assert set(definitions) == {"ConflictsQueryDefinition", "OrderDecisionsQueryDefinition"}
    for logical_id, properties in definitions.items():
        assert properties["LogGroupNames"] == worker_log_groups(template), logical_id


def test_the_saved_queries_read_only_fields_the_workers_log(
    template: Template, logged_fields: set[str]
) -> None:
    for logical_id, properties in query_definitions(template).items():
        query = properties["QueryString"]
        assert 'filter message = "RESULT"' in query, logical_id
        assert query_fields(query) <= logged_fields, (logical_id, query_fields(query))


def test_the_conflicts_query_lists_stored_and_requested_details(template: Template) -> None:
    query = query_definitions(template)["ConflictsQueryDefinition"]["QueryString"]
    assert f'decision = "{Decision.CONFLICT.value}"' in query
    fields = query_fields(query)
    for side in ("stored", "requested"):
        assert {f"{side}.quantity", f"{side}.total_cents"} <= fields, side


def test_the_one_order_query_names_its_placeholder(template: Template) -> None:
    properties = query_definitions(template)["OrderDecisionsQueryDefinition"]
    assert 'id = "ORDER-ID"' in properties["QueryString"]
    assert "ORDER-ID" in properties["Name"]["Fn::Sub"]
    assert {"stage", "decision", "id"} <= query_fields(properties["QueryString"])


def test_the_dashboard_log_widget_reads_both_groups_and_logged_fields(
    template: Template, logged_fields: set[str]
) -> None:
    (widget,) = [w for w in dashboard_body(template)["widgets"] if w["type"] == "log"]
    query = widget["properties"]["query"]
    assert [as_intrinsic(source) for source in query_sources(query)] == worker_log_groups(template)
    assert query_fields(query) <= logged_fields


# --- the local cloud deploys it -------------------------------------------------------------


def test_the_workers_write_powertools_emf_with_the_service_dimension(emitted: Emitted) -> None:
    """The fixture asserts every EMF line as it reads it; this pins down the result."""
    assert emitted.namespace == "OrderGuard"
    assert emitted.dimension_names == {"service"}
    assert set(emitted.names_by_service) == {"queue-worker", "workflow-worker"}
    assert "OrdersConflict" in emitted.names_by_service["queue-worker"]
    assert "SummariesRead" in emitted.names_by_service["workflow-worker"]


def test_the_workers_really_emitted_a_conflict_each(
    worker_logs: dict[str, list[dict[str, Any]]],
) -> None:
    for function in WORKERS:
        conflicts = [line for line in worker_logs[function] if "OrdersConflict" in line]
        assert conflicts, function
        assert all(
            line["service"] == worker_environment(function)["POWERTOOLS_SERVICE_NAME"]
            for line in conflicts
        )


def test_without_an_alarm_email_no_topic_and_alarms_without_actions(
    default_stack: Stack,
) -> None:
    stack = default_stack
    assert stack.template.parameters["AlarmEmail"] == ""
    assert (stack.topics, stack.subscriptions, stack.alarm_topic_keys()) == ({}, [], [])
    assert "AlarmTopicArn" not in stack.outputs
    created = set(stack.deployment.refs)
    assert not {"AlarmTopic", "AlarmTopicKey", "AlarmEmailSubscription"} & created
    assert len(stack.alarms) == len(alarms(stack.template))
    assert all(alarm["AlarmActions"] == [] for alarm in stack.alarms)


def test_with_an_alarm_email_every_alarm_notifies_the_encrypted_topic(email_stack: Stack) -> None:
    stack = email_stack
    topic_arn = stack.outputs["AlarmTopicArn"]
    assert list(stack.topics) == [topic_arn]
    key_id = stack.topics[topic_arn]["KmsMasterKeyId"]
    assert stack.alarm_topic_keys() == [key_id]
    key = stack.keys[key_id]
    assert key["Rotation"] is True
    principals = [statement["Principal"] for statement in key["Policy"]["Statement"]]
    assert {"Service": "cloudwatch.amazonaws.com"} in principals
    (subscription,) = stack.subscriptions
    assert (subscription["TopicArn"], subscription["Protocol"], subscription["Endpoint"]) == (
        topic_arn,
        "email",
        EMAIL,
    )
    assert len(stack.alarms) == len(alarms(stack.template))
    assert all(alarm["AlarmActions"] == [topic_arn] for alarm in stack.alarms)
    (math,) = [alarm for alarm in stack.alarms if alarm.get("Metrics")]
    assert [query["Id"] for query in math["Metrics"]] == [
        "failed",
        "timed_out",
        "aborted",
        "unsuccessful",
    ]


def test_the_deployed_dashboard_names_this_stacks_resources(default_stack: Stack) -> None:
    deployment = default_stack.deployment
    names = {
        "QueueName": {
            deployment.get_att("JobsQueue", "QueueName"),
            deployment.get_att("JobsDeadLetterQueue", "QueueName"),
        },
        "FunctionName": {deployment.ref(function) for function in WORKERS},
        "StateMachineArn": {default_stack.outputs["OrdersStateMachineArn"]},
        "service": {"queue-worker", "workflow-worker"},
    }
    body = default_stack.dashboard_body
    for use in widget_metric_uses(body):
        for dimension, value in use.dimensions.items():
            assert value in names[dimension], use.where
    (alarm_widget,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert set(alarm_widget["properties"]["alarms"]) == {
        alarm["AlarmArn"] for alarm in default_stack.alarms
    }
    (log_widget,) = [w for w in body["widgets"] if w["type"] == "log"]
    assert query_sources(log_widget["properties"]["query"]) == [
        default_stack.outputs["QueueWorkerLogGroupName"],
        default_stack.outputs["WorkflowWorkerLogGroupName"],
    ]


def test_the_saved_queries_are_deployed_with_both_log_groups(default_stack: Stack) -> None:
    outputs = default_stack.outputs
    groups = (outputs["QueueWorkerLogGroupName"], outputs["WorkflowWorkerLogGroupName"])
    deployment = default_stack.deployment
    assert set(deployment.records) == set(query_definitions(default_stack.template))
    for logical_id, definition in deployment.records.items():
        assert definition.log_group_names == groups, logical_id
        assert definition.name.startswith("order-guard/"), logical_id
        assert deployment.refs[logical_id] == definition.query_definition_id
        if not definition.created:  # moto has no PutQueryDefinition: recorded, and said so
            notes = [note for note in deployment.notes if note.startswith(logical_id)]
            assert any("saved query recorded, not created" in note for note in notes)


# --- the local cloud honours conditions ----------------------------------------------------


def small_template(
    resources: dict[str, Any],
    outputs: dict[str, Any] | None = None,
    parameters: dict[str, str] | None = None,
) -> Template:
    """A template of a few resources with the condition ``On`` = parameter ``Switch``."""
    return Template(
        path=ROOT / "small.yaml",
        body={
            "Parameters": {"Switch": {"Type": "String"}},
            "Conditions": {"On": {"Fn::Equals": [{"Ref": "Switch"}, "on"]}},
            "Resources": resources,
            "Outputs": outputs or {},
        },
        parameters=parameters or {"Switch": "off"},
        config_env="default",
    )


TOPIC = {"Type": "AWS::SNS::Topic", "Condition": "On", "Properties": {}}


def alarm_with_actions(actions: Any) -> dict[str, Any]:
    return {
        "Type": ALARM,
        "Properties": {
            "Namespace": "AWS/SQS",
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Statistic": "Maximum",
            "Period": 60,
            "EvaluationPeriods": 1,
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": actions,
        },
    }


Deploy = Callable[[Template], Any]


@pytest.fixture
def deploy_small() -> Iterator[Deploy]:
    with mock_aws():
        yield lambda template: deploy(
            template,
            lambda service: boto3.client(service, region_name=REGION),
            stack_name="small",
            region=REGION,
        )


@pytest.mark.parametrize(("switch", "created"), [("off", False), ("on", True)])
def test_a_resource_and_an_output_exist_only_when_their_condition_holds(
    deploy_small: Deploy, switch: str, created: bool
) -> None:
    template = small_template(
        {
            "Topic": TOPIC,
            "Alarm": alarm_with_actions(
                {"Fn::If": ["On", [{"Ref": "Topic"}], {"Ref": "AWS::NoValue"}]}
            ),
        },
        {"TopicArn": {"Condition": "On", "Value": {"Ref": "Topic"}}},
        {"Switch": switch},
    )
    deployment = deploy_small(template)
    topics = boto3.client("sns", region_name=REGION).list_topics()["Topics"]
    assert ("Topic" in deployment.refs, bool(topics), "TopicArn" in deployment.outputs) == (
        created,
        created,
        created,
    )
    (alarm,) = boto3.client("cloudwatch", region_name=REGION).describe_alarms()["MetricAlarms"]
    assert alarm["AlarmActions"] == ([deployment.refs["Topic"]] if created else [])
    if not created:
        assert "Topic: not created, Condition On is false" in " ".join(deployment.notes)


@pytest.mark.parametrize(
    ("resources", "outputs", "where"),
    [
        ({"Topic": TOPIC, "Alarm": alarm_with_actions([{"Ref": "Topic"}])}, {}, r"Alarm\.Alarm"),
        ({"Topic": TOPIC}, {"Name": {"Value": {"Fn::GetAtt": ["Topic", "TopicName"]}}}, "Outputs"),
    ],
    ids=["Ref in a property", "GetAtt in an output"],
)
def test_a_reference_to_a_resource_not_created_fails_naming_its_condition(
    deploy_small: Deploy, resources: dict[str, Any], outputs: dict[str, Any], where: str
) -> None:
    with pytest.raises(
        UnsupportedTemplate,
        match=where + r".*Topic is not created \(its Condition On is false",
    ):
        deploy_small(small_template(resources, outputs))


def test_an_unknown_resource_condition_fails_before_anything_is_created(
    deploy_small: Deploy,
) -> None:
    with pytest.raises(UnsupportedTemplate, match=r"Resources\.Topic\.Condition: no condition"):
        deploy_small(small_template({"Topic": {**TOPIC, "Condition": "Missing"}}))
    assert boto3.client("sns", region_name=REGION).list_topics()["Topics"] == []


def test_an_alarm_with_metrics_and_a_single_metric_is_refused(deploy_small: Deploy) -> None:
    alarm = alarm_with_actions([])
    alarm["Properties"]["Metrics"] = [{"Id": "m", "Expression": "1", "ReturnData": True}]
    with pytest.raises(
        UnsupportedTemplate, match=r"Alarm\.MetricName: Metrics and a single metric"
    ):
        deploy_small(small_template({"Alarm": alarm}))


def test_a_dashboard_body_that_is_not_json_is_refused(deploy_small: Deploy) -> None:
    dashboard = {"Type": "AWS::CloudWatch::Dashboard", "Properties": {"DashboardBody": "{"}}
    with pytest.raises(UnsupportedTemplate, match=r"Board\.DashboardBody: not valid JSON"):
        deploy_small(small_template({"Board": dashboard}))
