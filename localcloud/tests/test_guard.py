"""The guard's rules, request by request, through werkzeug's test client (the browser
proofs are in test_server_security_browser.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from werkzeug.test import Client
from werkzeug.wrappers import Response

from localcloud.server.guard import Guard
from localcloud.server.policy import Policy

PORT = 5099
HOST = f"127.0.0.1:{PORT}"
SIGNED = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/s3/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0123abcd"
}


def backend(environ: dict[str, Any], start_response: Any) -> Any:
    """Stands for moto: answers every request it is let through with an HTML body."""
    return Response("<script>document.title='ran'</script>", 200, mimetype="text/html")(
        environ, start_response
    )


@pytest.fixture
def said() -> list[str]:
    return []


@pytest.fixture
def client(said: list[str]) -> Client:
    guard = Guard(backend, Policy.for_server("127.0.0.1", PORT), report=said.append)
    return Client(guard)


def test_an_aws_answer_is_sandboxed_so_an_object_served_as_html_never_runs_as_this_origin(
    client: Client,
) -> None:
    forged = (
        "/bucket/note.txt?response-content-type=text/html"
        "&X-Amz-Credential=a/2/us-east-1/s3/aws4_request&X-Amz-Signature=x"
    )
    response = client.get(forged, headers={"Host": HOST})
    assert response.status_code == 200  # a presigned-looking GET is let through …
    policy = response.headers["Content-Security-Policy"]
    assert policy.startswith("sandbox")  # … and runs in an opaque origin, no scripts
    assert "default-src 'none'" in policy


def test_a_presigned_head_of_an_object_is_let_through(client: Client) -> None:
    presigned = "/bucket/key?X-Amz-Credential=a/2/us-east-1/s3/aws4_request&X-Amz-Signature=x"
    assert client.head(presigned, headers={"Host": HOST}).status_code == 200
    assert client.post(presigned, headers={"Host": HOST}).status_code == 403


def test_each_kind_of_refusal_is_said_once_however_many_origins_try(
    client: Client, said: list[str]
) -> None:
    for n in range(50):
        origin = f"http://o{n}.evil.test"
        assert client.get("/", headers={"Host": HOST, "Origin": origin}).status_code == 403
        assert client.get(f"/p{n}", headers={"Host": HOST}).status_code == 403
    assert len([line for line in said if "cross-origin" in line]) == 1
    assert len([line for line in said if "unsigned" in line]) == 1


def test_a_signed_call_reaches_the_apis(client: Client) -> None:
    assert client.post("/", headers={"Host": HOST, **SIGNED}).status_code == 200


# --- a malformed Authorization header: AWS's error, in the caller's protocol --------------

JSON_CALL = {"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": "application/x-amz-json-1.0"}
QUERY_CALL = {"Content-Type": "application/x-www-form-urlencoded"}


def answer(response: Any) -> dict[str, Any]:
    """The JSON body of an AWS error (``application/x-amz-json-1.0`` or ``application/json``)."""
    found: dict[str, Any] = json.loads(response.text)
    return found


def scoped(region: str, service: str = "sqs") -> str:
    return (
        f"AWS4-HMAC-SHA256 Credential=x/20261201/{region}/{service}/aws4_request, "
        "SignedHeaders=host, Signature=0"
    )


def test_a_header_missing_its_parts_is_incomplete_signature_naming_each_part(
    client: Client,
) -> None:
    response = client.post(
        "/", headers={"Host": HOST, "Authorization": "AWS4-HMAC-SHA256 garbage", **JSON_CALL}
    )

    assert response.status_code == 400
    assert response.headers["x-amzn-ErrorType"] == "IncompleteSignature"
    assert answer(response) == {
        "__type": "IncompleteSignature",
        "message": "Authorization header requires 'Credential' parameter. Authorization header "
        "requires 'Signature' parameter. Authorization header requires 'SignedHeaders' "
        "parameter. Authorization=AWS4-HMAC-SHA256 garbage",
    }


def test_a_header_missing_only_its_signature_names_only_that(client: Client) -> None:
    header = "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/sqs/aws4_request, SignedHeaders=host"
    response = client.post("/", headers={"Host": HOST, "Authorization": header, **JSON_CALL})

    assert response.status_code == 400
    assert str(answer(response)["message"]).startswith(
        "Authorization header requires 'Signature' parameter. Authorization="
    )


def test_a_scope_without_its_terminator_is_incomplete_signature(client: Client) -> None:
    header = scoped("us-east-1").replace("/aws4_request", "/aws5_request")
    response = client.post("/", headers={"Host": HOST, "Authorization": header, **JSON_CALL})

    assert (response.status_code, answer(response)["__type"]) == (400, "IncompleteSignature")
    assert answer(response)["message"] == (
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'."
    )


def test_a_scope_in_a_region_that_does_not_exist_is_invalid_signature(client: Client) -> None:
    response = client.post(
        "/", headers={"Host": HOST, "Authorization": scoped("xx-nowhere-1"), **JSON_CALL}
    )

    assert response.status_code == 403
    assert answer(response) == {
        "__type": "InvalidSignatureException",
        "message": "Credential should be scoped to a valid region.",
    }


def test_the_query_protocol_says_signature_does_not_match_in_xml(client: Client) -> None:
    response = client.post(
        "/",
        headers={"Host": HOST, "Authorization": scoped("xx-nowhere-1", "iam"), **QUERY_CALL},
        data="Action=ListRoles&Version=2010-05-08",
    )

    assert response.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in response.text
    assert "<Message>Credential should be scoped to a valid region.</Message>" in response.text


def test_s3_says_the_authorization_header_is_malformed(client: Client) -> None:
    response = client.get(
        "/bucket/key", headers={"Host": HOST, "Authorization": scoped("xx-nowhere-1", "s3")}
    )

    assert response.status_code == 400
    assert "<Code>AuthorizationHeaderMalformed</Code>" in response.text
    assert "the region 'xx-nowhere-1' is wrong" in response.text


def test_lambdas_rest_json_answer_carries_the_error_type_header(client: Client) -> None:
    response = client.get(
        "/2015-03-31/functions/",
        headers={"Host": HOST, "Authorization": "AWS4-HMAC-SHA256 Credential=x"},
    )

    assert response.status_code == 400
    assert response.headers["x-amzn-ErrorType"] == "IncompleteSignature"
    assert str(answer(response)["message"]).startswith("Authorization header requires")


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-2", "ap-southeast-7", "cn-north-1"])
def test_every_real_region_and_a_sigv4a_region_set_pass(client: Client, region: str) -> None:
    assert (
        client.post(
            "/", headers={"Host": HOST, "Authorization": scoped(region), **JSON_CALL}
        ).status_code
        == 200
    )
    sigv4a = (
        "AWS4-ECDSA-P256-SHA256 Credential=x/20261201/sqs/aws4_request, "
        "SignedHeaders=host;x-amz-region-set, Signature=0"
    )
    assert (
        client.post(
            "/",
            headers={"Host": HOST, "Authorization": sigv4a, "X-Amz-Region-Set": "*", **JSON_CALL},
        ).status_code
        == 200
    )


def test_a_malformed_header_never_reaches_the_service_and_is_said_once(
    client: Client, said: list[str]
) -> None:
    for _ in range(3):
        response = client.post(
            "/", headers={"Host": HOST, "Authorization": "AWS4-HMAC-SHA256 x", **JSON_CALL}
        )
        assert "<script>" not in response.text

    assert [line for line in said if "Authorization" in line] == [
        "[refused] malformed Authorization header (said once: further refusals of this kind "
        "are not printed)"
    ]
