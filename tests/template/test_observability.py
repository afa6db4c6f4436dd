"""Observability on AWS: the alarms, the dashboard and the saved Logs Insights queries.

Every metric an alarm or a dashboard widget uses is either one the code emits or one an
AWS service publishes, with dimensions that point at this stack's resources:

- the code's metrics: the names come from the workers' ``add_metric`` calls (read from
  the source: ``decision.metric_name`` is every :class:`~order_guard.decision.Decision`'s
  ``Orders<Decision>``, a string is itself); the namespace is the template's
  ``POWERTOOLS_METRICS_NAMESPACE``; the dimensions are what Powertools puts on them,
  taken from the EMF lines the workers really write when run with their template
  environment (Powertools 3.37 adds one dimension, ``service`` = ``POWERTOOLS_SERVICE_NAME``,
  when no other is set: ``AmazonCloudWatchEMFProvider.serialize_metric_set``);
- the services' metrics: ``SERVICE_METRICS`` (tests/support/observability.py), from the
  AWS documentation.

The alarms notify the topic that exists only with ``AlarmEmail`` set; the queries read
both workers' log groups and only fields the workers' ``RESULT`` lines carry. The deployed
stack, with and without an ``AlarmEmail``, is checked in
``tests/e2e/test_observability_deployed.py``.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import boto3
import pytest
from moto import mock_aws

from order_guard.decision import Decision
from tests.support.aws import REGION, create_table
from tests.support.environment import default_template, function_environment
from tests.support.handlers import invoke_cold
from tests.support.observability import (
    QUEUE_EVENTS,
    SERVICE_METRICS,
    WORKERS,
    WORKFLOW_PAYLOADS,
    MetricUse,
    alarm_metric_uses,
    alarms,
    as_intrinsic,
    emitted_metric_names,
    query_definitions,
    query_fields,
    query_sources,
    result_keys,
    widget_metric_uses,
    worker_log_groups,
)
from tests.support.paths import EVENTS
from tests.support.template import Template

ALARM_ACTIONS = {"Fn::If": ["HasAlarmEmail", [{"Ref": "AlarmTopic"}], {"Ref": "AWS::NoValue"}]}


# --- what the code emits ---------------------------------------------------------------


def handler_module(template: Template, function: str) -> Path:
    """The source file of a function's handler (``order_guard.queue_worker.lambda_handler``)."""
    found = template.function(function)
    module = str(found.handler).rsplit(".", 1)[0]
    return (template.path.parent / str(found.codeuri)) / (module.replace(".", "/") + ".py")


def worker_environment(function: str) -> dict[str, str]:
    return function_environment(function, orders_table="orders", attempts_table="attempts")


@dataclass(frozen=True)
class Emitted:
    """What the workers emit: per ``service`` value, the metric names; the namespace and
    the dimension names Powertools puts on them (from the workers' EMF lines)."""

    namespace: str
    dimension_names: frozenset[str]
    names_by_service: Mapping[str, frozenset[str]]


@pytest.fixture(scope="module")
def worker_logs() -> dict[str, list[dict[str, Any]]]:
    """Every JSON line each worker wrote (what Lambda sends to its log group), run with its
    template environment against moto after making every decision: accepted, duplicate,
    conflict and invalid, and the summary stage found and not found."""
    template = default_template()
    lines: dict[str, list[dict[str, Any]]] = {}
    with (
        mock_aws(),
        mock.patch.dict(os.environ, {"AWS_DEFAULT_REGION": REGION}),
        warnings.catch_warnings(),
    ):
        # Powertools warns of an invocation without metrics: the summary of no order.
        warnings.filterwarnings("ignore", "No application metrics", UserWarning)
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        for logical_id, name in (("OrdersTable", "orders"), ("AttemptsTable", "attempts")):
            create_table(dynamodb, name, template.resources[logical_id]["Properties"])
        runs = {
            "QueueWorkerFunction": [
                json.loads((EVENTS / f"{event}.json").read_text()) for event in QUEUE_EVENTS
            ],
            "WorkflowWorkerFunction": list(WORKFLOW_PAYLOADS),
        }
        for function, events in runs.items():
            handler = str(template.function(function).handler)
            written = [
                line
                for event in events
                for line in invoke_cold(handler, worker_environment(function), event).lines
            ]
            lines[function] = [json.loads(line) for line in written if line.startswith("{")]
    return lines


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
    """The dashboard's JSON after ``Fn::Sub``: ``${X}`` of a resource becomes ``<Ref X>``
    and ``${X.Attribute}`` ``<GetAtt X.Attribute>`` (so each value still says what it
    points at), parameters and pseudo parameters their values."""
    pseudo = {"AWS::Region": REGION, "AWS::AccountId": "123456789012", "AWS::Partition": "aws"}

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        logical_id, _, attribute = name.partition(".")
        if attribute:
            assert logical_id in template.declared_resources, name
            return f"<GetAtt {logical_id}.{attribute}>"
        if name in template.declared_resources:
            return f"<Ref {name}>"
        if name in template.parameters:
            return template.parameters[name]
        return pseudo[name]

    body = template.declared_resources["OperationsDashboard"]["Properties"]["DashboardBody"]
    assert set(body) == {"Fn::Sub"}, "the body is built with !Sub"
    assert isinstance(body["Fn::Sub"], str), "no variable map: every name is the template's"
    parsed: dict[str, Any] = json.loads(re.sub(r"\$\{([^}!]+)\}", substitute, body["Fn::Sub"]))
    return parsed


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


@pytest.fixture(scope="module")
def logged_fields(worker_logs: dict[str, list[dict[str, Any]]]) -> set[str]:
    return result_keys([line for lines in worker_logs.values() for line in lines])


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


# --- the workers' metrics as written -------------------------------------------------------


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
