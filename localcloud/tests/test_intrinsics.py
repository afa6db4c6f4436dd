"""The local cloud's parameters, conditions and intrinsics, as CloudFormation resolves
them: checked values, condition functions, ``Fn::If`` and ``AWS::NoValue``, and a
reference to a resource whose condition is false (template.yaml is the input where one
is needed)."""

from __future__ import annotations

from typing import Any

import pytest

from localcloud.cloudformation.exceptions import NotCreated, UnsupportedTemplate
from localcloud.cloudformation.intrinsics import evaluate_conditions, resolve
from localcloud.tests.support.cloud import app_template


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("AlarmEmail=oncall", r"Parameters\.AlarmEmail: 'oncall' does not match: an e-mail"),
        ("AlarmEmail=a b@example.com", r"Parameters\.AlarmEmail: .* does not match"),
        ("MaxReceiveCount=0", r"MaxReceiveCount: 0 is below MinValue 1"),
    ],
)
def test_observability_parameters_are_checked_as_cloudformation_checks_them(
    override: str, message: str
) -> None:
    """AllowedPattern must match the whole value (CloudFormation's rule), MinValue as
    for every Number parameter."""
    with pytest.raises(UnsupportedTemplate, match=message):
        app_template(parameter_overrides=override)


def test_the_alarm_topic_exists_only_with_an_alarm_email() -> None:
    template = app_template()
    conditional = {"AlarmTopic", "AlarmTopicKey", "AlarmEmailSubscription"}
    assert template.parameters["AlarmEmail"] == ""
    assert template.conditions == {"HasAlarmEmail": False}
    assert conditional <= set(template.declared_resources)
    assert not conditional & set(template.resources)
    assert "AlarmTopicArn" in template.declared_outputs
    assert "AlarmTopicArn" not in template.outputs
    with_email = app_template(parameter_overrides="AlarmEmail=oncall@example.com")
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
