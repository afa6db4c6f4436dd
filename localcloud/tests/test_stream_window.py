"""Stream mappings of a served account, polled in the background (the
dispatcher asks each mapping whether its stream has records, from moto's memory): a
Kinesis mapping with a batching window gathers records put apart into one batch, and a
table's changes reach its function with nobody draining anything. A module of its own:
background polling is the account's, and the stream app's other tests drain in-process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.tests.support.cloud import started
from localcloud.tests.support.logs import printed
from localcloud.tests.support.paths import APPS


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    template = load(APPS / "stream_app" / "template.yaml")
    with started(server=True, template=template, stack_name="stream-window") as running:
        running.start_event_sources(idle_wait_seconds=0.05)
        yield running


def eventually(found: Callable[[], list[Any]], timeout_s: float = 15.0) -> list[Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if result := found():
            return result
        time.sleep(0.05)
    return []


def test_a_batching_window_gathers_records_put_apart_into_one_batch(cloud: LocalCloud) -> None:
    lambda_, kinesis = cloud.client("lambda"), cloud.client("kinesis")
    (mapping,) = [
        m
        for m in lambda_.list_event_source_mappings()["EventSourceMappings"]
        if m["EventSourceArn"] == cloud.outputs["StreamArn"]
    ]
    lambda_.update_event_source_mapping(UUID=mapping["UUID"], MaximumBatchingWindowInSeconds=3)
    for n in range(3):  # 0.2 s apart: the dispatcher looks every 0.05 s
        kinesis.put_record(
            StreamName=cloud.outputs["StreamName"],
            Data=json.dumps({"run": "window", "n": n}).encode(),
            PartitionKey="window",
        )
        time.sleep(0.2)

    def batches() -> list[list[int]]:
        return [
            [body["n"] for body in line["bodies"]]
            for line in printed(cloud, "ReadingRecorder")
            if line["bodies"][0].get("run") == "window"
        ]

    assert eventually(batches)
    time.sleep(0.5)  # a second batch would have come by now
    assert batches() == [[0, 1, 2]]


def test_table_changes_reach_the_function_in_the_background(cloud: LocalCloud) -> None:
    cloud.client("dynamodb").put_item(
        TableName=cloud.outputs["TableName"], Item={"id": {"S": "unattended"}}
    )
    keys = eventually(
        lambda: [
            record["dynamodb"]["Keys"]["id"]["S"]
            for line in printed(cloud, "ChangeRecorder")
            for record in line["received"]["Records"]
        ]
    )
    assert keys == ["unattended"]
