"""moto's SQS, refusing what AWS refuses in a message, and listing queues by prefix.

``SendMessage`` / ``SendMessageBatch`` -- moto stores any body. AWS allows only ``#x9 |
#xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF`` and otherwise "rejects the
message and returns an InvalidMessageContents error" (SendMessage and SendMessageBatch API
references); a ``String`` message attribute value "has the same restrictions on the
content as the message body" (``MessageAttributeValue`` reference). In a batch, results
are "reported individually": the bad entry is in ``Failed`` with code
``InvalidMessageContents`` and the others are sent.

``ListQueues`` -- moto compiled ``QueueNamePrefix`` as a regular expression, so
``(a+)+b`` backtracked holding the interpreter lock and froze the whole server (issue 47's
held-back attacks); it is a prefix, "a string to use for filtering the list results. Only
those queues whose name begins with the specified string are returned" (ListQueues API
reference).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from moto.sqs.constants import MAXIMUM_MESSAGE_LENGTH
from moto.sqs.exceptions import (
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    InvalidBatchEntryId,
    SQSException,
    TooManyEntriesInBatchRequest,
)
from moto.sqs.models import Message, SQSBackend

from localcloud.patches.registry import Method, Patch

_SQS_OUTSIDE_ALLOWED = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character outside SQS's allowed set ``#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to
#xFFFD | #x10000 to #x10FFFF`` (SendMessage API reference, ``MessageBody``)."""

SQS_ALLOWED_SET = "#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]"
"""The allowed set as AWS spells it in the InvalidMessageContents message."""


class InvalidMessageContents(SQSException):
    """SQS ``InvalidMessageContents`` (HTTP 400): "The message contains characters outside
    the allowed set." (SQS API reference, Common errors of SendMessage; botocore model)."""

    code = "InvalidMessageContents"


# --- Step Functions: StartExecution name ------------------------------------------------


def invalid_contents(body: str, message_attributes: Mapping[str, Any] | None) -> str | None:
    """Why SQS would refuse this body or these message attributes, or ``None``.

    The body message is AWS's own wording ("Invalid binary character '#x7' was found in the
    message body, the set of allowed characters is ...", as quoted from real SQS replies in
    github.com/asim/nitro-plugins/issues/437 and Particular/NServiceBus.AmazonSQS#2630).
    For a ``String`` attribute value the wording is ours: AWS documents the rule
    (``MessageAttributeValue``) but not the message.
    """
    found = _SQS_OUTSIDE_ALLOWED.search(body)
    if found:
        return (
            f"Invalid binary character '{_hex(found.group())}' was found in the message "
            f"body, the set of allowed characters is {SQS_ALLOWED_SET}."
        )
    for name, value in (message_attributes or {}).items():
        text = value.get("StringValue")
        if not str(value.get("DataType", "")).startswith("String") or not isinstance(text, str):
            continue
        found = _SQS_OUTSIDE_ALLOWED.search(text)
        if found:
            return (
                f"Invalid binary character '{_hex(found.group())}' was found in the value "
                f"of message attribute '{name}', the set of allowed characters is "
                f"{SQS_ALLOWED_SET}."
            )
    return None


def _hex(character: str) -> str:
    return f"#x{ord(character):X}"


def _checked_send_message(original: Method) -> Method:
    def send_message(
        self: SQSBackend,
        queue_name: str,
        message_body: str,
        message_attributes: dict[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        problem = invalid_contents(message_body, message_attributes)
        if problem is not None:
            self.get_queue(queue_name)  # a missing queue is reported first, as before
            raise InvalidMessageContents(problem)
        return original(self, queue_name, message_body, message_attributes, *args, **kwargs)

    return send_message


def _check_batch_request(entries: Mapping[str, Mapping[str, Any]]) -> None:
    """The whole-request checks moto's ``send_message_batch`` makes, over every entry
    (the refused ones included), in moto's order."""
    if any(not re.fullmatch(r"[\w-]{1,80}", entry["Id"]) for entry in entries.values()):
        raise InvalidBatchEntryId()
    length = sum(len(entry["MessageBody"]) for entry in entries.values())
    if length > MAXIMUM_MESSAGE_LENGTH:
        raise BatchRequestTooLong(length)
    seen: set[str] = set()
    for entry in entries.values():
        if entry["Id"] in seen:
            raise BatchEntryIdsNotDistinct(entry["Id"])
        seen.add(entry["Id"])
    if len(entries) > 10:
        raise TooManyEntriesInBatchRequest(len(entries))


def _checked_send_message_batch(original: Method) -> Method:
    def send_message_batch(
        self: SQSBackend, queue_name: str, entries: dict[str, dict[str, Any]]
    ) -> tuple[list[Message], list[dict[str, Any]]]:
        refused = {
            key: problem
            for key, entry in entries.items()
            if (problem := invalid_contents(entry["MessageBody"], entry.get("MessageAttributes")))
        }
        if not refused:
            result: tuple[list[Message], list[dict[str, Any]]] = original(self, queue_name, entries)
            return result
        self.get_queue(queue_name)
        _check_batch_request(entries)
        accepted = {key: entry for key, entry in entries.items() if key not in refused}
        messages, failed = original(self, queue_name, accepted) if accepted else ([], [])
        failed = failed + [
            {
                "Id": entries[key]["Id"],
                "SenderFault": True,
                "Code": InvalidMessageContents.code,
                "Message": problem,
            }
            for key, problem in refused.items()
        ]
        order = {entry["Id"]: position for position, entry in enumerate(entries.values())}
        return messages, sorted(failed, key=lambda item: order.get(item["Id"], len(order)))

    return send_message_batch


def _listed_by_prefix(_original: Method) -> Method:
    def list_queues(self: SQSBackend, queue_name_prefix: str) -> list[Any]:
        prefix = queue_name_prefix or ""
        return [queue for name, queue in self.queues.items() if name.startswith(prefix)]

    return list_queues


# --- install ----------------------------------------------------------------------------


PATCHES: Final = (
    Patch(
        SQSBackend,
        "send_message",
        ("self", "queue_name", "message_body", "message_attributes"),
        _checked_send_message,
        "SendMessage must refuse the characters SQS refuses",
    ),
    Patch(
        SQSBackend,
        "send_message_batch",
        ("self", "queue_name", "entries"),
        _checked_send_message_batch,
        "SendMessageBatch must refuse, entry by entry, the characters SQS refuses",
    ),
    Patch(
        SQSBackend,
        "list_queues",
        ("self", "queue_name_prefix"),
        _listed_by_prefix,
        "ListQueues' QueueNamePrefix is a prefix (moto compiled it as a regular expression, "
        "which could freeze the server)",
    ),
)
