"""The hook around the server's answers (``localcloud.server.hooks``): a request answered
with another answer, its connection closed before or after the service handled it, as a
caller's SDK sees each over HTTP; none of it while no hook is set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError

from localcloud.account import LocalCloud
from localcloud.server.hooks import Answer, DropConnection, ServedRequest, around_served
from localcloud.tests.support.cloud import started

KEY = "ASIAHOOKTEST00000001"
"""The access key the hooked caller signs with (the hook tells callers apart by it)."""


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        running.client("dynamodb").create_table(
            TableName="hooked",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield running


@pytest.fixture
def hook() -> Iterator[Callable[[Callable[[ServedRequest, Callable[[], Answer]], Answer]], None]]:
    yield around_served
    around_served(None)


def caller(cloud: LocalCloud) -> Any:
    """A DynamoDB client of another process's kind: over HTTP, signed with :data:`KEY`,
    no retries (each request's fate is seen as it is)."""
    return boto3.client(
        "dynamodb",
        endpoint_url=cloud.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=KEY,
        aws_secret_access_key="secret",
        config=Config(retries={"total_max_attempts": 1}),
    )


def stored(cloud: LocalCloud, item_id: str) -> bool:
    answer = cloud.client("dynamodb").get_item(TableName="hooked", Key={"id": {"S": item_id}})
    return "Item" in answer


def put(client: Any, item_id: str) -> None:
    client.put_item(TableName="hooked", Item={"id": {"S": item_id}})


def test_a_request_closed_after_it_was_handled_is_stored_and_its_caller_sees_the_drop(
    cloud: LocalCloud, hook: Callable[..., None]
) -> None:
    seen: list[tuple[str | None, str]] = []

    def lose_the_answer(request: ServedRequest, handle: Callable[[], Answer]) -> Answer:
        seen.append((request.access_key, request.target))
        handle()
        raise DropConnection

    hook(lose_the_answer)
    with pytest.raises(ConnectionClosedError):
        put(caller(cloud), "after")
    hook(None)
    assert seen == [(KEY, "DynamoDB_20120810.PutItem")]
    assert stored(cloud, "after")


def test_a_request_closed_before_it_was_handled_stores_nothing(
    cloud: LocalCloud, hook: Callable[..., None]
) -> None:
    def drop(request: ServedRequest, handle: Callable[[], Answer]) -> Answer:
        raise DropConnection

    hook(drop)
    with pytest.raises(ConnectionClosedError):
        put(caller(cloud), "before")
    hook(None)
    assert not stored(cloud, "before")


def test_a_hook_answers_in_the_service_s_place_and_sees_the_whole_body(
    cloud: LocalCloud, hook: Callable[..., None]
) -> None:
    bodies: list[bytes] = []

    def throttle(request: ServedRequest, handle: Callable[[], Answer]) -> Answer:
        bodies.append(request.body)
        body = b'{"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"}'
        return Answer(400, [("Content-Type", "application/x-amz-json-1.0")], body)

    hook(throttle)
    with pytest.raises(ClientError) as raised:
        put(caller(cloud), "throttled")
    hook(None)
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert b'"throttled"' in bodies[0]
    assert not stored(cloud, "throttled")


def test_a_hook_that_only_handles_changes_nothing_and_no_hook_is_the_default(
    cloud: LocalCloud, hook: Callable[..., None]
) -> None:
    statuses: list[int] = []

    def watch(request: ServedRequest, handle: Callable[[], Answer]) -> Answer:
        answer = handle()
        statuses.append(answer.status)
        return answer

    hook(watch)
    put(caller(cloud), "watched")
    hook(None)
    put(caller(cloud), "unwatched")
    assert statuses == [200]
    assert stored(cloud, "watched")
    assert stored(cloud, "unwatched")
