"""SAM's own transform comes first (``localcloud.cloudformation.transform``): ``Globals``
merged as SAM merges them, and local ``CodeUri``/``DefinitionUri`` relative to the
template's folder, as ``sam build`` and ``sam deploy`` read them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from samtranslator.model.sam_resources import SamFunction

from localcloud.account import LocalCloud
from localcloud.cloudformation.deployer import function_properties
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import from_body, load
from localcloud.cloudformation.transform import EMULATED_EVENTS, transform


def app(tmp_path: Path, log_format: str) -> Path:
    """A SAM app in a folder of its own: one function with its own log group, under
    ``Globals.Function.LoggingConfig.LogFormat``, and a one-state machine."""
    folder = tmp_path / "app"
    (folder / "fn").mkdir(parents=True)
    (folder / "fn" / "app.py").write_text(
        "def handler(event, context):\n    return {'echo': event, 'where': __file__}\n"
    )
    (folder / "flow.asl.json").write_text(
        json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}})
    )
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Globals": {"Function": {"LoggingConfig": {"LogFormat": log_format}}},
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "fn/",
                    "Handler": "app.handler",
                    "Runtime": "python3.13",
                    "LoggingConfig": {"LogGroup": "/app/fn"},
                },
            },
            "Flow": {
                "Type": "AWS::Serverless::StateMachine",
                "Properties": {"DefinitionUri": "flow.asl.json", "Type": "STANDARD"},
            },
        },
    }
    path = folder / "template.yaml"
    path.write_text(yaml.safe_dump(body))
    return path


def test_globals_logging_config_is_merged_with_the_functions_own_as_sam_merges_it(
    tmp_path: Path,
) -> None:
    template = load(app(tmp_path, "JSON"), samconfig=None)
    merged = function_properties(template, "Fn")["LoggingConfig"]
    assert merged == {"LogFormat": "JSON", "LogGroup": "/app/fn"}


def test_a_json_log_format_from_globals_is_refused_by_name_not_dropped(
    tmp_path: Path, make_cloud: Callable[..., LocalCloud]
) -> None:
    cloud = make_cloud()
    template = load(app(tmp_path, "JSON"), samconfig=None)
    with pytest.raises(UnsupportedTemplate, match=r"^Fn\.LoggingConfig\.LogFormat: "):
        cloud.deploy(template, stack_name="json-logs")


def test_code_and_definition_are_read_from_the_templates_folder(
    tmp_path: Path, make_cloud: Callable[..., LocalCloud]
) -> None:
    cloud = make_cloud()
    path = app(tmp_path, "Text")
    deployment = cloud.deploy(load(path, samconfig=None), stack_name="elsewhere")
    name = deployment.refs["Fn"]

    answer: Any = json.loads(
        cloud.client("lambda").invoke(FunctionName=name, Payload=b'{"n": 1}')["Payload"].read()
    )
    assert answer["echo"] == {"n": 1}
    assert Path(answer["where"]).resolve() == (path.parent / "fn" / "app.py").resolve()
    configuration = cloud.client("lambda").get_function_configuration(FunctionName=name)
    assert configuration["LoggingConfig"] == {"LogFormat": "Text", "LogGroup": "/app/fn"}
    definition = cloud.client("stepfunctions").describe_state_machine(
        stateMachineArn=deployment.refs["Flow"]
    )["definition"]
    assert json.loads(definition)["StartAt"] == "Done"


def test_a_code_uri_missing_from_the_templates_folder_is_refused_by_name(
    tmp_path: Path, make_cloud: Callable[..., LocalCloud]
) -> None:
    cloud = make_cloud()
    path = app(tmp_path, "Text")
    body = yaml.safe_load(path.read_text())
    body["Resources"]["Fn"]["Properties"]["CodeUri"] = "no-such-folder/"
    template = from_body(body, {}, path=path)
    with pytest.raises(UnsupportedTemplate, match=r"^Fn\.CodeUri: .*no-such-folder"):
        cloud.deploy(template, stack_name="missing-code")


def sam_function_event_types() -> list[str]:
    """Every event type SAM's transform offers a function, from its own resolver."""
    return sorted(t for t in SamFunction.event_resolver.resource_types if t)


def test_the_emulated_event_types_are_sams_own() -> None:
    assert EMULATED_EVENTS["AWS::Serverless::Function"] <= set(sam_function_event_types())
    assert {"SQS", "Kinesis", "DynamoDB", "SNS", "S3", "Schedule"} <= EMULATED_EVENTS[
        "AWS::Serverless::Function"
    ]


@pytest.mark.parametrize(
    "kind",
    sorted(set(sam_function_event_types()) - EMULATED_EVENTS["AWS::Serverless::Function"]),
)
def test_an_event_type_no_service_delivers_locally_is_refused_by_name(kind: str) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Worker": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "Handler": "app.handler",
                    "Runtime": "python3.13",
                    "InlineCode": "def handler(event, context): return event",
                    "Events": {"Source": {"Type": kind, "Properties": {}}},
                },
            }
        },
    }
    with pytest.raises(UnsupportedTemplate) as refused:
        transform(body, {}, folder=Path("."), region="us-east-1")
    assert "Worker.Events.Source" in str(refused.value)
    assert f"Type {kind} is not emulated locally" in str(refused.value)
