"""The local cloud deploys a resource or an Output only when its ``Condition`` holds, and
refuses, by name, a reference to one not created and the alarm and dashboard shapes it
cannot honour."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from localcloud import services
from localcloud.cloudformation.deployer import deploy
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import Template
from localcloud.tests.support.aws import REGION
from localcloud.tests.support.paths import FIXTURES

ALARM = "AWS::CloudWatch::Alarm"


def small_template(
    resources: dict[str, Any],
    outputs: dict[str, Any] | None = None,
    parameters: dict[str, str] | None = None,
) -> Template:
    """A template of a few resources with the condition ``On`` = parameter ``Switch``."""
    return Template(
        path=FIXTURES / "small.yaml",
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
            providers=services.providers(),
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
