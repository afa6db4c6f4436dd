"""REST and HTTP APIs in front of functions (issue 30, its first steps): implicit (``Api``
and ``HttpApi`` events) and explicit (a ``DefinitionBody``, an ``HttpApi`` with a stage)
APIs answer at their path-style local URL, which the stack's outputs hold, with the
Lambda proxy event (payload format 1.0, and 2.0 for HTTP APIs) and API Gateway's
answers; the routes alone are public.

The fixture app ``fixtures/apps/rest_api`` is the suite's own (its
``AWSTemplateFormatVersion`` is an unquoted date, as SAM CLI's own web template writes it).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.services.apigateway.endpoint import PAYLOAD_LIMIT
from localcloud.services.apigateway.formats import proxy_response, response_v2
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES
from localcloud.tests.test_resources_as_written import change_set, failures

APP = FIXTURES / "apps" / "rest_api" / "template.yaml"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(
        template=load(APP), stack_name="rest-a", region="eu-west-1", server=True
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


def test_the_outputs_hold_the_local_url_of_the_stacks_own_apis(cloud: LocalCloud) -> None:
    (api_id,) = [
        api["id"]
        for api in cloud.client("apigateway").get_rest_apis()["items"]
        if api["name"] == "rest-a"  # the implicit API's title: the stack's name
    ]
    base = f"{cloud.endpoint_url}/restapis/{api_id}/Prod/_user_request_"
    assert cloud.outputs["ImplicitUrl"] == base
    assert cloud.outputs["ExplicitUrl"].endswith("/v1/_user_request_/hello")
    # an execute-api URL of no API of the stack stays as written
    assert (
        cloud.outputs["NotAnApiUrl"] == "https://abc123.execute-api.us-east-1.amazonaws.com/Prod/"
    )


def test_path_parameters_and_multi_value_query_strings_and_headers_reach_the_function(
    cloud: LocalCloud,
) -> None:
    url = f"{cloud.outputs['ImplicitUrl']}/items/item-7?tag=a&tag=b&one=1"
    status, headers, body = call(url, headers={"X-Trace": "t-1"})
    assert status == 200, body
    seen = json.loads(body)
    assert seen["resource"] == "/items/{id}"
    assert seen["path"] == "/items/item-7"
    assert seen["httpMethod"] == "GET"
    assert seen["pathParameters"] == {"id": "item-7"}
    assert seen["queryStringParameters"] == {"tag": "b", "one": "1"}  # the last value
    assert seen["multiValueQueryStringParameters"] == {"tag": ["a", "b"], "one": ["1"]}
    assert seen["multiValueHeaders"]["x-trace"] == ["t-1"]
    assert seen["stage"] == "Prod"
    assert (seen["body"], seen["isBase64Encoded"], seen["stageVariables"]) == (None, False, None)
    assert headers["X-Single"] == "one"
    assert headers.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert headers["x-amzn-RequestId"]


def test_a_body_and_a_greedy_path_and_any_method(cloud: LocalCloud) -> None:
    status, _, body = call(f"{cloud.outputs['ImplicitUrl']}/items", "POST", b'{"id": "n-1"}')
    assert status == 200
    assert json.loads(json.loads(body)["body"]) == {"id": "n-1"}
    status, _, body = call(f"{cloud.outputs['ImplicitUrl']}/files/a/b/c.txt", "DELETE")
    seen = json.loads(body)
    assert (status, seen["resource"], seen["pathParameters"]) == (
        200,
        "/files/{proxy+}",
        {"proxy": "a/b/c.txt"},
    )


def test_a_base64_result_is_sent_as_bytes_to_a_client_accepting_a_binary_type(
    cloud: LocalCloud,
) -> None:
    url = f"{cloud.outputs['ImplicitUrl']}/files/data.bin"
    accepting = {"Accept": "application/octet-stream"}
    status, headers, body = call(url, headers=accepting)
    assert (status, headers["Content-Type"], body) == (
        201,
        "application/octet-stream",
        b"\x00\xffbinary",
    )
    # any other Accept: the base64 text, as API Gateway converts no content
    status, _, body = call(url, headers={"Accept": "application/json"})
    assert (status, body) == (201, base64.b64encode(b"\x00\xffbinary"))


def test_an_explicit_api_with_a_definition_body_and_stage_variables(cloud: LocalCloud) -> None:
    status, _, body = call(cloud.outputs["ExplicitUrl"])
    seen = json.loads(body)
    assert (status, seen["stage"], seen["stageVariables"]) == (200, "v1", {"colour": "blue"})


@pytest.mark.parametrize("how", ["raises", "no-status", "dict-body", "bare-string"])
def test_a_function_error_or_a_malformed_result_is_502(cloud: LocalCloud, how: str) -> None:
    status, _, body = call(f"{cloud.outputs['ImplicitUrl']}/broken/{how}")
    assert (status, json.loads(body)) == (502, {"message": "Internal server error"})


@pytest.mark.parametrize(
    "path", ["/nowhere", "/items", "/items/a/b", "/broken"]
)  # no resource, a resource without GET, too deep, a parent without a method
def test_an_unmatched_route_is_missing_authentication_token(cloud: LocalCloud, path: str) -> None:
    status, headers, body = call(f"{cloud.outputs['ImplicitUrl']}{path}")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    assert headers["x-amzn-ErrorType"] == "MissingAuthenticationTokenException"


def test_an_unknown_stage_is_missing_authentication_token(cloud: LocalCloud) -> None:
    url = cloud.outputs["ImplicitUrl"].replace("/Prod/", "/Staging/") + "/items/x"
    assert call(url)[0] == 403


def test_only_the_routes_are_unsigned_and_the_host_check_still_applies(cloud: LocalCloud) -> None:
    url = f"{cloud.outputs['ImplicitUrl']}/items/x"
    assert call(url)[0] == 200  # unsigned, as on AWS
    assert call(f"{cloud.endpoint_url}/restapis")[0] == 403  # the control plane: refused
    status, _, body = call(url, headers={"Host": "evil.example"})
    assert status == 403
    assert b"not a name this local cloud answers for" in body


@pytest.mark.parametrize(
    "result",
    [
        {"statusCode": 200, "body": "x", "extra": 1},  # a key the proxy format does not have
        {"statusCode": True},
        {"statusCode": 700},
        {"statusCode": 200, "body": "***", "isBase64Encoded": True},
        {"statusCode": 200, "multiValueHeaders": {"A": "not a list"}},
    ],
)
def test_results_api_gateway_refuses_are_malformed(result: dict[str, Any]) -> None:
    assert proxy_response(result) is None


def test_an_integration_the_local_cloud_does_not_run_is_refused_by_name(cloud: LocalCloud) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGateway::RestApi",
                "Properties": {
                    "Body": {
                        "swagger": "2.0",
                        "info": {"title": "http"},
                        "paths": {
                            "/x": {
                                "get": {
                                    "x-amazon-apigateway-integration": {
                                        "type": "http_proxy",
                                        "uri": "https://example.com/",
                                        "httpMethod": "GET",
                                    }
                                }
                            }
                        },
                    }
                },
            }
        },
    }
    name = f"http-{uuid.uuid4().hex[:6]}"
    change_set(cloud, name, json.dumps(body))  # refused when carried out, as on AWS
    reasons = [reason for logical_id, reason in failures(cloud, name) if logical_id == "Api"]
    assert any("Api.Body.paths./x.get" in r and "http_proxy" in r for r in reasons), reasons


def test_an_http_apis_2_0_event_and_a_bare_result_as_a_200(cloud: LocalCloud) -> None:
    assert "/$default/_user_request_/" in cloud.outputs["HttpUrl"]
    status, headers, body = call(
        f"{cloud.outputs['HttpUrl']}v2/x-1?tag=a&tag=b", headers={"Cookie": "c=1; d=2"}
    )
    assert (status, headers["Content-Type"]) == (200, "application/json")
    event = json.loads(body)  # the function returned the event itself, no statusCode
    assert (event["version"], event["routeKey"], event["rawPath"]) == (
        "2.0",
        "GET /v2/{id}",
        "/v2/x-1",
    )
    assert event["queryStringParameters"] == {"tag": "a,b"}  # joined with commas
    assert event["pathParameters"] == {"id": "x-1"}
    assert event["cookies"] == ["c=1", "d=2"]
    assert "cookie" not in event["headers"]
    assert event["requestContext"]["stage"] == "$default"
    assert event["requestContext"]["http"]["method"] == "GET"


def test_an_http_apis_1_0_integration_gets_the_1_0_event(cloud: LocalCloud) -> None:
    status, _, body = call(f"{cloud.outputs['HttpUrl']}v1/y-2?tag=a&tag=b")
    event = json.loads(body)
    assert (status, event["version"], event["pathParameters"]) == (200, "1.0", {"id": "y-2"})
    assert event["multiValueQueryStringParameters"] == {"tag": ["a", "b"]}


def test_an_http_apis_named_stage_and_its_variables(cloud: LocalCloud) -> None:
    assert cloud.outputs["BetaUrl"].endswith("/beta/_user_request_")
    status, _, body = call(f"{cloud.outputs['BetaUrl']}/ping", "PUT")
    event = json.loads(body)
    assert (status, event["routeKey"], event["rawPath"]) == (200, "ANY /ping", "/beta/ping")
    assert event["stageVariables"] == {"tier": "beta"}


def test_an_http_api_answers_404_and_500_as_api_gateway_does(cloud: LocalCloud) -> None:
    status, _, body = call(f"{cloud.outputs['HttpUrl']}nowhere")
    assert (status, json.loads(body)) == (404, {"message": "Not Found"})
    status, _, body = call(f"{cloud.outputs['HttpUrl']}fails")
    assert (status, json.loads(body)) == (500, {"message": "Internal Server Error"})


def test_a_2_0_result_with_cookies_or_a_bare_string() -> None:
    with_cookies = response_v2({"statusCode": 204, "cookies": ["a=1", "b=2"]})
    assert with_cookies is not None
    assert (with_cookies.status_code, with_cookies.headers.getlist("Set-Cookie")) == (
        204,
        ["a=1", "b=2"],
    )
    bare = response_v2("hello")
    assert bare is not None
    assert (bare.status_code, bare.get_data(), bare.mimetype) == (200, b"hello", "application/json")
    assert response_v2({"statusCode": 200, "cookies": "a=1"}) is None


def test_a_foreign_page_reaches_the_routes_as_on_aws_and_nothing_else(cloud: LocalCloud) -> None:
    """On a route the API answers the origin (here the function's own CORS header, which
    the browser then applies); the control plane and the view still refuse it."""
    origin = {"Origin": "https://shop.example", "Sec-Fetch-Site": "cross-site"}
    status, headers, _ = call(f"{cloud.outputs['ImplicitUrl']}/items/x", headers=origin)
    assert (status, headers["Access-Control-Allow-Origin"]) == (200, "https://shop.example")
    # a preflight to a route without an OPTIONS method: API Gateway's own answer
    status, _, body = call(f"{cloud.outputs['ImplicitUrl']}/items/x", "OPTIONS", headers=origin)
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    for elsewhere in ("/restapis", "/_localcloud/", "/"):
        status, _, body = call(f"{cloud.endpoint_url}{elsewhere}", headers=origin)
        assert status == 403, elsewhere
        assert b"refused" in body, elsewhere


def test_an_api_written_resource_by_resource(cloud: LocalCloud) -> None:
    assert cloud.outputs["HandUrl"].endswith("/live/_user_request_/orders")
    status, _, body = call(f"{cloud.outputs['HandUrl']}/o-1")
    seen = json.loads(body)
    assert (status, seen["resource"], seen["pathParameters"]) == (
        200,
        "/orders/{orderId}",
        {"orderId": "o-1"},
    )
    assert call(cloud.outputs["HandUrl"])[0] == 403  # /orders has no method


def test_an_api_whose_definition_is_a_file_of_the_app(cloud: LocalCloud) -> None:
    status, _, body = call(cloud.outputs["FileUrl"])
    assert (status, json.loads(body)["resource"]) == (200, "/from-file")


def test_sams_cors_answers_the_preflight_with_the_apis_headers(cloud: LocalCloud) -> None:
    origin = {"Origin": "https://shop.example", "Access-Control-Request-Method": "GET"}
    status, headers, body = call(cloud.outputs["ExplicitUrl"], "OPTIONS", headers=origin)
    assert (status, body) == (200, b"{}\n")
    assert headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert headers["Access-Control-Allow-Methods"] == "GET,OPTIONS"
    assert headers["Access-Control-Allow-Headers"] == "content-type,x-trace"


def test_a_mock_integration_that_is_not_static_is_refused_by_name(cloud: LocalCloud) -> None:
    mock = {
        "type": "mock",
        "requestTemplates": {"application/json": '{"statusCode": 200}'},
        "responses": {
            "default": {
                "statusCode": "200",
                "responseParameters": {
                    "method.response.header.X-Id": "integration.response.body.id"
                },
            }
        },
    }
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Api": {
                "Type": "AWS::ApiGateway::RestApi",
                "Properties": {
                    "Body": {
                        "swagger": "2.0",
                        "info": {"title": "mock"},
                        "paths": {"/x": {"options": {"x-amazon-apigateway-integration": mock}}},
                    }
                },
            }
        },
    }
    name = f"mock-{uuid.uuid4().hex[:6]}"
    change_set(cloud, name, json.dumps(body))
    reasons = [reason for logical_id, reason in failures(cloud, name) if logical_id == "Api"]
    assert any("Api.Body.paths./x.options" in r and "static" in r for r in reasons), reasons


# --- issue 47: the API's own origin, navigations sent there, the 10 MB payload quota --------


def api_id_of(url: str) -> str:
    """The API id of a path-style local URL."""
    return url.split("/restapis/")[1].split("/")[0]


def on_origin(cloud: LocalCloud, api_id: str, path: str) -> tuple[int, Any, bytes]:
    """``GET path`` on the API's own origin, ``{api-id}.execute-api.localhost:{port}``
    (reached on 127.0.0.1 with that ``Host``: this machine's resolver knows no
    ``*.localhost`` name, which browsers resolve themselves)."""
    connection = http.client.HTTPConnection("127.0.0.1", cloud.server_port, timeout=30)
    try:
        connection.request(
            "GET", path, headers={"Host": f"{api_id}.execute-api.localhost:{cloud.server_port}"}
        )
        answer = connection.getresponse()
        return answer.status, answer.headers, answer.read()
    finally:
        connection.close()


def test_a_rest_api_answers_on_its_own_origin_under_its_stage(cloud: LocalCloud) -> None:
    api_id = api_id_of(cloud.outputs["ImplicitUrl"])
    status, headers, body = on_origin(cloud, api_id, "/Prod/items/item-9")
    event = json.loads(body)
    assert (status, event["path"], event["pathParameters"]) == (
        200,
        "/items/item-9",
        {"id": "item-9"},
    )
    assert "Content-Security-Policy" not in headers  # a page of the API runs as on AWS
    status, _, body = on_origin(cloud, api_id, "/_localcloud/state.json")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})


def test_an_http_apis_default_stage_answers_at_its_origins_root(cloud: LocalCloud) -> None:
    status, _, body = on_origin(cloud, api_id_of(cloud.outputs["HttpUrl"]), "/v2/x-3")
    assert (status, json.loads(body)["rawPath"]) == (200, "/v2/x-3")


@pytest.mark.parametrize(
    ("output", "rest", "expected"),
    [
        ("ImplicitUrl", "/items/i-1?tag=a", "/Prod/items/i-1?tag=a"),
        ("HttpUrl", "v2/x-1", "/v2/x-1"),
        ("BetaUrl", "/ping", "/beta/ping"),
    ],
)
def test_a_browser_opening_a_path_style_url_is_sent_to_the_apis_origin(
    cloud: LocalCloud, output: str, rest: str, expected: str
) -> None:
    url = f"{cloud.outputs[output]}{rest}"
    navigation = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    connection = http.client.HTTPConnection("127.0.0.1", cloud.server_port, timeout=30)
    try:
        connection.request("GET", url.split(str(cloud.server_port), 1)[1], headers=navigation)
        answer = connection.getresponse()
        answer.read()
    finally:
        connection.close()
    origin = f"http://{api_id_of(url)}.execute-api.localhost:{cloud.server_port}"
    assert (answer.status, answer.headers["Location"]) == (307, origin + expected)
    # a program calling the same URL is answered there, sandboxed
    status, headers, _ = call(url)
    assert status == 200
    assert headers["Content-Security-Policy"].startswith("sandbox")


def test_a_leading_double_slash_is_one_slash_to_the_guard_and_the_route_alike(
    cloud: LocalCloud,
) -> None:
    """Python's HTTP server collapses a leading ``//`` before any app sees the request
    (gh-87389), so the guard's decision and the route's are made on the same path."""
    path = urllib.parse.urlsplit(f"{cloud.outputs['ImplicitUrl']}/items/i-2").path
    connection = http.client.HTTPConnection("127.0.0.1", cloud.server_port, timeout=30)
    try:
        connection.request("GET", f"/{path}")
        answer = connection.getresponse()
        status, body = answer.status, answer.read()
    finally:
        connection.close()
    assert (status, json.loads(body)["path"]) == (200, "/items/i-2")


@pytest.mark.parametrize("api_id", ["evil.example%23", "evil.example%3F", "nosuchapi1"])
def test_a_navigation_to_no_api_is_never_redirected(cloud: LocalCloud, api_id: str) -> None:
    """Found in review: the id went into the ``Location``'s host as written, so
    ``evil.example%23`` sent a browser to ``http://evil.example#.execute-api…``."""
    navigation = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    connection = http.client.HTTPConnection("127.0.0.1", cloud.server_port, timeout=30)
    try:
        connection.request("GET", f"/restapis/{api_id}/Prod/_user_request_/", headers=navigation)
        answer = connection.getresponse()
        status, location, body = answer.status, answer.headers["Location"], answer.read()
    finally:
        connection.close()
    assert (status, location) == (403, None)
    assert json.loads(body) == {"message": "Missing Authentication Token"}


def test_a_body_over_api_gateways_10_mb_quota_is_refused_before_it_is_read(
    cloud: LocalCloud,
) -> None:
    """Issue 47, finding 4: a route read a body of any size into the server's memory. The
    body is declared and never sent: the answer comes without it."""
    url = urllib.parse.urlsplit(f"{cloud.outputs['ImplicitUrl']}/items")
    connection = http.client.HTTPConnection("127.0.0.1", cloud.server_port, timeout=30)
    try:
        connection.putrequest("POST", url.path)
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(PAYLOAD_LIMIT + 1))
        connection.endheaders()
        answer = connection.getresponse()
        status, body = answer.status, answer.read()
    finally:
        connection.close()
    assert (status, json.loads(body)) == (413, {"message": "Request Too Long"})


def test_a_body_with_two_lengths_is_refused_before_it_is_read(cloud: LocalCloud) -> None:
    """Found by the held-back attacks: chunks behind a ``Content-Length: 5`` passed the
    quota's check on the declared length, and werkzeug then read all 200 MB of chunks
    (RFC 9112, section 6.1: a server may refuse a request with both)."""
    path = urllib.parse.urlsplit(f"{cloud.outputs['ImplicitUrl']}/items").path
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{cloud.server_port}\r\n"
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", cloud.server_port), timeout=30) as connection:
        connection.sendall(head.encode() + b"5\r\nhello\r\n")  # more chunks would follow
        answer = connection.makefile("rb").readline()
    assert answer.startswith(b"HTTP/1.1 400")


def test_a_chunked_body_over_the_quota_is_cut_off_at_it(cloud: LocalCloud) -> None:
    """A body sent in chunks declares no length: it is read up to the quota, no further."""
    url = f"{cloud.outputs['ImplicitUrl']}/items"
    chunk = b"x" * (1024 * 1024)
    chunks = [chunk] * (PAYLOAD_LIMIT // len(chunk)) + [b"y"]
    chunked = {"Transfer-Encoding": "chunked"}
    status, _, body = call(url, "POST", iter(chunks), chunked)  # type: ignore[arg-type]
    assert (status, json.loads(body)) == (413, {"message": "Request Too Long"})
