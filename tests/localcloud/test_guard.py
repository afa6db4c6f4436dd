"""The guard's rules, request by request, through werkzeug's test client (the browser
proofs are in test_server_security_browser.py)."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client
from werkzeug.wrappers import Response

from localcloud.server.guard import Guard, Policy

PORT = 5099
HOST = f"127.0.0.1:{PORT}"
SIGNED = {"Authorization": "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/s3/aws4_request"}


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
