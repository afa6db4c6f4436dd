"""What the server holds of request bodies (issue 47, finding 4 and the held-back attacks):
each bounded by its destination before it is read, all of them together while they are
handled. Through werkzeug's test client and a recording app standing for the AWS APIs; a
served API's route is in test_rest_apis.py."""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
from werkzeug.test import Client
from werkzeug.wrappers import Response

from localcloud.server.bodies import DEFAULT_SERVICE_BODY_BYTES, SERVICE_BODY_BYTES, InFlight
from localcloud.server.guard import Guard, PublicRoutes
from localcloud.server.policy import Policy

PORT = 5099
HOST = f"127.0.0.1:{PORT}"


def signed(service: str) -> dict[str, str]:
    return {
        "Host": HOST,
        "Authorization": f"AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/{service}/"
        "aws4_request, SignedHeaders=host, Signature=0",
        "X-Amz-Target": "AmazonSQS.SendMessage",
        "Content-Type": "application/x-amz-json-1.0",
    }


class Backend:
    """Answers 200 with the length of the body it read; ``hold`` keeps it answering until
    the test lets it go."""

    def __init__(self) -> None:
        self.read: list[int] = []
        self.hold = threading.Event()
        self.holding = threading.Event()
        self.hold.set()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        self.read.append(len(body))
        self.holding.set()
        self.hold.wait(30)  # a hang guard far above the test's wait
        return Response(str(len(body)))(environ, start_response)


@pytest.fixture
def backend() -> Backend:
    return Backend()


@pytest.fixture
def guard(backend: Backend) -> Guard:
    return Guard(backend, Policy.for_server("127.0.0.1", PORT), report=lambda line: None)


def declared(size: int) -> dict[str, Any]:
    """An environ declaring ``size`` bytes of body that it does not hold (the guard must
    refuse it without reading)."""
    return {"CONTENT_LENGTH": str(size), "wsgi.input": io.BytesIO(b"")}


def test_a_signed_call_over_its_services_bound_is_refused_unread(
    guard: Guard, backend: Backend
) -> None:
    """A signed 200 MB SendMessage was read whole (+772 MB) before SQS refused it."""
    response = Client(guard).post(
        "/", headers=signed("sqs"), environ_overrides=declared(DEFAULT_SERVICE_BODY_BYTES + 1)
    )
    assert response.status_code == 413
    assert json.loads(response.text) == {
        "__type": "RequestEntityTooLargeException",
        "message": f"Request must be smaller than {DEFAULT_SERVICE_BODY_BYTES} bytes",
    }
    assert backend.read == []


def test_lambdas_bound_leaves_room_for_a_50_mb_zip_in_json(guard: Guard) -> None:
    limit = SERVICE_BODY_BYTES["lambda"]
    assert limit is not None
    assert limit > 50 * 1024 * 1024 * 4 // 3  # base64 of Lambda's direct-upload quota
    response = Client(guard).post(
        "/2015-03-31/functions", headers=signed("lambda"), environ_overrides=declared(limit + 1)
    )
    assert response.status_code == 413


def test_an_s3_object_is_not_bounded_here(guard: Guard, backend: Backend) -> None:
    body = b"x" * (DEFAULT_SERVICE_BODY_BYTES + 1)
    response = Client(guard).put("/bucket/key", headers=signed("s3"), data=body)
    assert response.status_code == 200
    assert backend.read == [len(body)]


def test_a_chunked_body_is_read_up_to_its_bound_and_handed_on_with_its_length(
    guard: Guard, backend: Backend
) -> None:
    chunks = io.BytesIO(b"a" * 1000)
    overrides = {"wsgi.input": chunks, "wsgi.input_terminated": True, "CONTENT_LENGTH": ""}
    response = Client(guard).post("/", headers=signed("sqs"), environ_overrides=overrides)
    assert (response.status_code, backend.read) == (200, [1000])


def test_bodies_past_what_the_server_holds_at_once_are_throttled_until_one_ends(
    guard: Guard, backend: Backend
) -> None:
    """Forty concurrent 10 MB bodies, each within its bound, took the server past 1.5 GB."""
    guard.in_flight = InFlight(capacity=1000)
    backend.hold.clear()
    first: list[int] = []

    def hold() -> None:
        response = Client(guard).post("/", headers=signed("sqs"), data=b"a" * 800)
        first.append(response.status_code)
        response.close()  # as the server does once the answer is written

    holder = threading.Thread(target=hold)
    holder.start()
    assert backend.holding.wait(30)

    throttled = Client(guard).post("/", headers=signed("sqs"), data=b"b" * 300)
    backend.hold.set()
    holder.join(30)
    after = Client(guard).post("/", headers=signed("sqs"), data=b"c" * 300)

    assert throttled.status_code == 429
    assert json.loads(throttled.text) == {
        "__type": "ThrottlingException",
        "message": "Rate exceeded",
    }
    assert (first, after.status_code) == ([200], 200)
    assert backend.read == [800, 300]


def test_a_body_larger_than_the_whole_capacity_still_fits_an_idle_server() -> None:
    in_flight = InFlight(capacity=100)
    assert in_flight.take(500)
    assert not in_flight.take(1)
    in_flight.give(500)
    assert in_flight.take(1)


def test_a_routes_body_counts_as_many_times_as_answering_it_holds_it() -> None:
    """An API's route makes several copies of its body (an event, its base64, its JSON):
    forty concurrent 10 MB bodies, each counted once, took the server 1.2 GB past its bound
    (the held-back attacks)."""
    api, aws = Backend(), Backend()
    public = PublicRoutes(
        origin=lambda host: False,
        route=lambda path: path.startswith("/restapis/"),
        app=api,
        copies=4,
        throttled=lambda: Response('{"message":"Too Many Requests"}', 429),
    )
    guard = Guard(aws, Policy.for_server("127.0.0.1", PORT), report=print, public=public)
    guard.in_flight = InFlight(capacity=1000)
    api.hold.clear()
    route = "/restapis/a/b/_user_request_/upload"
    held = threading.Thread(
        target=lambda: Client(guard).post(route, headers={"Host": HOST}, data=b"a" * 200).close()
    )
    held.start()  # 800 held
    assert api.holding.wait(30)

    signed_call = Client(guard).post("/", headers=signed("sqs"), data=b"b" * 100)  # 900
    second_route = Client(guard).post(route, headers={"Host": HOST}, data=b"c" * 100)  # 1,300
    api.hold.set()
    held.join(30)

    assert signed_call.status_code == 200
    assert (second_route.status_code, second_route.text) == (429, '{"message":"Too Many Requests"}')
