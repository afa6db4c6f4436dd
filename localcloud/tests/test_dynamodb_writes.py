"""Every PutItem, UpdateItem and DeleteItem is recorded from the DynamoDB call itself, for
any caller's code (issue 20, part 5): the condition as written, Accepted or the error
code, the item before and after, and which function made it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from localcloud.account import FAKE_CREDENTIALS, LocalCloud
from localcloud.services.dynamodb import patches as dynamodb_patches
from localcloud.state.history import plain_item
from localcloud.tests.support.races import widened_check_to_write


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud()


def writes(cloud: LocalCloud) -> list[dict[str, Any]]:
    """The recorded writes, oldest first."""
    return list(reversed(cloud.view_data({})["writes"]))


def test_a_conditional_put_and_its_refused_repeat(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["ItemsTableName"]
    item = {"id": {"S": "w-1"}, "quantity": {"N": "4"}, "total": {"N": "1100"}}
    condition = {
        "ConditionExpression": "attribute_not_exists(#k)",
        "ExpressionAttributeNames": {"#k": "id"},
    }
    dynamodb.put_item(TableName=table, Item=item, **condition)
    with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
        dynamodb.put_item(TableName=table, Item={**item, "quantity": {"N": "5"}}, **condition)

    accepted, refused = writes(cloud)[-2:]
    stored = {"id": "w-1", "quantity": 4, "total": 1100}
    assert accepted["condition"] == refused["condition"] == "attribute_not_exists(id)"
    assert (accepted["outcome"], accepted["before"], accepted["after"]) == (
        "Accepted",
        None,
        stored,
    )
    assert refused["outcome"] == "ConditionalCheckFailedException"
    assert refused["before"] == refused["after"] == stored  # the item kept unchanged
    assert refused["function"] is None  # this test's own client, not a function
    assert (refused["table"], refused["key"]) == (table, "w-1")


def test_an_update_and_a_delete_show_the_item_before_and_after(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["TriesTableName"]
    for _ in range(2):
        dynamodb.update_item(
            TableName=table,
            Key={"id": {"S": "w-2"}},
            UpdateExpression="ADD tries :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    dynamodb.delete_item(TableName=table, Key={"id": {"S": "w-2"}})

    first, second, deleted = writes(cloud)[-3:]
    assert [w["operation"] for w in (first, second, deleted)] == [
        "UpdateItem",
        "UpdateItem",
        "DeleteItem",
    ]
    assert (first["before"], first["after"]) == (None, {"id": "w-2", "tries": 1})
    assert (second["before"], second["after"]) == (first["after"], {"id": "w-2", "tries": 2})
    assert (deleted["before"], deleted["after"]) == (second["after"], None)
    assert first["condition"] is None


def test_a_write_by_a_function_names_the_function_its_request_and_message(
    cloud: LocalCloud,
) -> None:
    cloud.client("sqs").send_message(
        QueueUrl=cloud.outputs["TaskQueueUrl"], MessageBody='{"id": "w-3", "quantity": 2}'
    )
    (outcome,) = [o for o in cloud.drain(timeout_s=30) if o.invocation is not None]

    (write,) = [w for w in writes(cloud) if w["key"] == "w-3"]
    assert write["function"] == cloud.outputs["ConsumerFunctionName"]
    assert write["request_id"] == outcome.invocation.request_id
    assert write["source"].startswith("message ")
    assert write["condition"] == "attribute_not_exists(id)"


def test_plain_items_read_every_attribute_kind() -> None:
    item = {
        "id": {"S": "x"},
        "n": {"N": "1.5"},
        "ss": {"SS": ["b", "a"]},
        "m": {"M": {"k": {"N": "2"}}},
        "l": {"L": [{"S": "v"}, {"NULL": True}]},
        "flag": {"BOOL": True},
    }
    assert plain_item(item) == {
        "id": "x",
        "flag": True,
        "l": ["v", None],
        "m": {"k": 2},
        "n": "1.5",
        "ss": ["a", "b"],
    }


def test_writes_of_two_functions_run_in_process_each_name_their_own(cloud: LocalCloud) -> None:
    """Functions deployed from source share this process's boto3 default session (and so
    its credentials): each write still names the invocation that made it."""
    cloud.client("sqs").send_message(
        QueueUrl=cloud.outputs["TaskQueueUrl"], MessageBody='{"id": "w-q", "quantity": 1}'
    )
    (queued,) = [o for o in cloud.drain(timeout_s=30) if o.invocation is not None]
    worker = cloud.function("TaskFunction")
    flowed = worker.invoke({"id": "w-f", "quantity": 1})

    (queue_write,) = [w for w in writes(cloud) if w["key"] == "w-q"]
    flow_writes = [w for w in writes(cloud) if w["key"] == "w-f"]
    assert queue_write["function"] == cloud.outputs["ConsumerFunctionName"]
    assert queue_write["request_id"] == queued.invocation.request_id
    assert len(flow_writes) == 2  # the tries counter's UpdateItem, the job's PutItem
    for write in flow_writes:
        assert write["function"] == cloud.outputs["TaskFunctionName"]
        assert write["request_id"] == flowed.request_id


def test_a_listener_that_fails_never_changes_the_answer_of_a_write(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(call: Any) -> None:
        raise RuntimeError("a listener's own bug")

    monkeypatch.setattr(dynamodb_patches, "WRITE_LISTENERS", [broken])
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["ItemsTableName"]
    item = {"id": {"S": "w-4"}, "quantity": {"N": "1"}}

    dynamodb.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(id)")
    with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
        dynamodb.put_item(
            TableName=table, Item=item, ConditionExpression="attribute_not_exists(id)"
        )
    assert dynamodb.get_item(TableName=table, Key={"id": {"S": "w-4"}})["Item"] == item


def test_odd_values_and_events_are_recorded_without_failing(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["ItemsTableName"]
    dynamodb.put_item(TableName=table, Item={"id": {"S": "w-5"}, "n": {"N": "1e3"}})

    (write,) = [w for w in writes(cloud) if w["key"] == "w-5"]
    assert write["after"] == {"id": "w-5", "n": "1e3"}  # not an int: shown as written


WRITERS = 8
ROUNDS = 3


def race(served: LocalCloud) -> list[int]:
    """``ROUNDS`` rounds of ``WRITERS`` clients of ``served``, each round's clients putting
    the same new key at once with ``attribute_not_exists(id)``, the gap between moto's
    read and its store widened (:func:`widened_check_to_write`): how many won each round."""
    served.client("dynamodb").create_table(
        TableName="race",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    clients = [
        boto3.client(
            "dynamodb",
            endpoint_url=served.endpoint_url,
            region_name=served.region,
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        for _ in range(WRITERS)
    ]
    start = threading.Barrier(WRITERS)

    def put(client: Any, key: str, writer: int) -> bool:
        start.wait()
        try:
            client.put_item(
                TableName="race",
                Item={"id": {"S": key}, "writer": {"N": str(writer)}},
                ConditionExpression="attribute_not_exists(id)",
            )
        except client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    with widened_check_to_write("race"), ThreadPoolExecutor(WRITERS) as pool:
        return [
            sum(pool.map(put, clients, [f"race-{r}"] * WRITERS, range(WRITERS)))
            for r in range(ROUNDS)
        ]


def test_racing_conditional_puts_over_http_have_one_winner_per_round(
    make_cloud: Callable[..., LocalCloud],
) -> None:
    """DynamoDB makes a conditional write atomic; moto alone does not (the local cloud's
    patch serialises them): clients of a served account put the same key at once with
    ``attribute_not_exists``, every one of them held between moto's read and its store,
    and exactly one wins each round."""
    assert race(make_cloud(server=True, template=None)) == [1] * ROUNDS


def test_without_the_patchs_lock_the_same_race_has_many_winners(
    make_cloud: Callable[..., LocalCloud], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race above can fail: with the patch's lock replaced by none, as moto is on its
    own, every round has more than one winner."""
    monkeypatch.setattr(dynamodb_patches, "LOCK", contextlib.nullcontext())
    winners = race(make_cloud(server=True, template=None))
    assert all(count > 1 for count in winners), winners
