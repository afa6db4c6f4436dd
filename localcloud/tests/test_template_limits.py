"""A template is read as CloudFormation reads it, at every entry point: never as Python
objects, within its quotas, a refusal CloudFormation's ``ValidationError`` (issue 47,
findings 3 and 8).

Before: moto parsed a ``TemplateBody`` with PyYAML's unsafe loader, so a
``!!python/object/apply`` tag ran in the server (``GetTemplateSummary``, ``CreateStack``,
``UpdateStack``, ``CreateChangeSet``, by body or by ``TemplateURL``); a few hundred bytes of
YAML aliases took ``GetTemplateSummary`` past 2 GB and the others accepted them;
``serve --template`` answered them with a traceback; and 501 resources, a 5,000-byte
parameter value, a 51,201-byte body and a 1,000,001-byte ``TemplateURL`` were accepted.
Each test is an attack or a quota that failed on that code.

One local cloud for the module: an empty account, served (application change sets, as
``sam deploy`` makes them, are planned by a served account).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud import cli, services
from localcloud.account import LocalCloud
from localcloud.cloudformation.deployer import deploy
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import load
from localcloud.tests.support.cloud import started

HANDLE = {"Type": "AWS::SNS::Topic"}
"""A resource moto makes in no time."""

PLAIN = json.dumps({"Resources": {"Handle": HANDLE}})

BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]"
            for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "Resources: {}",
    ]
)
"""A "billion laughs": 9**9 strings once its aliases are resolved, from 400 bytes."""


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=None, server=True, region="us-east-1") as running:
        yield running


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _uploaded(cloud: LocalCloud, text: str) -> str:
    """``text`` put in S3; its URL as ``sam deploy`` names it (``TemplateURL``)."""
    s3 = cloud.client("s3")
    bucket = _name("templates")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="template.yaml", Body=text.encode())
    return f"https://s3.amazonaws.com/{bucket}/template.yaml"


def _actions(cloud: LocalCloud) -> dict[str, Callable[[str], Any]]:
    """Each entry point of the CloudFormation API that takes a template, given its text."""
    cfn = cloud.client("cloudformation")

    def update_stack(body: str) -> Any:
        name = _name("updated")
        cfn.create_stack(StackName=name, TemplateBody=PLAIN)
        return cfn.update_stack(StackName=name, TemplateBody=body)

    return {
        "GetTemplateSummary": lambda body: cfn.get_template_summary(TemplateBody=body),
        "ValidateTemplate": lambda body: cfn.validate_template(TemplateBody=body),
        "CreateStack": lambda body: cfn.create_stack(StackName=_name("s"), TemplateBody=body),
        "CreateStack by TemplateURL": lambda body: cfn.create_stack(
            StackName=_name("s"), TemplateURL=_uploaded(cloud, body)
        ),
        "UpdateStack": update_stack,
        "CreateChangeSet": lambda body: cfn.create_change_set(
            StackName=_name("s"),
            ChangeSetName=_name("c"),
            ChangeSetType="CREATE",
            TemplateBody=body,
        ),
    }


ACTIONS = (
    "GetTemplateSummary",
    "ValidateTemplate",
    "CreateStack",
    "CreateStack by TemplateURL",
    "UpdateStack",
    "CreateChangeSet",
)


def _refusal(call: Callable[[], Any]) -> str:
    """The message of the ``ValidationError`` ``call`` is answered with."""
    with pytest.raises(ClientError) as raised:
        call()
    error = raised.value.response["Error"]
    assert error["Code"] == "ValidationError", error
    return str(error["Message"])


@pytest.mark.parametrize("action", ACTIONS)
def test_a_python_tag_runs_nothing_and_is_a_format_error(
    cloud: LocalCloud, tmp_path: Path, action: str
) -> None:
    marker = tmp_path / "ran"
    body = f"Resources: {{}}\nProbe: !!python/object/apply:os.mkdir ['{marker}']\n"

    message = _refusal(lambda: _actions(cloud)[action](body))

    assert not marker.exists()
    assert message.startswith("Template format error: ")


@pytest.mark.parametrize("action", ACTIONS)
def test_a_yaml_alias_bomb_is_a_format_error(cloud: LocalCloud, action: str) -> None:
    message = _refusal(lambda: _actions(cloud)[action](BOMB))

    assert message.startswith("Template format error: ")
    assert "aliases" in message


def _sub_bomb(sam: bool) -> str:
    """An output whose ``Fn::Sub`` repeats the next one ten times, nine deep: 10^10
    characters once resolved, a few hundred bytes written, no alias (the held-back attack
    that took moto's CloudFormation and the local deployer past 1.5 GB)."""
    value: Any = "x" * 10
    for _ in range(9):
        value = {"Fn::Sub": ["${V}" * 10, {"V": value}]}
    template: dict[str, Any] = {"Resources": {"Handle": HANDLE}, "Outputs": {"O": {"Value": value}}}
    if sam:
        template["Transform"] = "AWS::Serverless-2016-10-31"
    return json.dumps(template)


def _join_bomb() -> str:
    """``Fn::Join`` of a thousand empty strings with a thousand-character separator, nested
    three deep: 10^12 characters once resolved."""
    inner: Any = {"Fn::Join": ["s" * 1000, [""] * 1000]}
    for _ in range(2):
        inner = {"Fn::Join": [inner, [""] * 1000]}
    return json.dumps({"Resources": {"Handle": HANDLE}, "Outputs": {"O": {"Value": inner}}})


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("CreateStack", _sub_bomb(sam=False)),
        ("CreateChangeSet", _sub_bomb(sam=True)),
        ("CreateStack", _join_bomb()),
        ("GetTemplateSummary", _join_bomb()),
    ],
    ids=["sub, moto's stack", "sub, an application", "join, moto's stack", "join, a summary"],
)
def test_intrinsic_functions_that_would_resolve_to_gigabytes_are_a_format_error(
    cloud: LocalCloud, action: str, body: str
) -> None:
    message = _refusal(lambda: _actions(cloud)[action](body))

    assert message.startswith("Template format error: Outputs.O.Value may resolve to ")
    assert "more than the 4,000,000 the local cloud resolves" in message


def test_a_template_nested_past_the_parsers_depth_is_a_format_error(cloud: LocalCloud) -> None:
    body = '{"Resources": {}, "Deep": ' + "[" * 5000 + "]" * 5000 + "}"
    cfn = cloud.client("cloudformation")

    message = _refusal(lambda: cfn.get_template_summary(TemplateBody=body))

    assert message.startswith("Template format error: ")


def test_serve_refuses_a_bomb_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(BOMB)

    status = cli.main(["serve", "--template", str(template), "--stack-name", "bomb"])

    assert status == 2
    assert capsys.readouterr().out.startswith("error: Template format error: ")


def test_a_local_template_over_1_mb_is_refused_unread(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text("Resources: {}\n" + "#" * 1_000_000 + "\n")

    with pytest.raises(UnsupportedTemplate, match=r"may not exceed 1000000 bytes in size\."):
        load(template, samconfig=None)


def test_a_state_machine_definition_file_over_1_mb_is_refused(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    (tmp_path / "machine.asl.json").write_text(
        json.dumps({"Comment": "x" * 1024 * 1024, "StartAt": "A", "States": {}})
    )
    (tmp_path / "template.yaml").write_text(
        "Transform: AWS::Serverless-2016-10-31\nResources:\n  Machine:\n"
        "    Type: AWS::Serverless::StateMachine\n"
        "    Properties:\n      DefinitionUri: machine.asl.json\n      Policies: []\n"
    )
    template = load(tmp_path / "template.yaml", samconfig=None)

    with pytest.raises(UnsupportedTemplate, match=r"Machine\.DefinitionUri: .* 1048576 bytes"):
        deploy(
            template,
            cloud.client,
            providers=services.providers(),
            stack_name="big-definition",
            region="us-east-1",
        )


def test_501_resources_are_refused_and_500_are_not(cloud: LocalCloud) -> None:
    cfn = cloud.client("cloudformation")

    def declaring(count: int) -> str:
        return json.dumps({"Resources": {f"H{i}": HANDLE for i in range(count)}})

    assert len(cfn.get_template_summary(TemplateBody=declaring(500))["ResourceTypes"]) == 500
    message = _refusal(lambda: cfn.create_stack(StackName=_name("s"), TemplateBody=declaring(501)))
    assert message == (
        "Template format error: Number of resources, 501, is greater than maximum allowed, 500"
    )


def test_500_resources_are_counted_after_the_sam_transform(cloud: LocalCloud) -> None:
    """251 functions as written, 502 resources as deployed (each has its role)."""
    function = {
        "Type": "AWS::Serverless::Function",
        "Properties": {"InlineCode": "x", "Handler": "index.h", "Runtime": "python3.13"},
    }
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {f"F{i}": function for i in range(251)},
    }
    cfn = cloud.client("cloudformation")

    created = cfn.create_change_set(
        StackName=_name("sam"),
        ChangeSetName=_name("c"),
        ChangeSetType="CREATE",
        TemplateBody=json.dumps(body, separators=(",", ":")),
        Capabilities=["CAPABILITY_IAM"],
    )

    described = cfn.describe_change_set(ChangeSetName=created["Id"])
    assert (described["Status"], described["StatusReason"]) == (
        "FAILED",
        "Template format error: Number of resources, 502, is greater than maximum allowed, 500",
    )


def _with(**sections: Any) -> str:
    return json.dumps({"Resources": {"Handle": HANDLE}, **sections})


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (_with(Outputs={f"O{i}": {"Value": "v"} for i in range(201)}), "Number of outputs, 201"),
        (
            _with(Parameters={f"P{i}": {"Type": "String", "Default": "d"} for i in range(201)}),
            "Number of parameters, 201",
        ),
        (
            _with(Mappings={f"M{i}": {"k": {"v": "w"}} for i in range(201)}),
            "Number of mappings, 201",
        ),
        (_with(Description="d" * 1_025), "the template's Description is 1025 bytes"),
        (
            _with(Parameters={"Big": {"Type": "String", "Default": "d" * 4_097}}),
            "Parameter 'Big' has a value of 4097 bytes",
        ),
    ],
    ids=["outputs", "parameters", "mappings", "description", "a default"],
)
@pytest.mark.parametrize("action", ["CreateStack", "CreateChangeSet"])
def test_cloudformations_other_template_quotas_are_refused(
    cloud: LocalCloud, action: str, body: str, said: str
) -> None:
    """Found by the held-back attacks: each was deployed, by moto's stacks and the local
    deployer alike ("CloudFormation quotas": 200 of each, a 1,024-byte description)."""
    if action == "CreateChangeSet":
        body = json.dumps({**json.loads(body), "Transform": "AWS::Serverless-2016-10-31"})
    message = _refusal(lambda: _actions(cloud)[action](body))
    assert said in message


def test_a_resource_another_service_refuses_fails_moto_stack_with_a_parseable_error(
    cloud: LocalCloud,
) -> None:
    """Found by the held-back attacks: moto creates a plain template's resources in
    CreateStack itself, and Lambda's refusal of a Timeout over 900 s came back as Lambda's
    JSON inside CloudFormation's XML, which botocore cannot parse."""
    function = {
        "Type": "AWS::Lambda::Function",
        "Properties": {
            "Runtime": "python3.13",
            "Handler": "index.handler",
            "Role": "arn:aws:iam::123456789012:role/r",
            "Code": {"ZipFile": "def handler(event, context):\n    return 1\n"},
            "Timeout": 100_000,
        },
    }
    body = json.dumps({"Resources": {"Fn": function}})
    message = _refusal(lambda: _actions(cloud)["CreateStack"](body))
    assert message.startswith('Resource handler returned message: "1 validation error detected')
    assert "at 'timeout' failed to satisfy constraint" in message


def test_a_parameter_value_over_4096_bytes_is_refused(cloud: LocalCloud) -> None:
    body = json.dumps({"Parameters": {"Note": {"Type": "String"}}, "Resources": {"H": HANDLE}})
    cfn = cloud.client("cloudformation")

    def create(value: str) -> Any:
        parameters = [{"ParameterKey": "Note", "ParameterValue": value}]
        return cfn.create_stack(StackName=_name("p"), TemplateBody=body, Parameters=parameters)

    assert create("x" * 4096)["StackId"]
    message = _refusal(lambda: create("x" * 4097))
    assert message.startswith("Parameter 'Note' ")
    assert "4096 bytes" in message


def test_a_template_body_over_51200_bytes_is_refused_with_awss_message(cloud: LocalCloud) -> None:
    body = json.dumps({"Resources": {"H": HANDLE}, "Metadata": {"Pad": ""}})
    body = body.replace('"Pad": ""', '"Pad": "' + "x" * (51_201 - len(body)) + '"')
    cfn = cloud.client("cloudformation")

    message = _refusal(lambda: cfn.create_stack(StackName=_name("s"), TemplateBody=body))

    assert message == (
        f"1 validation error detected: Value '{body}' at 'templateBody' failed to satisfy "
        "constraint: Member must have length less than or equal to 51200"
    )


def test_a_template_url_over_1_mb_is_refused_and_one_over_51200_bytes_deploys(
    cloud: LocalCloud,
) -> None:
    """``sam deploy`` sends a template over 51,200 bytes by ``TemplateURL``."""
    cfn = cloud.client("cloudformation")

    def padded(size: int) -> str:
        body = json.dumps({"Resources": {"H": HANDLE}, "Metadata": {"Pad": ""}})
        return body.replace('"Pad": ""', '"Pad": "' + "x" * (size - len(body)) + '"')

    large = _uploaded(cloud, padded(60_000))
    assert cfn.create_stack(StackName=_name("large"), TemplateURL=large)["StackId"]
    too_large = _uploaded(cloud, padded(1_000_001))
    message = _refusal(lambda: cfn.create_stack(StackName=_name("s"), TemplateURL=too_large))
    assert message == "Template may not exceed 1000000 bytes in size."
