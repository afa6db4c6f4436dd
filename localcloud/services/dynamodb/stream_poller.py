"""A table's DynamoDB stream as Lambda's event source mappings read it: its shards and
records read through the DynamoDB Streams API (``DescribeStream``, ``GetShardIterator``,
``GetRecords``), each record shaped as the function receives it; what Lambda then does
with them (batches, retries, bisection, on-failure destinations) is
:mod:`localcloud.services.lambda_.stream_mappings`'.

The record is the stream record as ``GetRecords`` returns it, with the mapping's
``eventSourceARN``, the stream's ``awsRegion`` (moto writes ``us-east-1`` whatever the
region) and ``dynamodb.ApproximateCreationDateTime`` in epoch seconds (source: "Using
AWS Lambda with Amazon DynamoDB", the example event)::

    {"eventID": …, "eventName": "INSERT" | "MODIFY" | "REMOVE", "eventVersion": …,
     "eventSource": "aws:dynamodb", "awsRegion": …,
     "dynamodb": {"ApproximateCreationDateTime": …, "Keys": …, "NewImage": …,
                  "OldImage": …, "SequenceNumber": …, "SizeBytes": …,
                  "StreamViewType": …},
     "eventSourceARN": <the stream's ARN>}
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

from moto.dynamodb.models import dynamodb_backends

from localcloud.services.lambda_ import Function, event_source_mappings
from localcloud.services.lambda_.stream_batches import StreamRecord
from localcloud.services.lambda_.stream_mappings import StreamEventSourceMapping, mapping_for

BATCH_INFO: Final = "DDBStreamBatchInfo"
GET_RECORDS_LIMIT: Final = 1000
"""The most records one DynamoDB Streams ``GetRecords`` call returns (its ``Limit``)."""


class TableStream:
    """One table's stream (:class:`~localcloud.services.lambda_.stream_mappings.
    StreamSource`), read with ``client`` (a boto3 DynamoDB Streams client)."""

    batch_info_key = BATCH_INFO
    arrival_milliseconds = False

    def __init__(self, client: Any, arn: str, region: str) -> None:
        self.client = client
        self.arn = arn
        self.region = region
        _, _, _, _, self._account, resource = arn.split(":", 5)
        self.table = resource.split("/")[1]

    def shard_ids(self) -> list[str]:
        described = self.client.describe_stream(StreamArn=self.arn)["StreamDescription"]
        return [shard["ShardId"] for shard in described.get("Shards", [])]

    def _shard(self) -> Any:
        """The table's stream shard in moto's memory (``None``: its stream is off)."""
        return dynamodb_backends[self._account][self.region].get_table(self.table).stream_shard

    def last_sequence_number(self, shard_id: str) -> str | None:
        shard = self._shard()
        if shard is None or not shard.items:
            return None
        return str(int(shard.starting_sequence_number) + len(shard.items) - 1)

    def waiting(self, shard_id: str, after: str | None) -> tuple[int, float | None]:
        try:
            shard = self._shard()
            if shard is None:
                return 0, None
            items = shard.items
            skip = 0 if after is None else int(after) - int(shard.starting_sequence_number) + 1
            count = len(items) - max(0, skip)
            if count <= 0:
                return 0, None
            created = items[max(0, skip)].record["dynamodb"]["ApproximateCreationDateTime"]
        except Exception:  # noqa: BLE001 - the table or its stream is gone: a poll says so
            return 1, None
        if created.tzinfo is None:  # moto keeps UTC without a zone
            created = created.replace(tzinfo=datetime.UTC)
        return count, created.timestamp()

    def read(
        self, shard_id: str, after: str | None, limit: int, at_timestamp: float | None
    ) -> list[StreamRecord]:
        kwargs: dict[str, Any] = {"StreamArn": self.arn, "ShardId": shard_id}
        if after is not None:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
        else:
            kwargs.update(ShardIteratorType="TRIM_HORIZON")
        iterator: str | None = self.client.get_shard_iterator(**kwargs)["ShardIterator"]
        records: list[StreamRecord] = []
        while iterator and len(records) < limit:  # GetRecords gives at most 1,000 a call
            wanted = min(limit - len(records), GET_RECORDS_LIMIT)
            answer = self.client.get_records(ShardIterator=iterator, Limit=wanted)
            page = answer.get("Records", [])
            records.extend(self._record(record) for record in page)
            iterator = answer.get("NextShardIterator") if len(page) == wanted else None
        return records

    def _record(self, record: Mapping[str, Any]) -> StreamRecord:
        change = dict(record["dynamodb"])
        arrived = change["ApproximateCreationDateTime"].timestamp()
        change["ApproximateCreationDateTime"] = int(arrived)
        shaped = {
            **{key: value for key, value in record.items() if key != "dynamodb"},
            "awsRegion": self.region,
            "dynamodb": change,
            "eventSourceARN": self.arn,
        }
        return StreamRecord(str(change["SequenceNumber"]), arrived, shaped)


def from_mapping(
    account: event_source_mappings.Account, config: Mapping[str, Any], function: Function
) -> StreamEventSourceMapping:
    """The poller of a mapping whose source is a table's stream in the account (the
    DynamoDB service's :data:`~localcloud.services.lambda_.event_source_mappings.
    PollerFactory`)."""
    arn = str(config["EventSourceArn"])
    stream = TableStream(account.client("dynamodbstreams"), arn, account.region)
    return mapping_for(stream, account, config, function)


__all__ = ["BATCH_INFO", "TableStream", "from_mapping"]
