"""One decision on one path (issue 47, finding 1): the guard decides where a request goes on
the path every app behind it reads, hands it to that app itself, and refuses with 400 a
path that servers read two ways when it would serve it unsigned. Through werkzeug's test
client, with three recording apps standing for the AWS APIs, the live view and the APIs'
routes; the browser proofs are in test_server_security_browser.py. (A leading ``//`` never
reaches the guard: Python's HTTP server collapses it before any app sees the request,
gh-87389; test_rest_apis.py shows the route served there.)"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest
from werkzeug.test import Client
from werkzeug.wrappers import Response

from localcloud.server.guard import Destination, Guard, PublicRoutes
from localcloud.server.policy import Policy
from localcloud.server.request_path import ambiguity

PORT = 5099
HOST = f"127.0.0.1:{PORT}"
BUCKET_HOST = f"private-bucket.localhost:{PORT}"
API_HOST = f"a1b2c3d4e5.execute-api.localhost:{PORT}"
SIGNED = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/s3/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0123abcd"
}


class Recorder:
    """A WSGI app that answers 200 and records the path it was given."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.paths: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.paths.append(environ["SCRIPT_NAME"] + environ["PATH_INFO"])
        return Response(
            f"<script>document.title='{self.name}'</script>", 200, mimetype="text/html"
        )(environ, start_response)


def send(client: Client, raw: str, host: str, method: str = "GET", **headers: str) -> Any:
    """A request whose target is ``raw``, as werkzeug's server gives it to the app:
    ``REQUEST_URI`` as sent, ``PATH_INFO`` percent-decoded once (the test client would
    read a leading ``//`` as a host name)."""
    decoded = unquote(raw).encode().decode("latin-1")  # PEP 3333's native string
    return client.open(
        "/",
        method=method,
        headers={"Host": host, **headers},
        data=b"x",
        environ_overrides={"PATH_INFO": decoded, "REQUEST_URI": raw, "RAW_URI": raw},
    )


@pytest.fixture
def apps() -> dict[str, Recorder]:
    return {name: Recorder(name) for name in ("aws", "view", "public")}


@pytest.fixture
def client(apps: dict[str, Recorder]) -> Client:
    public = PublicRoutes(
        origin=lambda host: host.endswith(f".execute-api.localhost:{PORT}"),
        route=lambda path: path.startswith("/restapis/") and "/_user_request_" in path,
        app=apps["public"],
    )
    guard = Guard(
        apps["aws"],
        Policy.for_server("127.0.0.1", PORT),
        report=lambda line: None,
        view=apps["view"],
        public=public,
    )
    return Client(guard)


# The attack of the finding, and its kind: a path the guard once read as "an API's route"
# or "the view" (no signature needed) while the emulator read it as an S3 object key.
AMBIGUOUS = [
    pytest.param("/%2Frestapis/a/b/_user_request_/planted", id="encoded slash before a route"),
    pytest.param("/%2F_localcloud/loot", id="encoded slash before the view"),
    pytest.param("/%2f_localcloud/loot", id="lower-case encoded slash"),
    pytest.param("/restapis/a//b/_user_request_/planted", id="empty segment in a route"),
    pytest.param("/_localcloud//loot", id="empty segment in the view"),
    pytest.param("/_localcloud/../restapis/a/b/_user_request_/x", id="dot-dot out of the view"),
    pytest.param("/_localcloud/%2E%2E/loot", id="encoded dot-dot"),
    pytest.param("/restapis/a/b/_user_request_/..%2F..%2Floot", id="encoded slash in a route"),
    pytest.param("/restapis/a/b/_user_request_/./x", id="dot segment in a route"),
    pytest.param("/_localcloud%5C..%5Cloot", id="encoded backslash"),
    pytest.param("/restapis/a/b/_user_request_/a%00b", id="an encoded NUL"),
]


@pytest.mark.parametrize("path", AMBIGUOUS)
@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_an_unsigned_request_on_an_ambiguous_path_is_refused_and_reaches_no_app(
    client: Client, apps: dict[str, Recorder], path: str, method: str
) -> None:
    response = send(client, path, BUCKET_HOST, method)
    assert response.status_code == 400
    assert "is ambiguous" in response.text
    assert [app.paths for app in apps.values()] == [[], [], []]


@pytest.mark.parametrize("path", AMBIGUOUS)
def test_an_ambiguous_path_on_an_apis_own_origin_is_refused_too(
    client: Client, apps: dict[str, Recorder], path: str
) -> None:
    assert send(client, path, API_HOST).status_code == 400
    assert apps["public"].paths == []


def test_a_signed_call_keeps_its_path_as_sent(client: Client, apps: dict[str, Recorder]) -> None:
    """S3 keys may hold ``//`` and ``..``: a signed call's path is the service's business."""
    response = send(client, "/bucket/a//b/../c", HOST, **SIGNED)
    assert response.status_code == 200
    assert apps["aws"].paths == ["/bucket/a//b/../c"]


def test_a_signed_request_on_an_ambiguous_view_path_is_refused(
    client: Client, apps: dict[str, Recorder]
) -> None:
    response = send(client, "/_localcloud/../x", HOST, **SIGNED)
    assert response.status_code == 400
    assert [app.paths for app in apps.values()] == [[], [], []]


@pytest.mark.parametrize(
    ("host", "path", "reaches"),
    [
        (HOST, "/restapis/a1/Prod/_user_request_/hello", "public"),
        (BUCKET_HOST, "/restapis/a1/Prod/_user_request_/hello", "public"),
        (API_HOST, "/Prod/hello", "public"),
        (API_HOST, "/_localcloud/state.json", "public"),  # every path of an API's origin
        (API_HOST, "/moto-api/reset", "public"),
        (HOST, "/_localcloud/state.json", "view"),
        (HOST, "/_localcloud", "view"),
    ],
)
def test_each_destination_is_reached_by_the_one_app_the_guard_decided_on(
    client: Client, apps: dict[str, Recorder], host: str, path: str, reaches: str
) -> None:
    assert client.get(path, headers={"Host": host}).status_code == 200
    assert {name: app.paths for name, app in apps.items() if app.paths} == {reaches: [path]}


def test_the_view_is_mounted_with_its_prefix_in_script_name(client: Client) -> None:
    environs: list[dict[str, Any]] = []

    def view(environ: dict[str, Any], start_response: Any) -> Any:
        environs.append(dict(environ))
        return Response("ok")(environ, start_response)

    guard = Guard(Recorder("aws"), Policy.for_server("127.0.0.1", PORT), report=print, view=view)
    Client(guard).get("/_localcloud/state.json", headers={"Host": HOST})
    assert [(e["SCRIPT_NAME"], e["PATH_INFO"]) for e in environs] == [
        ("/_localcloud", "/state.json")
    ]


def test_a_page_on_an_apis_own_origin_is_not_sandboxed_and_one_on_the_control_plane_is(
    client: Client,
) -> None:
    """Issue 47, finding 9: on its own origin an API's page runs its scripts, as on AWS;
    the same route on the control plane's origin stays sandboxed."""
    own = client.get("/Prod/", headers={"Host": API_HOST})
    path_style = client.get("/restapis/a1/Prod/_user_request_/", headers={"Host": HOST})
    assert "Content-Security-Policy" not in own.headers
    assert path_style.headers["Content-Security-Policy"].startswith("sandbox")


@pytest.mark.parametrize(
    ("host", "path", "destination"),
    [
        (API_HOST, "/anything", Destination.API_ORIGIN),
        (HOST, "/restapis/x/y/_user_request_", Destination.API_ROUTE),
        (HOST, "/_localcloud/", Destination.VIEW),
        (HOST, "/_localcloudy", Destination.AWS),
        (HOST, "/moto-api/reset", Destination.MOTO_API),
        (HOST, "/x/_localcloud/", Destination.AWS),
        (BUCKET_HOST, "/x/restapis/x/y/_user_request_", Destination.AWS),
    ],
)
def test_the_destination_is_decided_on_the_path_as_it_is(
    client: Client, host: str, path: str, destination: Destination
) -> None:
    guard = client.application
    assert isinstance(guard, Guard)
    assert guard.destination(host, path) is destination


@pytest.mark.parametrize(
    "path",
    ["/", "/_localcloud/", "/restapis/a/b/_user_request_/items/42", "/bucket/key.txt", ""],
)
def test_a_plain_path_is_not_ambiguous(path: str) -> None:
    assert ambiguity({"PATH_INFO": path, "REQUEST_URI": path}) is None
