"""The SQS event source: Lambda's event source mapping for SQS, emulated as AWS documents
it, and redrive.

Owns the pure rules (:mod:`.batches`: records, the judgement of a partial batch response,
the 6 MB payload limit), the poller of one mapping (:mod:`.mapping`), the account's
pollers (:mod:`.mappings`, fed by the patched Lambda API) and moving messages back from a
dead-letter queue (:mod:`.redrive`). moto's own SQS trigger (one record per call, the
receive count stuck at 1, partial batch responses ignored) never runs
(:mod:`localcloud.patches.lambda_`).

May import: :mod:`localcloud.lambda_runtime`, :mod:`localcloud.text`.
"""

from localcloud.sqs.batches import judge_response, record, split_by_payload
from localcloud.sqs.mapping import BatchOutcome, SqsEventSourceMapping

__all__ = [
    "BatchOutcome",
    "SqsEventSourceMapping",
    "judge_response",
    "record",
    "split_by_payload",
]
