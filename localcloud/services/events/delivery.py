"""EventBridge's delivery: an event put on a bus reaches every enabled rule whose pattern
matches it, and each of the rule's targets receives the event, or the input the target
makes of it.

moto 5.2.5 differs from AWS here, and the patches make it as AWS documents it:

- ``Rule.send_to_targets`` delivers to log groups, archives, SQS queues, buses and API
  destinations only; a Lambda, SNS or Step Functions target raises
  ``NotImplementedError`` (PutEvents answers HTTP 500). It also sends to a ``DISABLED``
  rule's targets, and a schedule rule (no pattern) matches every event. It applies
  ``InputTransformer`` but not ``Input`` or ``InputPath``, and its SQS body of a
  transformed string is quoted JSON. After the patch: the targets of ENABLED rules with a
  pattern, Lambda (an asynchronous invocation, :mod:`localcloud.services.lambda_.
  asynchronous`), SQS (``SqsParameters.MessageGroupId``), SNS, Step Functions
  (``StartExecution``, the input as the execution's input) and another bus; the input is
  ``Input`` (the JSON text as given), ``InputPath`` (the JSON path's value: EventBridge's
  syntax only, dot notation, array indexes and wildcards, evaluated bounded) or
  ``InputTransformer`` (:func:`transformed`), else the event itself, with ``time`` as
  ISO 8601 (``2026-12-03T18:01:55Z``); log groups, archives and API destinations keep
  moto's own delivery, its ``InputPathsMap`` in EventBridge's syntax only (moto evaluated
  any jsonpath_ng expression, ``=~`` with Python's ``re`` included). A failed delivery is
  said on the server's output. Source: "Amazon
  EventBridge targets" and "Transforming target input" in the EventBridge user guide.
- an event a bus received from another bus (a bus target of a rule, or of a schedule) is
  delivered to the receiving bus's rules' targets but never to a further bus, in the
  same account or another, the sending bus included: "EventBridge can't route events
  received from a sender event bus to a third event bus" ("Sending and receiving events
  between event buses in the same account and Region"; for accounts, "Sending and
  receiving events between AWS accounts": "these events are not sent to the third
  account"). moto forwarded them on, and a loop of buses ran for as long as the server did.
  EventBridge says nothing when it drops such a forward; the local cloud says it once per
  rule on the server's output.
- which rules an event matches: :mod:`.patterns`.

Delivery happens after ``PutEvents`` answers, in a thread (EventBridge delivers
asynchronously); a target that cannot be reached (deleted, say) is skipped, as
EventBridge drops the event after its retries (a target's ``DeadLetterConfig`` receives
it then, with the ``ERROR_CODE`` and ``ERROR_MESSAGE`` attributes).
"""

from __future__ import annotations

import contextvars
import copy
import datetime
import json
import re
import threading
import time
import uuid
import weakref
from collections.abc import Mapping
from typing import Any, Final, Protocol

from moto.events.models import Rule
from moto.events.utils import EventTemplateParser

from localcloud.patches import jsonpath
from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_ import asynchronous
from localcloud.text import say


class Source(Protocol):
    """What sends an event to a target: a rule, or a Scheduler schedule."""

    @property
    def arn(self) -> str: ...

    @property
    def name(self) -> str: ...


RESERVED: Final = ("aws.events.rule-arn", "aws.events.rule-name", "aws.events.event.ingestion-time")
_PLACEHOLDER: Final = re.compile(r"<([A-Za-z0-9_.\-]+)>")
_IN_FLIGHT = threading.Condition()
_DELIVERING = 0
_FROM_ANOTHER_BUS: Final[contextvars.ContextVar[bool]] = contextvars.ContextVar(
    "from_another_bus", default=False
)
"""True while a bus target's ``PutEvents`` runs (on the delivering thread): the rules of
the bus receiving the event do not send it on to a further bus."""
_SAID_NOT_FORWARDED: weakref.WeakSet[Rule] = weakref.WeakSet()
"""The rules whose dropped forwards were said (a rule made anew is said anew)."""
_SAID_LOCK = threading.Lock()


def public_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event as a target receives it: moto's ``time`` (epoch seconds) as ISO 8601,
    its own ``ingestion-time`` left out."""
    shown = {key: value for key, value in event.items() if key != "ingestion-time"}
    when = shown.get("time")
    if isinstance(when, (int, float)):
        moment = datetime.datetime.fromtimestamp(float(when), datetime.UTC)
        shown["time"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return shown


def path_value(path: str, event: Any) -> Any:
    """The first value the JSON path (``$.detail.state``) finds in ``event``, or ``None``;
    EventBridge's syntax only (dot notation, array indexes, wildcards), bounded
    (:mod:`localcloud.patches.jsonpath`).

    Raises:
        ValueError: the path is not a JSON path EventBridge evaluates (a filter, a deep
            scan, arithmetic …: :class:`~localcloud.patches.jsonpath.JsonPathRefused`),
            or passes a bound.
    """
    found = jsonpath.find(path, event, jsonpath.EVENTBRIDGE)
    return found[0] if found else None


def _checked_paths(original: Method) -> Method:
    def parse(input_template: str, input_paths_map: dict[str, Any], event: Any) -> Any:
        for path in (input_paths_map or {}).values():
            jsonpath.parse(str(path), jsonpath.EVENTBRIDGE)  # refused: JsonPathRefused
        return original(input_template, input_paths_map, event)

    return parse


def transformed(transformer: dict[str, Any], event: dict[str, Any], rule: Source) -> str:
    """``InputTransformer``'s output for ``event``: each ``<name>`` of ``InputTemplate``
    replaced by the value its ``InputPathsMap`` path finds, as EventBridge documents it:
    inside a JSON string the text of the value (escaped), elsewhere its JSON (a string
    quoted, a missing value ``null``). The reserved ``<aws.events.event>`` (the event
    without its ``detail``), ``<aws.events.event.json>`` (the whole event),
    ``<aws.events.rule-arn>``, ``<aws.events.rule-name>`` and
    ``<aws.events.event.ingestion-time>`` are known too.
    """
    values: dict[str, Any] = {
        name: path_value(str(path), event)
        for name, path in (transformer.get("InputPathsMap") or {}).items()
    }
    values.setdefault("aws.events.event", {k: v for k, v in event.items() if k != "detail"})
    values.setdefault("aws.events.event.json", event)
    values.setdefault("aws.events.rule-arn", rule.arn)
    values.setdefault("aws.events.rule-name", rule.name)
    values.setdefault("aws.events.event.ingestion-time", event.get("time"))
    template = str(transformer.get("InputTemplate", ""))
    out: list[str] = []
    in_string = False
    index = 0
    while index < len(template):
        char = template[index]
        match = _PLACEHOLDER.match(template, index) if char == "<" else None
        if match and match.group(1) in values:
            value = values[match.group(1)]
            if in_string:
                text = value if isinstance(value, str) else json.dumps(value)
                out.append(json.dumps(text)[1:-1] if value is not None else "")
            else:
                out.append(json.dumps(value))
            index = match.end()
            continue
        if char == "\\" and in_string and index + 1 < len(template):
            out.append(template[index : index + 2])
            index += 2
            continue
        if char == '"':
            in_string = not in_string
        out.append(char)
        index += 1
    return "".join(out)


def target_input(target: Mapping[str, Any], event: dict[str, Any], rule: Source) -> str:
    """The text the target receives (JSON for Lambda and Step Functions).

    Raises:
        ValueError: ``InputPath`` is not a JSON path.
    """
    if "Input" in target:
        return str(target["Input"])
    if "InputPath" in target:
        return json.dumps(path_value(str(target["InputPath"]), event))
    if "InputTransformer" in target:
        return transformed(dict(target["InputTransformer"]), event, rule)
    return json.dumps(event)


def deliver(rule: Source, target: dict[str, Any], event: dict[str, Any]) -> None:
    """Send one target its input (see the module docstring); a target that refuses it
    (deleted, a bad input) sends the event to the target's dead-letter queue, if any."""
    arn = str(target["Arn"])
    parts = arn.split(":", 5)
    service, region, account = parts[2], parts[3], parts[4]
    try:
        text = target_input(target, event, rule)
        if service == "lambda":
            asynchronous.submit(arn, json.loads(text), account_id=account, region=region)
        elif service == "sqs":
            from moto.sqs.models import sqs_backends

            group = (target.get("SqsParameters") or {}).get("MessageGroupId")
            sqs_backends[account][region].send_message(
                parts[5], text, group_id=group, validate_group_id=False
            )
        elif service == "sns":
            from moto.sns.models import sns_backends

            sns_backends[account][region].publish(text, arn=arn)
        elif service == "states":
            from moto.stepfunctions.responses import get_backend

            get_backend(account, region).start_execution(arn, str(uuid.uuid4()), text)
        elif is_bus(arn):
            from moto.events.models import events_backends

            hop = _FROM_ANOTHER_BUS.set(True)  # the receiving bus's rules see it (one thread)
            try:
                events_backends[account][region].put_events(
                    [
                        {
                            "Source": event["source"],
                            "DetailType": event["detail-type"],
                            "Detail": json.dumps(event["detail"]),
                            "Resources": event.get("resources", []),
                            "EventBusName": arn,
                        }
                    ]
                )
            finally:
                _FROM_ANOTHER_BUS.reset(hop)
        else:
            raise ValueError(f"{arn}: the local cloud delivers to no such target")
    except Exception as exc:  # noqa: BLE001 - any refusal is the target's failure
        if not _dead_letter(target, event, exc):
            say(
                f"[events] {arn}: not delivered ({type(exc).__name__}: {exc}); the event is dropped"
            )


def _dead_letter(target: dict[str, Any], event: dict[str, Any], exc: Exception) -> bool:
    """Send the event to the target's dead-letter queue; whether it has one."""
    queue = str((target.get("DeadLetterConfig") or {}).get("Arn") or "")
    if not queue.startswith("arn:aws:sqs:"):
        return False
    from moto.sqs.models import sqs_backends

    _, _, _, region, account, name = queue.split(":", 5)
    attributes = {
        "RULE_ARN": {"DataType": "String", "StringValue": str(target.get("_rule_arn", ""))},
        "TARGET_ARN": {"DataType": "String", "StringValue": str(target["Arn"])},
        "ERROR_CODE": {"DataType": "String", "StringValue": type(exc).__name__},
        "ERROR_MESSAGE": {"DataType": "String", "StringValue": str(exc)[:256] or "failed"},
    }
    try:
        sqs_backends[account][region].send_message(
            name, json.dumps(event), message_attributes=attributes
        )
    except Exception as failed:  # noqa: BLE001 - a missing DLQ loses the event, as on AWS
        say(f"[events] dead-letter queue {queue}: {failed}; the event is dropped")
    return True


def is_bus(arn: str) -> bool:
    """Whether the target ``arn`` is an event bus (of any account and region)."""
    parts = arn.split(":", 5)
    return len(parts) == 6 and parts[2] == "events" and parts[5].startswith("event-bus/")


def delivered_here(arn: str) -> bool:
    """Whether this module delivers to the target ``arn`` (else moto's own delivery
    does: log groups, archives, API destinations)."""
    parts = arn.split(":", 5)
    if len(parts) < 6:
        return False
    return parts[2] in ("lambda", "sqs", "sns", "states") or is_bus(arn)


def _not_forwarded(rule: Rule, buses: list[str]) -> None:
    """Say once per rule that it forwards no event received from another bus."""
    with _SAID_LOCK:
        if rule in _SAID_NOT_FORWARDED:
            return
        _SAID_NOT_FORWARDED.add(rule)
    say(
        f"[events] rule {rule.name} ({rule.arn}): an event received from another bus is not "
        f"forwarded to {', '.join(buses)} (EventBridge routes an event one bus hop at most; "
        "its other targets get it)"
    )


def _send_to_targets(original: Method) -> Method:
    def send_to_targets(
        self: Rule, original_event: dict[str, Any], transform_input: bool = True
    ) -> None:
        if self.state != "ENABLED" or not self.event_pattern.get_pattern():
            return  # disabled, or a schedule rule: events on the bus are not for it
        if not self.event_pattern.matches_event(original_event):  # type: ignore[arg-type]
            return
        for other in [t for t in self.targets if not delivered_here(str(t["Arn"]))]:
            moto_rule = copy.copy(self)  # log groups, archives, API destinations: moto's
            moto_rule.targets = [other]
            try:
                original(moto_rule, original_event, transform_input)
            except Exception as exc:  # noqa: BLE001 - a target that refuses it: its failure
                say(f"[events] {other['Arn']}: not delivered ({exc}); the event is dropped")
        event = public_event(original_event)
        targets = [
            dict(target, _rule_arn=self.arn)
            for target in self.targets
            if delivered_here(str(target["Arn"]))
        ]
        if _FROM_ANOTHER_BUS.get():  # a second hop: its bus targets are not sent to
            buses = [str(target["Arn"]) for target in targets if is_bus(str(target["Arn"]))]
            if buses:
                _not_forwarded(self, buses)
                targets = [target for target in targets if not is_bus(str(target["Arn"]))]
        if not targets:
            return

        def run() -> None:
            global _DELIVERING
            try:
                for target in targets:
                    deliver(self, target, event)
            finally:
                with _IN_FLIGHT:
                    _DELIVERING -= 1
                    _IN_FLIGHT.notify_all()

        global _DELIVERING
        with _IN_FLIGHT:
            _DELIVERING += 1
        threading.Thread(target=run, name="events-delivery", daemon=True).start()

    return send_to_targets


def wait_delivered(timeout_s: float) -> bool:
    """Wait until every event put so far reached its targets (a Lambda target's
    invocation is queued, not run: :func:`localcloud.services.lambda_.asynchronous.
    wait_idle`); whether that happened within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    with _IN_FLIGHT:
        while _DELIVERING:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _IN_FLIGHT.wait(left)
    return True


PATCHES: Final = (
    Patch(
        Rule,
        "send_to_targets",
        ("self", "original_event", "transform_input"),
        _send_to_targets,
        "a rule delivers to Lambda, SQS, SNS, Step Functions and buses (one bus hop at most), "
        "with its input",
    ),
    Patch(
        EventTemplateParser,
        "parse",
        ("input_template", "input_paths_map", "event"),
        _checked_paths,
        "moto's own InputTransformer (log groups, archives, API destinations) evaluates "
        "EventBridge's JSON path only (no filter, deep scan or arithmetic)",
    ),
)

__all__ = [
    "PATCHES",
    "deliver",
    "is_bus",
    "path_value",
    "public_event",
    "target_input",
    "transformed",
    "wait_delivered",
]
