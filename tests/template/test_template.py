"""template.yaml and samconfig.toml: the properties the design relies on."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.template import Template, load

PHYSICAL_NAME_PROPERTIES = {
    "TableName",
    "QueueName",
    "FunctionName",
    "StateMachineName",
    "RoleName",
    "LogGroupName",
    "TopicName",
    "AlarmName",
    "DashboardName",
}


def props(template: Template, logical_id: str) -> Any:
    return template.resources[logical_id]["Properties"]


def test_globals_pin_runtime_architecture_and_tracing(template: Template) -> None:
    function = template.function_globals
    assert function["Runtime"] == "python3.13"
    assert function["Architectures"] == ["arm64"]
    assert function["Tracing"] == "Active"
    assert function["CodeUri"] == "src/"


def test_no_resource_has_a_physical_name(template: Template) -> None:
    named = [
        (logical_id, name)
        for logical_id, resource in template.declared_resources.items()
        for name in resource.get("Properties", {})
        if name in PHYSICAL_NAME_PROPERTIES
    ]
    assert named == []


def test_queue_is_encrypted_and_redrives_to_the_dead_letter_queue(template: Template) -> None:
    queue = props(template, "JobsQueue")
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["JobsDeadLetterQueue", "Arn"]
    }
    assert queue["RedrivePolicy"]["maxReceiveCount"] == {"Ref": "MaxReceiveCount"}
    assert template.parameters["MaxReceiveCount"] == "5"
    dlq = props(template, "JobsDeadLetterQueue")
    assert dlq["SqsManagedSseEnabled"] is True
    assert dlq["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_visibility_timeout_is_at_least_six_function_timeouts(template: Template) -> None:
    timeout = props(template, "QueueWorkerFunction").get(
        "Timeout", template.function_globals["Timeout"]
    )
    assert props(template, "JobsQueue")["VisibilityTimeout"] >= 6 * timeout


def test_event_source_mapping_reports_batch_item_failures(template: Template) -> None:
    function = props(template, "QueueWorkerFunction")
    (event,) = function["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["Properties"]["BatchSize"] == {"Ref": "BatchSize"}
    assert template.parameters["BatchSize"] == "10"
    assert "DeadLetterQueue" not in function, "a function DLQ only applies to async invokes"


def test_tables_are_on_demand_and_encrypted(template: Template) -> None:
    for logical_id in ("OrdersTable", "AttemptsTable"):
        table = props(template, logical_id)
        assert table["BillingMode"] == "PAY_PER_REQUEST"
        assert table["SSESpecification"] == {"SSEEnabled": True}
        assert table["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]


def test_the_orders_table_outlives_the_stack_and_can_be_restored(template: Template) -> None:
    orders = template.resources["OrdersTable"]
    assert orders["DeletionPolicy"] == "Retain"
    assert orders["UpdateReplacePolicy"] == "Retain"
    assert orders["Properties"]["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": True
    }
    assert orders["Properties"]["DeletionProtectionEnabled"] == {
        "Ref": "OrdersTableDeletionProtection"
    }


def test_each_function_logs_to_its_own_group_with_retention(template: Template) -> None:
    for function, group in (
        ("QueueWorkerFunction", "QueueWorkerLogGroup"),
        ("WorkflowWorkerFunction", "WorkflowWorkerLogGroup"),
    ):
        assert props(template, function)["LoggingConfig"]["LogGroup"] == {"Ref": group}
        assert props(template, group)["RetentionInDays"] == {"Ref": "LogRetentionInDays"}


def test_outputs_name_everything_a_user_or_verifier_needs(template: Template) -> None:
    assert {
        "JobsQueueUrl",
        "JobsQueueArn",
        "JobsDeadLetterQueueUrl",
        "OrdersTableName",
        "AttemptsTableName",
        "OrdersStateMachineArn",
        "QueueWorkerFunctionName",
        "WorkflowWorkerFunctionName",
        "OperationsDashboardName",
    } <= set(template.outputs)


def test_the_state_machine_is_standard_and_uses_definition_substitutions(
    template: Template,
) -> None:
    machine = props(template, "OrdersStateMachine")
    assert machine["Type"] == "STANDARD"
    assert machine["DefinitionSubstitutions"] == {
        "WorkflowWorkerFunctionArn": {"Fn::GetAtt": ["WorkflowWorkerFunction", "Arn"]}
    }


def test_samconfig_has_a_default_and_a_prod_environment() -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    assert config["default"]["deploy"]["parameters"]["capabilities"] == "CAPABILITY_IAM"
    assert config["default"]["global"]["parameters"]["stack_name"]
    assert (
        config["prod"]["global"]["parameters"]["stack_name"]
        != config["default"]["global"]["parameters"]["stack_name"]
    )


@pytest.mark.parametrize(("config_env", "enabled"), [("default", "true"), ("prod", "false")])
def test_fault_modes_are_on_by_default_and_off_in_prod(config_env: str, enabled: str) -> None:
    assert load(config_env=config_env).parameters["FaultModesEnabled"] == enabled


def test_the_template_default_keeps_fault_modes_off(template: Template) -> None:
    assert template.body["Parameters"]["FaultModesEnabled"]["Default"] == "false"


def test_every_scanner_suppression_carries_a_written_reason(template: Template) -> None:
    skips = [
        (logical_id, skip)
        for logical_id, resource in template.declared_resources.items()
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    ]
    assert skips, "the template documents its checkov suppressions"
    for logical_id, skip in skips:
        assert skip["id"].startswith("CKV_"), logical_id
        assert len(str(skip.get("comment", "")).split()) >= 10, (
            f"{logical_id} {skip['id']}: reason too short"
        )


def test_queues_and_tables_are_encrypted_at_rest(template: Template) -> None:
    for queue in template.of_type("AWS::SQS::Queue").values():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
    for table in template.of_type("AWS::DynamoDB::Table").values():
        assert table["Properties"]["SSESpecification"] == {"SSEEnabled": True}


def test_deletion_protection_is_a_parameter_on_in_prod() -> None:
    assert load(config_env="prod").parameters["OrdersTableDeletionProtection"] == "true"
    assert load().parameters["OrdersTableDeletionProtection"] == "false"


def test_the_alarm_topic_exists_only_with_an_alarm_email(template: Template) -> None:
    """The topic, its key and subscription, its Output and every alarm's action are under
    HasAlarmEmail, which holds for a non-empty AlarmEmail (empty by default and in both
    samconfig environments)."""
    assert template.conditions["HasAlarmEmail"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]
    }
    for logical_id in ("AlarmTopic", "AlarmTopicKey", "AlarmEmailSubscription"):
        assert template.resources[logical_id]["Condition"] == "HasAlarmEmail", logical_id
    assert template.outputs["AlarmTopicArn"]["Condition"] == "HasAlarmEmail"
    for logical_id, alarm in template.of_type("AWS::CloudWatch::Alarm").items():
        assert alarm["Properties"]["AlarmActions"] == {
            "Fn::If": ["HasAlarmEmail", [{"Ref": "AlarmTopic"}], {"Ref": "AWS::NoValue"}]
        }, logical_id
    assert load("default").parameters["AlarmEmail"] == ""
    assert load("prod").parameters["AlarmEmail"] == ""
