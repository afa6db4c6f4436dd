"""A stack update keeps a stream's event source mapping, and with it the checkpoint, as
CloudFormation updates ``AWS::Lambda::EventSourceMapping`` in place: records already
delivered are not delivered again, a changed setting applies to the next batch, and a
changed starting position makes a new mapping. A module of its own: it updates the stream
app's stack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.provider import Deployment
from localcloud.cloudformation.template import Template, from_body, load
from localcloud.cloudformation.update import update
from localcloud.tests.support.cloud import started
from localcloud.tests.support.logs import printed
from localcloud.tests.support.paths import APPS

TEMPLATE = APPS / "stream_app" / "template.yaml"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=load(TEMPLATE), stack_name="stream-update") as running:
        yield running


def changed(change: dict[str, Any], *, dropped: tuple[str, ...] = ()) -> Template:
    """The stream app with the Kinesis event's properties ``change`` d and ``dropped``."""
    body = json.loads(json.dumps(load(TEMPLATE).body))
    properties = body["Resources"]["ReadingRecorder"]["Properties"]["Events"]["Readings"][
        "Properties"
    ]
    properties.update(change)
    for name in dropped:
        del properties[name]
    return from_body(body, {}, path=TEMPLATE)


def readings(cloud: LocalCloud) -> list[list[int]]:
    return [[body["n"] for body in line["bodies"]] for line in printed(cloud, "ReadingRecorder")]


def put(cloud: LocalCloud, numbers: range) -> None:
    for n in numbers:
        cloud.client("kinesis").put_record(
            StreamName=cloud.outputs["StreamName"],
            Data=json.dumps({"n": n}).encode(),
            PartitionKey="update",
        )


def mapping(cloud: LocalCloud) -> dict[str, Any]:
    (found,) = [
        m
        for m in cloud.client("lambda").list_event_source_mappings()["EventSourceMappings"]
        if m["EventSourceArn"] == cloud.outputs["StreamArn"]
    ]
    return dict(found)


def test_an_update_keeps_the_mapping_and_its_checkpoint(cloud: LocalCloud) -> None:
    put(cloud, range(3))
    cloud.settle_streams()
    before = mapping(cloud)
    deployment: Deployment = cloud.deployment
    updated, _ = update(deployment, changed({"BatchSize": 2}), cloud.client)
    after = mapping(cloud)
    assert after["UUID"] == before["UUID"]
    assert after["BatchSize"] == 2
    assert after["BisectBatchOnFunctionError"] is True  # still declared, still set
    put(cloud, range(3, 7))
    cloud.settle_streams()
    assert readings(cloud) == [[0, 1, 2], [3, 4], [5, 6]]  # 0-2 once, then batches of 2
    # A setting the template no longer declares goes back to Lambda's default.
    update(updated, changed({"BatchSize": 2}, dropped=("MaximumRetryAttempts",)), cloud.client)
    assert mapping(cloud)["MaximumRetryAttempts"] == -1


def test_a_changed_starting_position_makes_a_new_mapping(cloud: LocalCloud) -> None:
    before = mapping(cloud)
    update(cloud.deployment, changed({"StartingPosition": "LATEST"}), cloud.client)
    after = mapping(cloud)
    assert after["UUID"] != before["UUID"]
    assert after["StartingPosition"] == "LATEST"
