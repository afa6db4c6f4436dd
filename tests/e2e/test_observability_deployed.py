"""Observability as the local cloud deploys it: template.yaml's alarms, topic, key,
dashboard and saved queries, with and without an ``AlarmEmail``, after each worker made
every decision (the template as written is checked in
``tests/template/test_observability.py``)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.provider import Deployment
from localcloud.cloudformation.template import Template
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.scenarios import load_event
from tests.support.observability import (
    QUEUE_EVENTS,
    WORKERS,
    WORKFLOW_PAYLOADS,
    alarms,
    query_definitions,
    query_sources,
    widget_metric_uses,
)

EMAIL = "oncall@example.com"


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
    with OrderGuardCloud() as cloud, warnings.catch_warnings():
        # Powertools warns of an invocation without metrics: the summary of no order.
        warnings.filterwarnings("ignore", "No application metrics", UserWarning)
        queue = cloud.function("QueueWorkerFunction")
        for event in QUEUE_EVENTS:
            queue.invoke(load_event(event))
        workflow = cloud.function("WorkflowWorkerFunction")
        for payload in WORKFLOW_PAYLOADS:
            workflow.invoke(payload)
        return read_stack(cloud)


@pytest.fixture(scope="module")
def email_stack() -> Stack:
    """The stack deployed with an AlarmEmail."""
    with OrderGuardCloud(parameter_overrides={"AlarmEmail": EMAIL}) as cloud:
        return read_stack(cloud)


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


@pytest.mark.parametrize(
    ("function", "service"),
    [("QueueWorkerFunction", "queue-worker"), ("WorkflowWorkerFunction", "workflow-worker")],
)
def test_each_deployed_worker_logs_its_decisions_and_metrics_to_its_own_group(
    default_stack: Stack, function: str, service: str
) -> None:
    lines = default_stack.worker_logs[function]
    directives = [d for line in lines for d in line.get("_aws", {}).get("CloudWatchMetrics", [])]
    assert {d["Namespace"] for d in directives} == {"OrderGuard"}
    assert all(line["service"] == service for line in lines if "_aws" in line)
    assert any(
        line.get("message") == "RESULT" and line.get("decision") == "conflict" for line in lines
    )
