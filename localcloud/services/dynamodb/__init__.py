"""DynamoDB: conditional writes made atomic (moto's check and write are two unlocked
steps), every ``PutItem``, ``UpdateItem`` and ``DeleteItem`` handed to the write
listeners as DynamoDB decided it (:mod:`.patches`), ``AWS::DynamoDB::Table``
(:mod:`.providers`), and a table's stream as Lambda's event source mappings read it
(:mod:`.stream_poller`; the batching, retries and on-failure destinations are
:mod:`localcloud.services.lambda_.stream_mappings`').

May import: the engine's provider contract, the patch registry, :mod:`localcloud.text`,
:mod:`localcloud.services.lambda_` (its stream mappings).
"""

from typing import Final

from localcloud.services.dynamodb import patches, providers, stream_poller
from localcloud.services.service import Service

SERVICE: Final = Service(
    "dynamodb",
    providers=providers.PROVIDERS,
    patches=patches.PATCHES,
    event_sources={"dynamodb": stream_poller.from_mapping},
    surfaces=(
        "the DynamoDB Streams event source mapping: the table's stream read in order from "
        "its starting position (TRIM_HORIZON, LATEST), batches of BatchSize within 6 MB, "
        "the batching window, retries, bisection, maximum record age, partial batch "
        "responses, on-failure destinations (SQS, SNS)",
    ),
)

__all__ = ["SERVICE"]
