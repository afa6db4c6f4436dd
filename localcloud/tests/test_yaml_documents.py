"""A YAML document a caller sends cannot grow in the server through its aliases, and one
that does not parse is the service's own 400 (issue 47, review round 2, finding 3).

moto parses SSM documents, API Gateway's imported definitions and OpenSearch Ingestion
pipelines with ``yaml.safe_load``, which had no alias bound: a 356-byte SSM document
became 30 MB at ``GetDocument``, and each level of ten aliases multiplies it by ten.
Before the bound every door below accepted the bomb; ImportRestApi, PutRestApi,
ReimportApi and CreatePipeline also let a YAML error out as a 500 with a traceback.

One in-process account for the module, with the local cloud's patches.
"""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from localcloud import services
from localcloud.tests.support.aws import REGION

LEVELS = 6
"""10**6 copies of the first list once the aliases resolve: past the 250,000-node bound."""


def bomb(head: str, key: str) -> str:
    """A YAML document: ``head`` (plain YAML lines), then ``key`` holding ten aliases of
    ten aliases … ``LEVELS`` deep (a few hundred bytes)."""
    lines = [head, 'a0: &a0 ["xxxxxxxx"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, LEVELS + 1)]
    lines.append(f"{key}: *a{LEVELS}")
    return "\n".join(lines)


OPENAPI = "openapi: 3.0.1\ninfo: {title: bombed, version: '1', description: d}\npaths: {}"
NOT_YAML = "openapi: 3.0.1\npaths: [unclosed"


@pytest.fixture(scope="module")
def account() -> Iterator[None]:
    services.install()
    try:
        with mock_aws():
            yield
    finally:
        services.uninstall()


def _error(call: ClientError) -> tuple[str, str]:
    return call.response["Error"]["Code"], call.response["Error"]["Message"]


def test_an_ssm_document_whose_aliases_explode_is_invalid_content(account: None) -> None:
    ssm = boto3.client("ssm", region_name=REGION)

    with pytest.raises(ClientError) as refused:
        ssm.create_document(
            Content=bomb('schemaVersion: "2.2"', "mainSteps"),
            Name="bomb",
            DocumentType="Command",
            DocumentFormat="YAML",
        )

    assert _error(refused.value) == (
        "InvalidDocumentContent",
        "The content for the document is not valid.",
    )


def test_import_rest_api_of_an_alias_bomb_is_a_bad_request(account: None) -> None:
    apigateway = boto3.client("apigateway", region_name=REGION)

    with pytest.raises(ClientError) as refused:
        apigateway.import_rest_api(body=bomb(OPENAPI, "x-bomb").encode())

    code, message = _error(refused.value)
    assert code == "BadRequestException"
    assert message.startswith("Invalid OpenAPI input.")
    assert "aliases resolve to more than 250,000 nodes" in message


def test_put_rest_api_of_an_alias_bomb_is_a_bad_request(account: None) -> None:
    apigateway = boto3.client("apigateway", region_name=REGION)
    api = apigateway.create_rest_api(name="put-bomb")["id"]

    with pytest.raises(ClientError) as refused:
        apigateway.put_rest_api(restApiId=api, body=bomb(OPENAPI, "x-bomb").encode())

    code, message = _error(refused.value)
    assert (code, "aliases resolve" in message) == ("BadRequestException", True)


def test_put_rest_api_of_text_that_is_not_yaml_is_a_bad_request_not_a_500(account: None) -> None:
    apigateway = boto3.client("apigateway", region_name=REGION)
    api = apigateway.create_rest_api(name="put-not-yaml")["id"]

    with pytest.raises(ClientError) as refused:
        apigateway.put_rest_api(restApiId=api, body=NOT_YAML.encode())

    assert _error(refused.value) == (
        "BadRequestException",
        "Invalid OpenAPI input. The definition is not valid YAML: expected ',' or ']', but "
        "got '<stream end>'",
    )


def test_reimport_of_an_http_api_alias_bomb_is_a_bad_request(account: None) -> None:
    """moto answers ImportApi with NotImplementedError for any body (nothing is parsed);
    ReimportApi is the door of HTTP APIs that parses one."""
    apigatewayv2 = boto3.client("apigatewayv2", region_name=REGION)
    api = apigatewayv2.create_api(Name="reimport-bomb", ProtocolType="HTTP")["ApiId"]

    with pytest.raises(ClientError) as refused:
        apigatewayv2.reimport_api(ApiId=api, Body=bomb(OPENAPI, "x-bomb"))

    code, message = _error(refused.value)
    assert (code, "aliases resolve" in message) == ("BadRequestException", True)


def test_an_ingestion_pipeline_alias_bomb_is_a_validation_error(account: None) -> None:
    osis = boto3.client("osis", region_name=REGION)

    with pytest.raises(ClientError) as refused:
        osis.create_pipeline(
            PipelineName="bombed",
            MinUnits=1,
            MaxUnits=1,
            PipelineConfigurationBody=bomb('version: "2"', "bombed-pipeline"),
        )

    code, message = _error(refused.value)
    assert (code, "aliases resolve" in message) == ("ValidationException", True)


def test_aliases_that_add_little_still_parse(account: None) -> None:
    """The bound is on what aliases add: a document reusing a block is taken as before."""
    ssm = boto3.client("ssm", region_name=REGION)
    content = (
        'schemaVersion: "2.2"\ndescription: reused\n'
        "step: &step {action: aws:runShellScript, name: one, inputs: {runCommand: [date]}}\n"
        "mainSteps: [*step]"
    )

    ssm.create_document(
        Content=content, Name="reused", DocumentType="Command", DocumentFormat="YAML"
    )

    assert ssm.describe_document(Name="reused")["Document"]["Description"] == "reused"
