"""The account at a glance, for ``status`` and the live view: every queue with its
depths, the event source mappings and the other event sources (rules, schedules,
subscriptions, bucket notifications), one page of each table, each state machine with its
newest executions and their task events, whoever made them (the stack, ``sam deploy``,
AWS CLI commands). A resource seen once and deleted since stays listed as gone. A
bounded read whatever the account holds (the first :data:`RESOURCES_SHOWN` of each kind,
one ``Scan`` page per table, the newest executions, long texts cut).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.state.reads import Target


def _gone(exc: ClientError) -> bool:
    code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
    return any(
        word in code
        for word in (
            "NonExistent",
            "NotFound",
            "DoesNotExist",
            "ResourceNotFound",
            "StateMachineDoesNotExist",
        )
    )


RESOURCES_SHOWN = 20
"""Queues, tables and state machines the live view lists, at most, of each kind."""


def queues(target: Target, urls: list[str]) -> list[dict[str, Any]]:
    """The queues at ``urls``: name, visible, in flight, redrive (``gone`` once deleted)."""
    sqs = target.client("sqs")
    found = []
    for url in urls:
        name = url.rsplit("/", 1)[-1]
        try:
            attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])[
                "Attributes"
            ]
        except ClientError as exc:  # a deleted queue is shown as gone
            if not _gone(exc):
                raise
            found.append({"name": name, "gone": True})
            continue
        redrive = json.loads(attributes.get("RedrivePolicy", "{}") or "{}")
        target_arn = str(redrive.get("deadLetterTargetArn", ""))
        found.append(
            {
                "name": name,
                "gone": False,
                "visible": int(attributes.get("ApproximateNumberOfMessages", 0)),
                "in_flight": int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
                "redrive": f"after {redrive['maxReceiveCount']} receives to "
                f"{target_arn.rsplit(':', 1)[-1]}"
                if redrive
                else "—",
                "visibility_timeout": attributes.get("VisibilityTimeout"),
            }
        )
    return found


def mapping_source(arn: str) -> str:
    """What a mapping reads, named for a person: a queue's name, ``<stream> (Kinesis)``,
    ``<table> (DynamoDB stream)``; any other ARN's resource part."""
    parts = arn.split(":", 5)
    if len(parts) < 6:
        return arn
    service, resource = parts[2], parts[5]
    if service == "kinesis" and resource.startswith("stream/"):
        return f"{resource.split('/', 1)[1]} (Kinesis)"
    if service == "dynamodb" and "/stream/" in resource:
        return f"{resource.split('/')[1]} (DynamoDB stream)"
    return resource


def mappings(target: Target) -> list[dict[str, Any]]:
    """The event source mappings (the first :data:`MAPPINGS_SHOWN`): source, function,
    batch size, state, where a stream's starting position and discarded batches go."""
    listed = target.client("lambda").list_event_source_mappings(MaxItems=MAPPINGS_SHOWN)
    return [
        {
            "uuid": mapping["UUID"],
            "source": mapping_source(str(mapping.get("EventSourceArn", ""))),
            "function": str(mapping.get("FunctionArn", "")).rsplit(":", 1)[-1],
            "batch_size": mapping.get("BatchSize"),
            "state": mapping.get("State"),
            "response_types": ", ".join(mapping.get("FunctionResponseTypes") or []),
            "starting_position": mapping.get("StartingPosition") or "",
            "on_failure": _short_arn(
                str(
                    ((mapping.get("DestinationConfig") or {}).get("OnFailure") or {}).get(
                        "Destination"
                    )
                    or ""
                )
            ),
        }
        for mapping in listed.get("EventSourceMappings", [])
    ]


def _short_arn(arn: str) -> str:
    """The resource part of an ARN (a function's or queue's name, a state machine's)."""
    return arn.rsplit(":", 1)[-1] if arn.startswith("arn:") else arn


def event_sources(target: Target) -> list[dict[str, Any]]:
    """What else sends events to the account's functions, queues, topics and state
    machines (the first :data:`RESOURCES_SHOWN` of each kind): EventBridge rules with
    their pattern or schedule, Scheduler schedules, SNS subscriptions and S3 bucket
    notifications; each ``{"kind", "source", "trigger", "targets", "state"}``."""
    found: list[dict[str, Any]] = []
    events = target.client("events")
    for bus in events.list_event_buses(Limit=RESOURCES_SHOWN).get("EventBuses", []):
        listed = events.list_rules(EventBusName=bus["Name"], Limit=RESOURCES_SHOWN)
        for rule in listed.get("Rules", []):
            targets = events.list_targets_by_rule(Rule=rule["Name"], EventBusName=bus["Name"])
            schedule = rule.get("ScheduleExpression")
            found.append(
                {
                    "kind": "schedule rule" if schedule else "EventBridge rule",
                    "source": rule["Name"]
                    if bus["Name"] == "default"
                    else f"{bus['Name']}/{rule['Name']}",
                    "trigger": _cut(schedule or rule.get("EventPattern") or ""),
                    "targets": [_short_arn(t["Arn"]) for t in targets.get("Targets", [])],
                    "state": rule.get("State", ""),
                }
            )
    scheduler = target.client("scheduler")
    for listed_schedule in scheduler.list_schedules(MaxResults=RESOURCES_SHOWN).get(
        "Schedules", []
    ):
        group = listed_schedule.get("GroupName", "default")
        found.append(
            {
                "kind": "Scheduler schedule",
                "source": f"{group}/{listed_schedule['Name']}",
                "trigger": "",
                "targets": [_short_arn(listed_schedule.get("Target", {}).get("Arn", ""))],
                "state": listed_schedule.get("State", ""),
            }
        )
    for subscription in (
        target.client("sns").list_subscriptions().get("Subscriptions", [])[:RESOURCES_SHOWN]
    ):
        found.append(
            {
                "kind": f"SNS subscription ({subscription['Protocol']})",
                "source": _short_arn(subscription["TopicArn"]),
                "trigger": "",
                "targets": [_short_arn(subscription["Endpoint"])],
                "state": "",
            }
        )
    s3 = target.client("s3")
    for bucket in s3.list_buckets().get("Buckets", [])[:RESOURCES_SHOWN]:
        try:
            configuration = s3.get_bucket_notification_configuration(Bucket=bucket["Name"])
        except ClientError:
            continue
        for key, arn_key in (
            ("LambdaFunctionConfigurations", "LambdaFunctionArn"),
            ("QueueConfigurations", "QueueArn"),
            ("TopicConfigurations", "TopicArn"),
        ):
            for notification in configuration.get(key, []):
                found.append(
                    {
                        "kind": "S3 notification",
                        "source": bucket["Name"],
                        "trigger": ", ".join(notification.get("Events", [])),
                        "targets": [_short_arn(notification[arn_key])],
                        "state": "",
                    }
                )
        if "EventBridgeConfiguration" in configuration:
            found.append(
                {
                    "kind": "S3 notification",
                    "source": bucket["Name"],
                    "trigger": "every event",
                    "targets": ["the default event bus"],
                    "state": "",
                }
            )
    return found


def _plain(value: Mapping[str, Any]) -> Any:
    """A low-level DynamoDB attribute value as plain JSON (S, N, SS, BOOL, NULL)."""
    ((kind, inner),) = value.items()
    if kind == "N":
        return int(inner) if str(inner).lstrip("-").isdigit() else str(inner)
    if kind == "SS":
        return sorted(inner)
    if kind == "NULL":
        return None
    return inner


TABLE_PAGE_ITEMS = 25
"""Items of one page of a table in the live view and ``status``."""
MAPPINGS_SHOWN = 50
"""Event source mappings the live view lists, at most."""


def table_page(
    target: Target, name: str, *, start: str | None = None, limit: int = TABLE_PAGE_ITEMS
) -> dict[str, Any]:
    """One page of the table ``name``: at most ``limit`` items, read by one
    ``Scan`` with ``Limit`` (so a refresh reads the same few items however large the
    table is), from the key ``start`` on (exclusive), and the table's ``ItemCount`` from
    ``DescribeTable`` (DynamoDB refreshes it about every six hours; the emulator's is
    exact). A key is the value of a table whose key is one string attribute, else the
    JSON of ``LastEvaluatedKey`` (:func:`page_key`).

    Returns:
        ``{"name", "gone", "count", "columns", "items", "next"}``; ``columns`` are the
        attribute names of the page's items (the key's first); ``next`` is the key the
        following page starts after, ``None`` on the last page; ``gone`` once the table
        is deleted.
    """
    dynamodb = target.client("dynamodb")
    kwargs: dict[str, Any] = {"TableName": name, "Limit": limit}
    try:
        table = dynamodb.describe_table(TableName=name)["Table"]
        key = [k["AttributeName"] for k in table.get("KeySchema", [])]
        types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}
        single = len(key) == 1 and types.get(key[0]) == "S"
        first = (
            None
            if start is None
            else {key[0]: {"S": start}}
            if single
            else _start(start, key, types)
        )
        if first is not None:
            kwargs["ExclusiveStartKey"] = first
        page = dynamodb.scan(**kwargs)
    except ClientError as exc:  # a deleted table is shown as gone
        if not _gone(exc):
            raise
        return {"name": name, "gone": True, "count": 0, "columns": [], "items": [], "next": None}
    items = [{k: _plain(v) for k, v in item.items()} for item in page["Items"]]
    columns = sorted(
        {k for item in items for k in item},
        key=lambda k: (k not in key, key.index(k) if k in key else 0, k),
    )
    return {
        "name": name,
        "gone": False,
        "count": int(table.get("ItemCount", 0)),
        "columns": columns,
        "items": items,
        "next": page_key(page.get("LastEvaluatedKey"), single),
    }


def page_key(last: Mapping[str, Any] | None, single: bool) -> str | None:
    """The key a following page starts after, as text: the string value of a one-string
    key, else ``LastEvaluatedKey`` as JSON; ``None`` on the last page."""
    if not last:
        return None
    if single:
        ((value,),) = (v.values() for v in last.values())
        return str(value)
    return json.dumps(last, sort_keys=True, separators=(",", ":"))


def _start(text: str, key: list[str], types: Mapping[str, str]) -> dict[str, Any] | None:
    """``ExclusiveStartKey`` from a JSON page key: each of the key's attributes with a
    value of its declared type (``{"pk": {"S": "a"}, "n": {"N": "3"}}``). Anything else
    (a hand-typed or edited URL) is ``None``: the first page."""
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(parsed, dict) or sorted(parsed) != sorted(key):
        return None
    for attribute, value in parsed.items():
        kind = types.get(attribute, "S")
        if not (isinstance(value, dict) and list(value) == [kind]):
            return None
        inner = value[kind]
        if not isinstance(inner, str) or (kind == "N" and not _number(inner)):
            return None
    return parsed


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


HISTORY_EVENTS_SHOWN = 200
"""Events of one execution's history the live view reads, at most: the newest (a page of
GetExecutionHistory in reverse order), so that a long execution shows where it is or
where it failed."""
TEXT_SHOWN = 1000
"""Characters of an execution's input or output the live view sends, at most (Step
Functions allows 256 KiB)."""


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_SHOWN:
        return text
    return f"{text[: TEXT_SHOWN - 1]}…"


def executions(target: Target, arn: str, limit: int = 20) -> dict[str, Any]:
    """The state machine ``arn``'s newest executions with each task event and the output."""
    sfn = target.client("stepfunctions")
    try:
        listed = sfn.list_executions(stateMachineArn=arn, maxResults=limit)["executions"]
    except ClientError as exc:  # a deleted state machine is shown as gone
        if not _gone(exc):
            raise
        return {"name": arn.rsplit(":", 1)[-1], "gone": True, "executions": []}
    shown = []
    for summary in listed:
        described = sfn.describe_execution(executionArn=summary["executionArn"])
        newest = sfn.get_execution_history(
            executionArn=summary["executionArn"],
            maxResults=HISTORY_EVENTS_SHOWN,
            reverseOrder=True,
        )["events"]
        history = newest[::-1]
        shown.append(
            {
                "name": str(summary.get("name") or summary["executionArn"].rsplit(":", 1)[-1]),
                "status": described["status"],
                "started": described["startDate"].timestamp(),
                "input": _cut(described.get("input")),
                "output": _cut(described.get("output")),
                "tasks": task_events(history),
                **failure(described, history),
            }
        )
    return {"name": arn.rsplit(":", 1)[-1], "gone": False, "executions": shown}


ENDED_BADLY: Final = frozenset({"FAILED", "TIMED_OUT", "ABORTED"})
"""Execution statuses that end with an error and a cause (DescribeExecution)."""


def failure(described: Mapping[str, Any], history: list[Mapping[str, Any]]) -> dict[str, str]:
    """A failed, timed-out or aborted execution's ``error``, ``cause`` (cut) and the
    ``state`` it failed in: the last state entered and never exited (empty when it failed
    between states); ``{}`` for any other status."""
    if described["status"] not in ENDED_BADLY:
        return {}
    open_states: list[str] = []
    for event in history:
        kind = event["type"]
        if kind.endswith("StateEntered"):
            open_states.append(event["stateEnteredEventDetails"]["name"])
        elif kind.endswith("StateExited") and open_states:
            open_states.pop()
    return {
        "error": str(described.get("error") or ""),
        "cause": _cut(str(described.get("cause") or "")) or "",
        "failed_state": open_states[-1] if open_states else "",
    }


def task_events(history: list[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Each task event of an execution history: state, scheduled/failed/succeeded, error."""
    events = []
    state = ""
    kinds = {"TaskScheduled": "scheduled", "TaskFailed": "failed", "TaskSucceeded": "succeeded"}
    for event in history:
        kind = event["type"]
        if kind.endswith("StateEntered"):
            state = event["stateEnteredEventDetails"]["name"]
        elif kind in kinds:
            error = event.get("taskFailedEventDetails", {}).get("error", "")
            events.append({"state": state, "event": kinds[kind], "error": error})
    return events


class Seen:
    """What the account has held: a queue, table or state machine listed once and deleted
    since is still shown, as gone, a state machine with the executions last read (the
    history stays after a cleanup)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, dict[str, None]] = {}
        self._executions: dict[str, list[dict[str, Any]]] = {}

    def machine(self, read: dict[str, Any], arn: str) -> dict[str, Any]:
        """``read`` (of :func:`executions`), or, once the state machine is gone, the
        executions last read, marked gone."""
        with self._lock:
            if not read["gone"]:
                self._executions[arn] = read["executions"]
                return read
            return {**read, "executions": self._executions.get(arn, [])}

    def add(self, kind: str, listed: list[str]) -> list[str]:
        """Everything of ``kind`` listed now or before, in the order first seen."""
        with self._lock:
            known = self._kinds.setdefault(kind, {})
            known.update(dict.fromkeys(listed))
            return list(known)[-RESOURCES_SHOWN:]


def _listed(target: Target) -> tuple[list[str], list[str], list[str]]:
    """(queue URLs, table names, state machine ARNs) of the account now, the first
    :data:`RESOURCES_SHOWN` of each."""
    urls = target.client("sqs").list_queues(MaxResults=RESOURCES_SHOWN).get("QueueUrls", [])
    tables = target.client("dynamodb").list_tables(Limit=RESOURCES_SHOWN)["TableNames"]
    machines = [
        m["stateMachineArn"]
        for m in target.client("stepfunctions").list_state_machines(maxResults=RESOURCES_SHOWN)[
            "stateMachines"
        ]
    ]
    return sorted(urls), sorted(tables), machines


def remember(target: Target, seen: Seen) -> None:
    """Add what the account holds now to ``seen``."""
    urls, tables, machines = _listed(target)
    seen.add("queue", urls)
    seen.add("table", tables)
    seen.add("machine", machines)


def account_state(
    target: Target, seen: Seen, *, after: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Everything ``status`` and the live view show, read once through the public APIs.

    Args:
        seen: what earlier reads listed (deleted resources show as gone).
        after: table name → the business key its page starts after.

    Returns:
        ``{"queues", "mappings", "event_sources", "tables", "state_machines"}``: lists of
        the dicts of :func:`queues`, :func:`mappings`, :func:`event_sources`,
        :func:`table_page` and :func:`executions`.
    """
    after = after or {}
    urls, tables, machines = _listed(target)
    return {
        "queues": queues(target, seen.add("queue", urls)),
        "mappings": mappings(target),
        "event_sources": event_sources(target),
        "tables": [
            table_page(target, name, start=after.get(name)) for name in seen.add("table", tables)
        ],
        "state_machines": [
            seen.machine(executions(target, arn), arn) for arn in seen.add("machine", machines)
        ],
    }
