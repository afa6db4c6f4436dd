"""APIs in front of a queue, a state machine and a table (issue 30): a REST API's ``AWS``
integrations with request and response mapping templates (SQS ``SendMessage`` by path and
by action, Step Functions ``StartExecution``, a DynamoDB conditional ``PutItem``), an HTTP
API's first-class integrations (``SQS-SendMessage``, ``StepFunctions-StartExecution``)
from a definition and written by hand, an HTTP API's CORS configuration, binary bodies,
and a slow route beside a quick one.

The fixture app ``fixtures/apps/api_integrations`` is the suite's own.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.services.apigateway.cors import add_headers, is_preflight, preflight, refused
from localcloud.services.apigateway.http_integration import evaluate
from localcloud.services.apigateway.mapping import TemplateError, render
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES
from localcloud.tests.test_resources_as_written import change_set, failures

APP = FIXTURES / "apps" / "api_integrations" / "template.yaml"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(
        template=load(APP), stack_name="integ-a", region="eu-west-1", server=True
    ) as running:
        yield running


def call(
    url: str, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def drain(cloud: LocalCloud) -> list[dict[str, Any]]:
    """Every message on the intake queue now, deleted as read."""
    sqs = cloud.client("sqs")
    url = cloud.outputs["QueueUrl"]
    found: list[dict[str, Any]] = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return found
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        found += messages


def test_a_rest_sqs_integration_maps_the_request_and_the_response(cloud: LocalCloud) -> None:
    drain(cloud)
    order = json.dumps({"orderId": "o-1", "note": "a & b = c"}).encode()
    status, headers, body = call(
        f"{cloud.outputs['RestUrl']}/orders", "POST", order, {**JSON, "X-Trace": "t-9"}
    )
    assert status == 202, body
    assert json.loads(body) == {"queued": True, "stage": "prod", "trace": "t-9"}
    assert headers["X-Queue"] == "intake"
    assert headers["X-Request"] == headers["x-amzn-RequestId"]
    (message,) = drain(cloud)
    assert message["Body"] == order.decode()  # urlEncode'd into the form, decoded by SQS
    assert message["MessageAttributes"]["tier"]["StringValue"] == "gold"  # a stage variable


def test_a_path_parameter_reaches_the_service_as_one_encoded_segment(cloud: LocalCloud) -> None:
    drain(cloud)
    queue = cloud.outputs["QueueUrl"].rsplit("/", 1)[1]
    status, _, body = call(f"{cloud.outputs['RestUrl']}/queues/{queue}", "POST", b"{}", JSON)
    assert (status, json.loads(body)) == (200, {"queued": queue})
    assert [m["Body"] for m in drain(cloud)] == ["{}"]
    # a value that would climb out of the queue's path stays one segment of it …
    climbing = f"{queue}%3FAction%3DDeleteQueue"
    status, _, body = call(f"{cloud.outputs['RestUrl']}/queues/{climbing}", "POST", b"{}", JSON)
    assert (status, json.loads(body)) == (404, {"message": "no such queue"})
    # … and a dot segment, which servers resolve differently, never reaches the API (issue 47)
    for dots in ("..", "%2E%2E"):
        status, _, body = call(f"{cloud.outputs['RestUrl']}/queues/{dots}", "POST", b"{}", JSON)
        assert (status, b"is ambiguous" in body) == (400, True), dots
    assert cloud.client("sqs").get_queue_url(QueueName=queue)["QueueUrl"]


def test_passthrough_never_refuses_a_content_type_without_a_template(cloud: LocalCloud) -> None:
    drain(cloud)
    status, _, body = call(
        f"{cloud.outputs['RestUrl']}/orders", "POST", b"text", {"Content-Type": "text/plain"}
    )
    assert (status, json.loads(body)) == (415, {"message": "Unsupported Media Type"})
    assert drain(cloud) == []


def test_passthrough_when_no_templates_refuses_a_type_the_templates_do_not_name(
    cloud: LocalCloud,
) -> None:
    url = f"{cloud.outputs['RestUrl']}/items/i-plain"
    status, _, body = call(url, "PUT", b"note", {"Content-Type": "text/plain"})
    assert (status, json.loads(body)) == (415, {"message": "Unsupported Media Type"})


def test_passthrough_when_no_match_sends_the_body_as_it_is(cloud: LocalCloud) -> None:
    """``/queues/{name}`` has a template for JSON alone: a form passes through."""
    drain(cloud)
    queue = cloud.outputs["QueueUrl"].rsplit("/", 1)[1]
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = b"Action=SendMessage&MessageBody=passed+through"
    status, _, answer = call(f"{cloud.outputs['RestUrl']}/queues/{queue}", "POST", body, form)
    assert (status, json.loads(answer)) == (200, {"queued": queue})
    assert [m["Body"] for m in drain(cloud)] == ["passed through"]


def test_a_step_functions_integration_starts_once_per_name(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['RestUrl']}/executions"
    name = f"o-{uuid.uuid4().hex[:6]}"
    order = json.dumps({"orderId": name}).encode()
    status, _, body = call(url, "POST", order, JSON)
    assert status == 200, body
    execution = json.loads(body)["executionArn"]
    assert execution.endswith(f":{name}")
    described = cloud.client("stepfunctions").describe_execution(executionArn=execution)
    assert json.loads(described["input"]) == {"orderId": name}
    # the same name again: the service's 400, selected by the "4\d{2}" pattern
    status, _, body = call(url, "POST", order, JSON)
    assert (status, json.loads(body)) == (409, {"refused": "ExecutionAlreadyExists"})


def test_a_dynamodb_conditional_write_keeps_the_first_item(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['RestUrl']}/items/i-1"
    status, _, body = call(url, "PUT", json.dumps({"note": "first"}).encode(), JSON)
    assert (status, json.loads(body)) == (201, {"stored": "i-1"})
    status, _, body = call(url, "PUT", json.dumps({"note": "second"}).encode(), JSON)
    assert status == 409
    assert json.loads(body)["error"].endswith("ConditionalCheckFailedException")
    (table,) = [
        name
        for name in cloud.client("dynamodb").list_tables()["TableNames"]
        if "ItemsTable" in name
    ]
    item = cloud.client("dynamodb").get_item(TableName=table, Key={"id": {"S": "i-1"}})["Item"]
    assert item["note"] == {"S": "first"}


def test_a_binary_media_type_reaches_the_function_base64_encoded(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['RestUrl']}/upload"
    png = b"\x89PNG\r\n\x1a\n\x00\xff"
    status, _, body = call(url, "POST", png, {"Content-Type": "image/png"})
    seen = json.loads(body)
    assert (status, seen["isBase64Encoded"]) == (200, True)
    assert base64.b64decode(seen["body"]) == png
    status, _, body = call(url, "POST", b"plain words", {"Content-Type": "text/plain"})
    assert json.loads(body) | {"contentType": None} == {
        "body": "plain words",
        "isBase64Encoded": False,
        "contentType": None,
    }


def test_an_http_apis_sqs_send_message_integration(cloud: LocalCloud) -> None:
    drain(cloud)
    status, headers, body = call(f"{cloud.outputs['HttpUrl']}orders", "POST", b'{"a": 1}', JSON)
    assert status == 200, body
    assert headers["apigw-requestid"]
    (message,) = drain(cloud)
    assert message["Body"] == '{"a": 1}'
    assert json.loads(body)["MessageId"] == message["MessageId"]


def test_an_http_apis_step_functions_integration_names_the_execution(cloud: LocalCloud) -> None:
    order = f"o-{uuid.uuid4().hex[:6]}"
    status, _, body = call(
        f"{cloud.outputs['HttpUrl']}executions/{order}", "POST", b'{"b": 2}', JSON
    )
    assert status == 200, body
    execution = json.loads(body)["executionArn"]
    assert execution.endswith(f":order-{order}")
    described = cloud.client("stepfunctions").describe_execution(executionArn=execution)
    assert json.loads(described["input"]) == {"b": 2}


def test_an_http_apis_cors_configuration_answers_for_the_api(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['HttpUrl']}echo"
    shop = {"Origin": "https://shop.example"}
    status, headers, _ = call(
        url, "OPTIONS", headers={**shop, "Access-Control-Request-Method": "POST"}
    )
    assert status == 204
    assert headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert headers["Access-Control-Allow-Methods"] == "GET,POST"
    assert headers["Access-Control-Allow-Headers"] == "content-type"
    assert headers["Access-Control-Max-Age"] == "600"
    foreign = {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"}
    status, headers, _ = call(url, "OPTIONS", headers=foreign)
    assert (status, headers.get("Access-Control-Allow-Origin")) == (204, None)
    # the function's own "*" is replaced by the configuration's answer
    status, headers, body = call(url, "POST", b"{}", {**shop, **JSON})
    assert status == 200, body
    assert headers.get_all("Access-Control-Allow-Origin") == ["https://shop.example"]
    assert headers["Access-Control-Expose-Headers"] == "x-order"
    status, headers, _ = call(url, "POST", b"{}", {"Origin": "https://elsewhere.example", **JSON})
    assert (status, headers.get("Access-Control-Allow-Origin")) == (200, None)


def test_an_http_api_base64_encodes_a_body_that_is_not_text(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['HttpUrl']}echo"
    status, _, body = call(url, "POST", b"\x00\x01", {"Content-Type": "application/octet-stream"})
    assert status == 200, body
    assert json.loads(body)["isBase64Encoded"] is True
    assert base64.b64decode(json.loads(body)["body"]) == b"\x00\x01"
    status, _, body = call(url, "POST", b'{"x": 1}', JSON)
    assert (json.loads(body)["body"], json.loads(body)["isBase64Encoded"]) == ('{"x": 1}', False)


def test_integrations_and_routes_written_by_hand(cloud: LocalCloud) -> None:
    drain(cloud)
    status, _, body = call(
        f"{cloud.outputs['HandHttpUrl']}send", "POST", b'{"order": {"id": 3}}', JSON
    )
    assert status == 200, body
    status, _, body = call(cloud.outputs["HandRestUrl"], "POST", b"hand-body", JSON)
    assert (status, json.loads(body)) == (200, {"sent": True})
    assert sorted(m["Body"] for m in drain(cloud)) == ["hand-body", '{"id": 3}']
    # the URI's action is the one run, whatever action a form body names
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, body = call(cloud.outputs["HandRestUrl"], "POST", b"Action=DeleteQueue", form)
    assert (status, json.loads(body)) == (200, {"sent": True})
    assert [m["Body"] for m in drain(cloud)] == ["Action=DeleteQueue"]
    # a required parameter that selects nothing: API Gateway's 400
    status, _, body = call(f"{cloud.outputs['HandHttpUrl']}send", "POST", b"{}", JSON)
    assert (status, json.loads(body)) == (400, {"message": "Bad Request"})


@pytest.mark.slow  # seconds: the quick loop leaves it to make test
def test_a_slow_function_does_not_hold_up_another_route(cloud: LocalCloud) -> None:
    """Each request runs in an execution environment of its own function: the quick
    route answers while the slow one (4 s) is still running."""
    quick = f"{cloud.outputs['RestUrl']}/upload"
    assert call(quick, "POST", b"warm", JSON)[0] == 200
    slow_done = threading.Event()

    def slow() -> None:
        call(f"{cloud.outputs['RestUrl']}/slow")
        slow_done.set()

    threading.Thread(target=slow, daemon=True).start()
    time.sleep(0.5)  # the slow request is in its function by now (cold start included)
    assert call(quick, "POST", b"quick", JSON)[0] == 200
    assert not slow_done.is_set()
    assert slow_done.wait(30)


@pytest.mark.parametrize(
    ("integration", "expected"),
    [
        (
            {
                "type": "aws",
                "httpMethod": "POST",
                "uri": "arn:aws:apigateway:us-east-1:sns:action/Publish",
            },
            "an AWS integration to sns is not run locally (dynamodb, sqs, states are)",
        ),
        (
            {"type": "http", "httpMethod": "GET", "uri": "https://example.com/"},
            "integration type http is not run locally",
        ),
        (
            {
                "type": "aws",
                "httpMethod": "POST",
                "uri": "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/f/x",
            },
            "a Lambda custom (non-proxy) integration is not run locally",
        ),
    ],
)
def test_an_integration_the_local_cloud_does_not_run_is_refused_by_name(
    cloud: LocalCloud, integration: dict[str, str], expected: str
) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGateway::RestApi",
                "Properties": {
                    "Body": {
                        "swagger": "2.0",
                        "info": {"title": "refused"},
                        "paths": {"/x": {"post": {"x-amazon-apigateway-integration": integration}}},
                    }
                },
            }
        },
    }
    name = f"refused-{uuid.uuid4().hex[:6]}"
    change_set(cloud, name, json.dumps(body))
    reasons = [reason for logical_id, reason in failures(cloud, name) if logical_id == "Api"]
    assert any(expected in reason for reason in reasons), reasons


def test_a_first_class_integration_with_a_parameter_of_another_subtype_is_refused(
    cloud: LocalCloud,
) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGatewayV2::Api",
                "Properties": {"Name": "x", "ProtocolType": "HTTP"},
            },
            "Send": {
                "Type": "AWS::ApiGatewayV2::Integration",
                "Properties": {
                    "ApiId": {"Ref": "Api"},
                    "IntegrationType": "AWS_PROXY",
                    "IntegrationSubtype": "SQS-SendMessage",
                    "PayloadFormatVersion": "1.0",
                    "RequestParameters": {"QueueUrl": "q", "Input": "$request.body"},
                },
            },
        },
    }
    name = f"subtype-{uuid.uuid4().hex[:6]}"
    change_set(cloud, name, json.dumps(body))
    reasons = [reason for logical_id, reason in failures(cloud, name) if logical_id == "Send"]
    assert any("SQS-SendMessage has no parameter Input" in reason for reason in reasons), reasons


def _render(template: str, body: str = "", **parameters: dict[str, str]) -> str:
    """``template`` rendered (the sandbox in force: a test takes ``patched``)."""
    return render(
        template,
        body=body,
        parameters=parameters,
        context={"requestId": "r-1", "identity": {"sourceIp": "127.0.0.1"}},
        stage_variables={"tier": "gold"},
    )


def test_mapping_template_variables_as_api_gateway_defines_them(patched: None) -> None:
    body = json.dumps({"order": {"id": "o-1", "lines": [1, 2]}, "note": 'it\'s "quoted" / é'})
    assert _render("$input.json('$.order')", body) == '{"id": "o-1", "lines": [1, 2]}'
    assert _render("$input.path('$.order.lines').size()", body) == "2"
    assert _render("$input.path('$.order').id", body) == "o-1"
    assert _render("$input.json('$.missing')", body) == "null"
    assert _render("$util.escapeJavaScript($input.path('$.note'))", body) == (
        'it\\\'s \\"quoted\\" \\/ \\u00E9'
    )
    assert _render("$util.urlEncode('a b&c')") == "a+b%26c"
    assert _render("$util.base64Encode('hi')|$util.base64Decode('aGk=')") == "aGk=|hi"
    assert _render("$util.parseJson('{\"a\": [5]}').a.get(0)") == "5"
    assert _render("$context.requestId $context.identity.sourceIp $stageVariables.tier") == (
        "r-1 127.0.0.1 gold"
    )
    params = {"path": {"id": "p"}, "querystring": {"id": "q", "q": "1"}, "header": {"X-A": "h"}}
    assert _render("$input.params('id') $input.params('q') $input.params('x-a')", **params) == (
        "p 1 h"
    )
    assert (
        _render(
            "#foreach($k in $input.params().querystring.keySet())$k#if($foreach.hasNext),#end#end",
            **params,
        )
        == "id,q"
    )
    assert _render("$input.params('absent')|", **params) == "|"


def test_nulls_and_maps_as_velocity_renders_them_on_api_gateway(patched: None) -> None:
    body = json.dumps({"order": {"id": "o-1"}})
    assert _render("[$util.urlEncode($input.path('$.missing'))]", body) == "[]"
    assert _render("[$util.escapeJavaScript($input.path('$.missing'))]", body) == "[]"
    assert _render("$input.path('$.order')", body) == "{id=o-1}"
    assert _render("#set($m = $input.path('$.order'))$m.put('n', 2)$m.toString()", body) == (
        "{id=o-1, n=2}"
    )


def test_an_http_api_parameter_selects_from_the_request() -> None:
    request = Request(
        EnvironBuilder(
            method="POST",
            path="/orders/o-9",
            query_string="tag=a&tag=b",
            headers={"X-Trace": "t-1"},
            data=json.dumps({"items": [{"id": "i-1"}], "total": 3}),
        ).get_environ()
    )
    event = {
        "pathParameters": {"orderId": "o-9"},
        "stageVariables": {"tier": "gold"},
        "requestContext": {"requestId": "r-1", "http": {"method": "POST"}},
    }
    cases = {
        "$request.body.items[0].id": "i-1",
        "$request.body.total": "3",
        "$request.body.items": '[{"id": "i-1"}]',
        "$request.header.x-trace": "t-1",
        "$request.querystring.tag": "a,b",
        "$request.path.orderId": "o-9",
        "$context.requestId": "r-1",
        "$context.http.method": "POST",
        "$stageVariables.tier": "gold",
        "order-${request.path.orderId}-${stageVariables.tier}": "order-o-9-gold",
        "static text": "static text",
    }
    for expression, expected in cases.items():
        assert evaluate(expression, request, event) == expected, expression
    assert evaluate("$request.header.x-absent", request, event) is None
    assert evaluate("a-${request.body.absent}", request, event) is None


def _cors_request(method: str, **headers: str) -> Request:
    return Request(EnvironBuilder(method=method, path="/", headers=headers).get_environ())


def test_cors_origins_as_an_http_api_allows_them() -> None:
    shop = {"AllowOrigins": ["https://shop.example", "http://*"], "AllowMethods": ["GET"]}
    ask = {"Access-Control-Request-Method": "GET"}
    answers = {
        "https://shop.example": "https://shop.example",
        "http://any.example:8080": "http://any.example:8080",  # http://* allows any http one
        "https://other.example": None,
        "https://shop.example.evil": None,
    }
    for origin, expected in answers.items():
        answer = preflight(shop, _cors_request("OPTIONS", Origin=origin, **ask))
        assert answer.status_code == 204
        assert answer.headers.get("Access-Control-Allow-Origin") == expected, origin
    every = {"AllowOrigins": ["*"]}
    answer = add_headers(every, _cors_request("GET", Origin="https://x"), Response("{}"))
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    assert refused({"AllowOrigins": ["*"], "AllowCredentials": True}) is not None
    assert refused({"AllowOrigins": ["https://shop.example"], "AllowCredentials": True}) is None
    assert not is_preflight(_cors_request("OPTIONS", **ask))  # no Origin: a plain OPTIONS
    assert is_preflight(_cors_request("OPTIONS", Origin="https://shop.example", **ask))


def test_a_template_reading_a_body_that_is_not_json_does_not_render(patched: None) -> None:
    with pytest.raises(TemplateError, match="not JSON"):
        _render("$input.json('$')", "plain text")
