"""Kinesis Data Streams: ``AWS::Kinesis::Stream`` (:mod:`.providers`), and a stream as
Lambda's event source mappings read it (:mod:`.poller`: its shards and records, each
record in Lambda's shape; the batching, retries and on-failure destinations are
:mod:`localcloud.services.lambda_.stream_mappings`').

May import: the engine's provider contract, :mod:`localcloud.services.lambda_` (its
stream mappings).
"""

from typing import Final

from localcloud.services.kinesis import poller, providers
from localcloud.services.service import Service

SERVICE: Final = Service(
    "kinesis",
    providers=providers.PROVIDERS,
    event_sources={"kinesis": poller.from_mapping},
    surfaces=(
        "the Kinesis event source mapping: every shard read in order from its starting "
        "position (TRIM_HORIZON, LATEST, AT_TIMESTAMP), batches of BatchSize within 6 MB, "
        "the batching window, retries, bisection, maximum record age, partial batch "
        "responses, on-failure destinations (SQS, SNS)",
    ),
)

__all__ = ["SERVICE"]
