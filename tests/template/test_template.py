"""template.yaml and samconfig.toml: the properties the design relies on."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from localcloud.cfn.exceptions import NotCreated, UnsupportedTemplate
from localcloud.cfn.intrinsics import evaluate_conditions, resolve
from localcloud.cfn.template import Template, load
from tests.support.paths import ROOT

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


# --- parameters, conditions and the intrinsics the local cloud resolves ------------------


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("AlarmEmail=oncall", r"Parameters\.AlarmEmail: 'oncall' does not match: an e-mail"),
        ("AlarmEmail=a b@example.com", r"Parameters\.AlarmEmail: .* does not match"),
        ("JobsQueueAgeAlarmSeconds=30", r"JobsQueueAgeAlarmSeconds: 30 is below MinValue 60"),
    ],
)
def test_observability_parameters_are_checked_as_cloudformation_checks_them(
    override: str, message: str
) -> None:
    """AllowedPattern must match the whole value (CloudFormation's rule), MinValue as
    for every Number parameter."""
    with pytest.raises(UnsupportedTemplate, match=message):
        load(parameter_overrides=override)


def test_the_alarm_topic_exists_only_with_an_alarm_email(template: Template) -> None:
    conditional = {"AlarmTopic", "AlarmTopicKey", "AlarmEmailSubscription"}
    assert template.parameters["AlarmEmail"] == ""
    assert template.conditions == {"HasAlarmEmail": False}
    assert conditional <= set(template.declared_resources)
    assert not conditional & set(template.resources)
    assert "AlarmTopicArn" in template.declared_outputs
    assert "AlarmTopicArn" not in template.outputs
    with_email = load(parameter_overrides="AlarmEmail=oncall@example.com")
    assert with_email.conditions == {"HasAlarmEmail": True}
    assert conditional <= set(with_email.resources)
    assert "AlarmTopicArn" in with_email.outputs


CONDITIONS = {
    "IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
    "IsNotProd": {"Fn::Not": [{"Condition": "IsProd"}]},
    "Paged": {"Fn::And": [{"Condition": "IsProd"}, {"Fn::Equals": [{"Ref": "Page"}, True]}]},
    "Either": {"Fn::Or": [{"Condition": "Paged"}, {"Condition": "IsNotProd"}]},
}


@pytest.mark.parametrize(
    ("env", "page", "expected"),
    [
        ("prod", "true", {"IsProd": True, "IsNotProd": False, "Paged": True, "Either": True}),
        ("prod", "false", {"IsProd": True, "IsNotProd": False, "Paged": False, "Either": False}),
        ("dev", "true", {"IsProd": False, "IsNotProd": True, "Paged": False, "Either": True}),
    ],
)
def test_conditions_evaluate_as_in_cloudformation(
    env: str, page: str, expected: dict[str, bool]
) -> None:
    """Fn::Equals compares strings (a YAML ``true`` is ``"true"``); Fn::And, Fn::Or and
    Fn::Not combine conditions and ``Condition`` references ("Condition functions",
    CloudFormation User Guide)."""
    assert evaluate_conditions(CONDITIONS, {"Env": env, "Page": page}) == expected


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ({"A": {"Fn::If": ["B", True, False]}}, r"Conditions\.A: .*does not implement Fn::If"),
        ({"A": {"Condition": "Missing"}}, r"Conditions\.A: no condition named Missing"),
        ({"A": {"Condition": "B"}, "B": {"Condition": "A"}}, r"circular .*A -> B -> A"),
        ({"A": {"Fn::Equals": [{"Ref": "Nope"}, ""]}}, r"Ref Nope: a condition can only refer"),
        ({"A": {"Fn::Equals": ["x"]}}, r"Fn::Equals takes exactly two values"),
        ({"A": {"Fn::And": [{"Condition": "A"}]}}, r"Fn::And takes 2 to 10 conditions"),
        ({"A": "yes"}, r"Conditions\.A: not a condition function"),
    ],
)
def test_a_condition_the_local_cloud_cannot_evaluate_fails_naming_it(
    conditions: dict[str, Any], message: str
) -> None:
    with pytest.raises(UnsupportedTemplate, match=message):
        evaluate_conditions(conditions, {"Env": "dev"})


def resolve_with(value: Any, holds: dict[str, bool]) -> Any:
    refs = {"Topic": "arn:topic"}

    def ref(name: str) -> Any:
        if name == "Hidden":
            raise NotCreated("Hidden", "Off")
        return refs[name]

    return resolve(
        value,
        where="Alarm",
        ref=ref,
        get_att=lambda *_: (_ for _ in ()).throw(KeyError("no GetAtt")),
        condition=lambda name: holds[name],
    )


def test_fn_if_takes_one_branch_and_no_value_removes_the_property_or_item() -> None:
    actions = {"Fn::If": ["On", [{"Ref": "Topic"}], {"Ref": "AWS::NoValue"}]}
    properties = {"AlarmActions": actions, "Items": ["a", {"Ref": "AWS::NoValue"}, "b"]}
    assert resolve_with(properties, {"On": True}) == {
        "AlarmActions": ["arn:topic"],
        "Items": ["a", "b"],
    }
    assert resolve_with(properties, {"On": False}) == {"Items": ["a", "b"]}
    # The branch not taken is never resolved: it may name a resource that is not created.
    hidden = {"Fn::If": ["On", {"Ref": "Hidden"}, "fallback"]}
    assert resolve_with({"Value": hidden}, {"On": False}) == {"Value": "fallback"}


def test_a_reference_to_a_resource_not_created_names_its_condition() -> None:
    with pytest.raises(
        UnsupportedTemplate,
        match=r"Alarm\.Value: cannot resolve Ref Hidden: Hidden is not created "
        r"\(its Condition Off is false",
    ):
        resolve_with({"Value": {"Ref": "Hidden"}}, {})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"Ref": "AWS::NoValue"}, r"Alarm: resolves to AWS::NoValue"),
        ({"Fn::If": ["Unknown", 1, 2]}, r"Alarm: Fn::If: no condition named Unknown"),
        ({"Fn::If": ["On", 1]}, r"Fn::If takes \[condition, value if true, value if false\]"),
    ],
)
def test_fn_if_and_no_value_misuse_fails_naming_where(value: Any, message: str) -> None:
    with pytest.raises(UnsupportedTemplate, match=message):
        resolve_with(value, {"On": True})


def test_fn_if_without_conditions_fails() -> None:
    with pytest.raises(UnsupportedTemplate, match="Fn::If needs the template's conditions"):
        resolve(
            {"Fn::If": ["On", 1, 2]},
            where="X",
            ref=lambda name: name,
            get_att=lambda logical_id, attribute: attribute,
        )
