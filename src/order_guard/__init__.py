"""Order Guard: idempotent queue and workflow workers for AWS Lambda.

The pattern is one conditional ``PutItem`` on the business key that stores an order and
decides what a repeat is (docs/design.md, "Use it in your own function"). The names below
are the public surface; everything else in the package is an internal of the two workers.

==============================================  ==================================================
:func:`put_order_once`                          the conditional write and its write decision
:class:`WriteOutcome`, :class:`Decision`,       what the write decided; the decision an error
:func:`decision_for_error`                      stands for
:func:`read_order`                              a strongly consistent read of one order
:class:`Order`, :func:`parse_job_body`,         the order contract: parse and validate a job
:func:`validate_job`,
:func:`validate_order_id`
:func:`to_item`, :func:`from_item`,             the order item in DynamoDB's attribute-value
:class:`StoredOrder`, :func:`provenance`        form, and its provenance attributes
:func:`process_batch_by_key`,                   an SQS batch by business key, answered with the
:class:`SQSBatchResponse`,                      partial batch response
:class:`SQSBatchItemFailure`
:func:`is_transient`                            whether repeating a failed step may succeed
:data:`DYNAMODB_CLIENT_CONFIG`                  botocore timeouts and retries that fit a Lambda
                                                invocation
:class:`OrderGuardError`                        the root of every error class below (never
                                                raised itself)
:class:`InvalidOrder`, :class:`OrderConflict`,  the errors, each under the class name a Step
:class:`OrderNotFound`,                         Functions retrier or catcher matches
:class:`TransientStoreError`,                   (:mod:`order_guard.exceptions`)
:class:`UnreadableStoredOrder`,
:class:`InvalidBatchEvent`,
:class:`ConfigurationError`,
:class:`TimeBudgetExhausted`,
:class:`TransientOrderError`,
:class:`AttemptsCounterUnavailable`
==============================================  ==================================================

The deployed package (``CodeUri: src/``) has two handlers:

- ``order_guard.queue_worker.lambda_handler``: SQS event source mapping, partial batch
  response.
- ``order_guard.workflow_worker.lambda_handler``: Step Functions ``lambda:invoke`` task.
"""

from order_guard.batch import SQSBatchItemFailure, SQSBatchResponse, process_batch_by_key
from order_guard.config import DYNAMODB_CLIENT_CONFIG
from order_guard.decision import Decision, WriteOutcome, decision_for_error
from order_guard.exceptions import (
    AttemptsCounterUnavailable,
    ConfigurationError,
    InvalidBatchEvent,
    InvalidOrder,
    OrderConflict,
    OrderGuardError,
    OrderNotFound,
    TimeBudgetExhausted,
    TransientOrderError,
    TransientStoreError,
    UnreadableStoredOrder,
)
from order_guard.item import from_item, provenance, to_item
from order_guard.orders import Order, StoredOrder, parse_job_body, validate_job, validate_order_id
from order_guard.store import put_order_once, read_order
from order_guard.transient import is_transient

__all__ = [
    "DYNAMODB_CLIENT_CONFIG",
    "AttemptsCounterUnavailable",
    "ConfigurationError",
    "Decision",
    "InvalidBatchEvent",
    "InvalidOrder",
    "Order",
    "OrderConflict",
    "OrderGuardError",
    "OrderNotFound",
    "SQSBatchItemFailure",
    "SQSBatchResponse",
    "StoredOrder",
    "TimeBudgetExhausted",
    "TransientOrderError",
    "TransientStoreError",
    "UnreadableStoredOrder",
    "WriteOutcome",
    "decision_for_error",
    "from_item",
    "is_transient",
    "parse_job_body",
    "process_batch_by_key",
    "provenance",
    "put_order_once",
    "read_order",
    "to_item",
    "validate_job",
    "validate_order_id",
]
