"""Lambda versions, aliases and layers as SAM templates write them (issue 29):
``AutoPublishAlias`` publishes a version that keeps the code it was published with, an
alias and an event source mapping on it run that version, and ``AWS::Serverless::
LayerVersion`` from a local ``ContentUri`` is importable in Lambda's order, at most 5 of
them, counted toward the 262,144,000-byte unzipped limit.

The fixture app ``fixtures/apps/alias_layer`` is the suite's own.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.services.lambda_.runtime import packages
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES

APP = FIXTURES / "apps" / "alias_layer" / "template.yaml"
ROLE = "arn:aws:iam::123456789012:role/layered"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=load(APP), stack_name="alias-a", region="eu-west-1") as running:
        running.client("iam").create_role(RoleName="layered", AssumeRolePolicyDocument="{}")
        yield running


def zipped(files: dict[str, str]) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        for name, text in files.items():
            package.writestr(name, text)
    return archive.getvalue()


def invoke(cloud: LocalCloud, name: str, qualifier: str | None = None) -> tuple[str, Any]:
    kwargs = {"Qualifier": qualifier} if qualifier else {}
    answer = cloud.client("lambda").invoke(FunctionName=name, Payload=b"{}", **kwargs)
    payload = json.loads(answer["Payload"].read())
    assert "FunctionError" not in answer, payload
    return str(answer["ExecutedVersion"]), payload


def test_the_alias_and_the_version_are_the_outputs_cloudformation_gives(
    cloud: LocalCloud,
) -> None:
    name = cloud.outputs["GreeterName"]
    function_arn = f"arn:aws:lambda:eu-west-1:123456789012:function:{name}"
    assert cloud.outputs["GreeterAliasArn"] == f"{function_arn}:live"
    assert cloud.outputs["GreeterVersionArn"] == f"{function_arn}:1"
    assert cloud.outputs["WordsLayerArn"] == "arn:aws:lambda:eu-west-1:123456789012:layer:words:1"
    (alias,) = cloud.client("lambda").list_aliases(FunctionName=name)["Aliases"]
    assert (alias["Name"], alias["FunctionVersion"]) == ("live", "1")


def test_a_published_version_keeps_its_code_when_latest_changes(cloud: LocalCloud) -> None:
    name = cloud.outputs["GreeterName"]
    published = {
        "greeting": "hello from the layer",  # the layer's python/
        "site": "site-packages of the layer",  # its python/lib/python3.13/site-packages
        "code": "published",
    }
    assert invoke(cloud, cloud.outputs["GreeterAliasArn"]) == ("1", {**published, "version": "1"})
    assert invoke(cloud, name, "live") == ("1", {**published, "version": "1"})

    new_code = (
        "import os, words\n"
        "def handler(event, context):\n"
        "    return {'code': 'updated', 'version': os.environ['AWS_LAMBDA_FUNCTION_VERSION'],"
        " 'greeting': words.GREETING}\n"
    )
    cloud.client("lambda").update_function_code(
        FunctionName=name, ZipFile=zipped({"app.py": new_code})
    )
    assert invoke(cloud, name) == (
        "$LATEST",
        {"code": "updated", "version": "$LATEST", "greeting": "hello from the layer"},
    )
    assert invoke(cloud, name, "1") == ("1", {**published, "version": "1"})
    assert invoke(cloud, f"{name}:live") == ("1", {**published, "version": "1"})

    version_2 = cloud.client("lambda").publish_version(FunctionName=name)["Version"]
    cloud.client("lambda").update_alias(FunctionName=name, Name="live", FunctionVersion=version_2)
    assert invoke(cloud, name, "live")[1]["code"] == "updated"
    assert invoke(cloud, name, "1")[1]["code"] == "published"
    cloud.client("lambda").update_alias(FunctionName=name, Name="live", FunctionVersion="1")


def test_the_queues_mapping_on_the_alias_runs_the_aliass_version(cloud: LocalCloud) -> None:
    name = cloud.outputs["GreeterName"]
    (mapping,) = cloud.client("lambda").list_event_source_mappings(FunctionName=name)[
        "EventSourceMappings"
    ]
    assert mapping["FunctionArn"] == cloud.outputs["GreeterAliasArn"]
    body = f"message-{uuid.uuid4().hex[:6]}"
    cloud.client("sqs").send_message(QueueUrl=cloud.outputs["InboxUrl"], MessageBody=body)
    cloud.drain(timeout_s=30)
    item = cloud.client("dynamodb").get_item(
        TableName=cloud.outputs["SeenTable"], Key={"id": {"S": body}}
    )["Item"]
    assert item["version"] == {"S": "1"}
    assert item["arn"] == {"S": cloud.outputs["GreeterAliasArn"].rsplit(":", 1)[0] + ":1"}


def test_a_function_takes_at_most_5_layers(cloud: LocalCloud) -> None:
    layer = cloud.outputs["WordsLayerArn"]
    with pytest.raises(ClientError) as refused:
        cloud.client("lambda").create_function(
            FunctionName="six-layers",
            Runtime="python3.13",
            Role=ROLE,
            Handler="app.handler",
            Code={"ZipFile": zipped({"app.py": "def handler(e, c):\n    return 1\n"})},
            Layers=[layer] * 6,
        )
    assert refused.value.response["Error"] == {
        "Code": "InvalidParameterValueException",
        "Message": "Cannot reference more than 5 layers.",
    }


def layer_of(cloud: LocalCloud, name: str, files: dict[str, str]) -> str:
    return str(
        cloud.client("lambda").publish_layer_version(
            LayerName=name, Content={"ZipFile": zipped(files)}
        )["LayerVersionArn"]
    )


def test_layers_are_unzipped_in_the_order_listed_the_later_file_winning(
    cloud: LocalCloud,
) -> None:
    first = layer_of(cloud, "first", {"python/which.py": "WHO = 'first'\nFIRST = True\n"})
    second = layer_of(cloud, "second", {"python/which.py": "WHO = 'second'\n"})
    code = zipped(
        {
            "app.py": "import which\n"
            "def handler(e, c):\n"
            "    return [which.WHO, hasattr(which, 'FIRST')]\n"
        }
    )
    for name, layers, expected in (
        ("first-then-second", [first, second], ["second", False]),
        ("second-then-first", [second, first], ["first", True]),
    ):
        cloud.client("lambda").create_function(
            FunctionName=name,
            Runtime="python3.13",
            Role=ROLE,
            Handler="app.handler",
            Code={"ZipFile": code},
            Layers=layers,
        )
        assert invoke(cloud, name) == ("$LATEST", expected)


def test_the_function_and_its_layers_together_count_toward_the_unzipped_limit(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = zipped({"app.py": "def handler(e, c):\n    return 1\n" + "#" * 600})
    layer = layer_of(cloud, "bulky", {"python/bulk.py": "#" * 600})
    monkeypatch.setattr(packages, "UNZIPPED_LIMIT", 1_000)
    with pytest.raises(ClientError) as refused:
        cloud.client("lambda").create_function(
            FunctionName="over-the-limit",
            Runtime="python3.13",
            Role=ROLE,
            Handler="app.handler",
            Code={"ZipFile": code},
            Layers=[layer],
        )
    error = refused.value.response["Error"]
    assert error["Code"] == "InvalidParameterValueException"
    assert error["Message"].startswith(
        "Function code combined with layers exceeds the maximum allowed size of 1000 bytes."
    )
    with pytest.raises(ClientError):  # nothing of it stays
        cloud.client("lambda").get_function(FunctionName="over-the-limit")
    monkeypatch.setattr(packages, "UNZIPPED_LIMIT", 2_000)
    cloud.client("lambda").create_function(
        FunctionName="under-the-limit",
        Runtime="python3.13",
        Role=ROLE,
        Handler="app.handler",
        Code={"ZipFile": code},
        Layers=[layer],
    )
    assert invoke(cloud, "under-the-limit") == ("$LATEST", 1)


def test_weighted_alias_routing_is_refused_by_name(cloud: LocalCloud) -> None:
    name = cloud.outputs["GreeterName"]
    with pytest.raises(ClientError) as refused:
        cloud.client("lambda").create_alias(
            FunctionName=name,
            Name="canary",
            FunctionVersion="1",
            RoutingConfig={"AdditionalVersionWeights": {"2": 0.1}},
        )
    assert "AdditionalVersionWeights" in refused.value.response["Error"]["Message"]
