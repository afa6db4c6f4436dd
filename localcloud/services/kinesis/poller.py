"""A Kinesis data stream as Lambda's event source mappings read it: shards listed and
records read through the Kinesis API (``ListShards``, ``GetShardIterator``,
``GetRecords``), each record shaped as the function receives it; what Lambda then does
with them (batches, retries, bisection, on-failure destinations) is
:mod:`localcloud.services.lambda_.stream_mappings`'.

The record (source: "Using AWS Lambda with Amazon Kinesis", the example event)::

    {"kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": …, "sequenceNumber": …,
                 "data": <base64>, "approximateArrivalTimestamp": <epoch seconds>},
     "eventSource": "aws:kinesis", "eventVersion": "1.0",
     "eventID": "<shard id>:<sequence number>", "eventName": "aws:kinesis:record",
     "invokeIdentityArn": <the function's execution role>, "awsRegion": …,
     "eventSourceARN": <the stream's ARN>}

moto numbers a shard's records 1, 2, 3 … (Kinesis: 56-digit numbers); they compare and
order the same way.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Mapping
from typing import Any, Final

from moto.kinesis.models import kinesis_backends

from localcloud.services.lambda_ import Function, event_source_mappings
from localcloud.services.lambda_.stream_batches import StreamRecord
from localcloud.services.lambda_.stream_mappings import StreamEventSourceMapping, mapping_for

BATCH_INFO: Final = "KinesisBatchInfo"


class KinesisStream:
    """One data stream of the account (:class:`~localcloud.services.lambda_.
    stream_mappings.StreamSource`), read with ``client`` (a boto3 Kinesis client)."""

    batch_info_key = BATCH_INFO
    arrival_milliseconds = True

    def __init__(self, client: Any, arn: str, region: str, role_arn: str) -> None:
        self.client = client
        self.arn = arn
        self.region = region
        self.role_arn = role_arn
        _, _, _, _, self._account, resource = arn.split(":", 5)
        self.name = resource.split("/", 1)[1]

    def shard_ids(self) -> list[str]:
        shards: list[str] = []
        token: str | None = None
        while True:
            page = (
                self.client.list_shards(NextToken=token)
                if token
                else self.client.list_shards(StreamName=self.name)
            )
            shards.extend(shard["ShardId"] for shard in page.get("Shards", []))
            token = page.get("NextToken")
            if not token:
                return shards

    def _shard(self, shard_id: str) -> Any:
        return kinesis_backends[self._account][self.region].streams[self.name].shards[shard_id]

    def last_sequence_number(self, shard_id: str) -> str | None:
        newest = self._shard(shard_id).get_max_sequence_number()
        return str(newest) if newest else None

    def waiting(self, shard_id: str, after: str | None) -> tuple[int, float | None]:
        try:
            records = self._shard(shard_id).records
            if not records:
                return 0, None
            floor = int(after) if after is not None else 0
            newest = next(reversed(records))
            if newest <= floor:
                return 0, None
            first = max(floor + 1, next(iter(records)))
            record = records.get(first)
            if record is not None:  # moto numbers a shard's records one after another
                return newest - first + 1, record.created_at
            newer = [r for number, r in list(records.items()) if number > floor]
            return len(newer), newer[0].created_at
        except (KeyError, RuntimeError, StopIteration, IndexError):
            return 1, None  # the stream is gone, or changed under the look: a poll says

    def read(
        self, shard_id: str, after: str | None, limit: int, at_timestamp: float | None
    ) -> list[StreamRecord]:
        kwargs: dict[str, Any] = {"StreamName": self.name, "ShardId": shard_id}
        if after is not None:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", StartingSequenceNumber=after)
        elif at_timestamp is not None:
            kwargs.update(
                ShardIteratorType="AT_TIMESTAMP",
                Timestamp=datetime.datetime.fromtimestamp(at_timestamp, datetime.UTC),
            )
        else:
            kwargs.update(ShardIteratorType="TRIM_HORIZON")
        iterator = self.client.get_shard_iterator(**kwargs)["ShardIterator"]
        answer = self.client.get_records(ShardIterator=iterator, Limit=min(limit, 10000))
        return [self._record(shard_id, record) for record in answer.get("Records", [])]

    def _record(self, shard_id: str, record: Mapping[str, Any]) -> StreamRecord:
        arrived = record["ApproximateArrivalTimestamp"].timestamp()
        number = str(record["SequenceNumber"])
        return StreamRecord(
            sequence_number=number,
            arrived=arrived,
            record={
                "kinesis": {
                    "kinesisSchemaVersion": "1.0",
                    "partitionKey": record["PartitionKey"],
                    "sequenceNumber": number,
                    "data": base64.b64encode(record["Data"]).decode("ascii"),
                    "approximateArrivalTimestamp": round(arrived, 3),
                },
                "eventSource": "aws:kinesis",
                "eventVersion": "1.0",
                "eventID": f"{shard_id}:{number}",
                "eventName": "aws:kinesis:record",
                "invokeIdentityArn": self.role_arn,
                "awsRegion": self.region,
                "eventSourceARN": self.arn,
            },
        )


def from_mapping(
    account: event_source_mappings.Account, config: Mapping[str, Any], function: Function
) -> StreamEventSourceMapping:
    """The poller of a mapping whose source is a data stream of the account (the Kinesis
    service's :data:`~localcloud.services.lambda_.event_source_mappings.PollerFactory`)."""
    arn = str(config["EventSourceArn"])
    role = account.client("lambda").get_function_configuration(
        FunctionName=str(config["FunctionArn"])
    )["Role"]
    stream = KinesisStream(account.client("kinesis"), arn, account.region, role)
    return mapping_for(stream, account, config, function)


__all__ = ["BATCH_INFO", "KinesisStream", "from_mapping"]
