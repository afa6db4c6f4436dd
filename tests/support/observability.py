"""Reading template.yaml's observability: the metrics each alarm and dashboard widget
reads, the metrics AWS services publish, the metric names the workers' code can emit,
and the log fields and groups the saved Logs Insights queries read. Pure functions of a
template as written (``declared_resources``), shared by the template's tests and the
deployed stack's."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from order_guard.decision import Decision

ALARM = "AWS::CloudWatch::Alarm"
WORKERS = ("QueueWorkerFunction", "WorkflowWorkerFunction")
QUEUE_EVENTS = ("sqs-first-order", "sqs-two-copies", "sqs-conflicting-copy", "sqs-mixed-batch")
"""Sample events (``events/``) that make the queue worker take every decision: accepted,
duplicate, conflict and invalid."""
WORKFLOW_PAYLOADS = (
    {"id": "observed-order", "quantity": 1},
    {"id": "observed-order", "quantity": 1},
    {"id": "observed-order", "quantity": 2},
    {"id": "observed-order", "quantity": 0},
    {"stage": "summary", "id": "observed-order"},
    {"stage": "summary", "id": "never-stored"},
)
"""Payloads that make the workflow worker take every decision, and its summary stage
find an order and not find one."""


class Declared(Protocol):
    """A template as written: its resources by logical id."""

    @property
    def declared_resources(self) -> Mapping[str, Mapping[str, Any]]: ...


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


def alarm_metric_uses(logical_id: str, properties: Mapping[str, Any]) -> list[MetricUse]:
    """The metrics one alarm reads: its single metric, or each ``MetricStat`` of its
    metric math."""

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


def alarms(template: Declared) -> dict[str, Mapping[str, Any]]:
    return {
        logical_id: resource["Properties"]
        for logical_id, resource in template.declared_resources.items()
        if resource["Type"] == ALARM
    }


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


def query_definitions(template: Declared) -> dict[str, Mapping[str, Any]]:
    return {
        logical_id: resource["Properties"]
        for logical_id, resource in template.declared_resources.items()
        if resource["Type"] == "AWS::Logs::QueryDefinition"
    }


def worker_log_groups(template: Declared) -> list[dict[str, str]]:
    return [
        template.declared_resources[function]["Properties"]["LoggingConfig"]["LogGroup"]
        for function in WORKERS
    ]
