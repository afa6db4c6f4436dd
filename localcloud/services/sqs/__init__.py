"""SQS: queues and their CloudFormation types, the refusals SQS makes and moto does not,
Lambda's event source mapping for SQS as AWS documents it, and redrive.

Owns the pure rules (:mod:`.batches`: records, the judgement of a partial batch response,
the 6 MB payload limit), the poller of one mapping (:mod:`.poller`, which Lambda's event
source mappings make for every mapping whose source is a queue), moving messages back
from a dead-letter queue (:mod:`.redrive`), the patches (:mod:`.patches`: message
contents and batch answers as SQS gives them) and ``AWS::SQS::Queue`` and
``QueuePolicy`` (:mod:`.providers`). moto's own SQS trigger (one record per call, the
receive count stuck at 1, partial batch responses ignored) never runs
(:mod:`localcloud.services.lambda_.mapping_patches`).

May import: :mod:`localcloud.services.lambda_` (the poller invokes functions), the
engine's provider contract, the patch registry, :mod:`localcloud.text`.
"""

from typing import Final

from localcloud.services.service import Service
from localcloud.services.sqs import patches, providers
from localcloud.services.sqs.batches import judge_response, record, split_by_payload
from localcloud.services.sqs.poller import BatchOutcome, SqsEventSourceMapping, from_mapping

SERVICE: Final = Service(
    "sqs",
    providers=providers.PROVIDERS,
    patches=patches.PATCHES,
    event_sources={"sqs": from_mapping},
    surfaces=(
        "the SQS event source mapping: batches of BatchSize, "
        "every record attribute, partial batch responses (ReportBatchItemFailures), "
        "redelivery after the visibility timeout, redrive to a dead-letter queue, the 6 MB "
        "payload limit",
    ),
)

__all__ = [
    "SERVICE",
    "BatchOutcome",
    "SqsEventSourceMapping",
    "judge_response",
    "record",
    "split_by_payload",
]
