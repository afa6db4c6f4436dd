"""One DynamoDB call, checked: a transient failure leaves under one name, and a success
counts only if DynamoDB's own answer shows it.

Every call the workers make (the conditional ``PutItem``, the summary's ``GetItem``, the
attempts counter's ``UpdateItem``) runs inside :func:`dynamodb_call` and, when it
returns, passes :func:`require_answer`; a failed condition is recognised by
:func:`condition_failed`. Nothing here knows about orders.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from botocore.exceptions import ClientError
from botocore.parsers import ResponseParserError

from order_guard.exceptions import TransientStoreError
from order_guard.transient import TRANSIENT_EXCEPTIONS, describe, is_transient

__all__ = ["UNREADABLE_ANSWER_ERRORS", "condition_failed", "dynamodb_call", "require_answer"]

UNREADABLE_ANSWER_ERRORS = (ResponseParserError, UnicodeDecodeError)
"""What botocore raises for an answer it cannot parse: a body that is not UTF-8 (its JSON
parser decodes before it parses) or not the protocol's shape. Neither is a
``BotoCoreError``; both mean the answer is not DynamoDB's."""


@contextlib.contextmanager
def dynamodb_call(operation: str, table: str) -> Iterator[None]:
    """Run one DynamoDB call; a transient failure leaves as ``TransientStoreError``.

    Args:
        operation: the API name (``PutItem``, ``GetItem``, ``UpdateItem``), for the message.
        table: the table name, for the message.

    Raises:
        TransientStoreError: the call failed transiently
            (:func:`~order_guard.transient.is_transient`) after botocore's own attempts,
            or its answer could not be parsed (:data:`UNREADABLE_ANSWER_ERRORS`: not
            DynamoDB's, as :func:`require_answer` judges a parsed one); the original
            error is ``__cause__``.
        botocore.exceptions.ClientError, BotoCoreError: a permanent failure, unchanged.
    """
    try:
        yield
    except UNREADABLE_ANSWER_ERRORS as exc:
        raise TransientStoreError(
            f"DynamoDB {operation} on {table} answered with something botocore cannot parse "
            f"(is the endpoint DynamoDB?); treated as a failure, safe to retry: {describe(exc)}"
        ) from exc
    except (ClientError, *TRANSIENT_EXCEPTIONS) as exc:
        if not is_transient(exc):
            raise
        raise TransientStoreError(
            f"DynamoDB {operation} on {table} failed transiently, safe to retry: {describe(exc)}"
        ) from exc


def require_answer(response: Mapping[str, Any], operation: str, table_name: str) -> None:
    """Accept a successful call only if its answer shows DynamoDB handled it for this table.

    The proof is the ``ConsumedCapacity`` (with this ``TableName``) that
    ``ReturnConsumedCapacity: TOTAL`` asks for: it costs nothing and DynamoDB always
    sends it. botocore parses any other HTTP 200 (an HTML page from a mistyped
    ``AWS_ENDPOINT_URL``, a proxy's answer) into an empty response, which would otherwise
    read as success (docs/failures.md, "Transient or permanent").

    Raises:
        TransientStoreError: the answer is not DynamoDB's (the error decision; the call
            is safe to repeat, and a repeat finds the item if it was stored after all).
    """
    capacity = response.get("ConsumedCapacity")
    if not isinstance(capacity, Mapping) or capacity.get("TableName") != table_name:
        raise TransientStoreError(
            f"DynamoDB {operation} on {table_name} answered without ConsumedCapacity for "
            "the table, so nothing shows the call was handled (is the endpoint DynamoDB?); "
            "treated as a failure, safe to retry"
        )


def condition_failed(exc: ClientError) -> bool:
    """Whether ``exc`` is DynamoDB's ``ConditionalCheckFailedException``."""
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
