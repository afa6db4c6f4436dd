"""EventBridge's CloudFormation types:

- ``AWS::Events::EventBus``: a custom bus (``Name``).
- ``AWS::Events::Rule``: a rule with its targets, on the default bus or the one
  ``EventBusName`` names (the SAM transform makes one per ``EventBridgeRule``,
  ``CloudWatchEvent`` or ``Schedule`` event). A pattern rule delivers what matches to
  its targets (:mod:`.delivery`); a schedule rule fires on its schedule (:mod:`.schedules`).
- ``AWS::Scheduler::Schedule`` (SAM's ``ScheduleV2``): an EventBridge Scheduler schedule,
  fired on its schedule with its target's ``Input``; ``AWS::Scheduler::ScheduleGroup``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, physical_name, refuse_unknown
from localcloud.services.events.schedules import ScheduleError, parse

TARGET_KEYS: Final = {
    "Arn",
    "Id",
    "RoleArn",
    "Input",
    "InputPath",
    "InputTransformer",
    "DeadLetterConfig",
    "RetryPolicy",
    "SqsParameters",
}


class EventBusProvider(Provider):
    TYPE = "AWS::Events::EventBus"
    PROPERTIES = frozenset({"Name", "Description", "Tags"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = str(properties.get("Name") or physical_name(stack, logical_id, 256))
        kwargs: dict[str, Any] = {"Name": name}
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        arn = stack.client("events").create_event_bus(**kwargs)["EventBusArn"]
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Name")] = name

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("events").delete_event_bus(Name=stack.refs[logical_id])


class RuleProvider(Provider):
    TYPE = "AWS::Events::Rule"
    PROPERTIES = frozenset(
        {
            "ScheduleExpression",
            "EventPattern",
            "State",
            "Targets",
            "Description",
            "Name",
            "EventBusName",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        events = stack.client("events")
        name = str(properties.get("Name") or physical_name(stack, logical_id, 64))
        state = str(properties.get("State", "ENABLED"))
        kwargs: dict[str, Any] = {"Name": name, "State": state}
        bus = str(properties.get("EventBusName") or "")
        if bus:
            kwargs["EventBusName"] = bus
        if "ScheduleExpression" in properties:
            kwargs["ScheduleExpression"] = str(properties["ScheduleExpression"])
            check_expression(
                str(properties["ScheduleExpression"]), f"{logical_id}.ScheduleExpression"
            )
        if "EventPattern" in properties:
            pattern = properties["EventPattern"]
            kwargs["EventPattern"] = pattern if isinstance(pattern, str) else json.dumps(pattern)
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        arn = events.put_rule(**kwargs)["RuleArn"]
        targets = []
        for index, target in enumerate(properties.get("Targets", [])):
            refuse_unknown(target, TARGET_KEYS, f"{logical_id}.Targets[{index}]", "Target")
            targets.append(_target(target))
        if targets:
            extra = {"EventBusName": bus} if bus else {}
            events.put_targets(Rule=name, Targets=targets, **extra)
        stack.refs[logical_id] = name if not bus else f"{bus}|{name}"
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Targets")] = [t["Id"] for t in targets]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        events = stack.client("events")
        bus, _, name = str(stack.refs[logical_id]).rpartition("|")
        extra = {"EventBusName": bus} if bus else {}
        targets = stack.attributes[(logical_id, "Targets")]
        if targets:
            events.remove_targets(Rule=name, Ids=targets, **extra)
        events.delete_rule(Name=name, **extra)


def check_expression(expression: str, where: str) -> None:
    """Refuse a schedule expression EventBridge would refuse, or the local cloud cannot
    schedule.

    Raises:
        UnsupportedTemplate: naming ``where`` and why.
    """
    try:
        parse(expression)
    except ScheduleError as exc:
        raise UnsupportedTemplate(where, str(exc)) from exc


SCHEDULE_TARGET_KEYS: Final = {
    "Arn",
    "RoleArn",
    "Input",
    "RetryPolicy",
    "DeadLetterConfig",
    "SqsParameters",
}


class ScheduleGroupProvider(Provider):
    TYPE = "AWS::Scheduler::ScheduleGroup"
    PROPERTIES = frozenset({"Name", "Tags"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = str(properties.get("Name") or physical_name(stack, logical_id, 64))
        arn = stack.client("scheduler").create_schedule_group(Name=name)["ScheduleGroupArn"]
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("scheduler").delete_schedule_group(Name=stack.refs[logical_id])


class ScheduleProvider(Provider):
    TYPE = "AWS::Scheduler::Schedule"
    PROPERTIES = frozenset(
        {
            "Name",
            "GroupName",
            "Description",
            "ScheduleExpression",
            "ScheduleExpressionTimezone",
            "FlexibleTimeWindow",
            "Target",
            "State",
        }
    )
    """``StartDate`` and ``EndDate`` are refused by name: the clock does not apply them."""

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = str(properties.get("Name") or physical_name(stack, logical_id, 64))
        expression = str(properties["ScheduleExpression"])
        check_expression(expression, f"{logical_id}.ScheduleExpression")
        target = dict(properties["Target"])
        refuse_unknown(target, SCHEDULE_TARGET_KEYS, f"{logical_id}.Target", "Target")
        if str(target["Arn"]).split(":")[2:3] not in (
            ["lambda"],
            ["sqs"],
            ["sns"],
            ["states"],
        ):
            raise UnsupportedTemplate(
                f"{logical_id}.Target.Arn",
                "only Lambda, SQS, SNS and Step Functions targets are delivered locally (an "
                "event bus and the universal targets, arn:aws:scheduler:::aws-sdk:…, are not)",
            )
        kwargs: dict[str, Any] = {
            "Name": name,
            "ScheduleExpression": expression,
            "FlexibleTimeWindow": _plain(properties.get("FlexibleTimeWindow") or {"Mode": "OFF"}),
            "Target": _plain(target),
            "State": str(properties.get("State", "ENABLED")),
        }
        for key in ("GroupName", "Description", "ScheduleExpressionTimezone"):
            if key in properties:
                kwargs[key] = str(properties[key])
        arn = stack.client("scheduler").create_schedule(**kwargs)["ScheduleArn"]
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Group")] = str(properties.get("GroupName") or "default")

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("scheduler").delete_schedule(
            Name=stack.refs[logical_id], GroupName=stack.attributes[(logical_id, "Group")]
        )


def _target(target: Mapping[str, Any]) -> dict[str, Any]:
    """A template's target as PutTargets takes it: ``Input`` a JSON text, the structured
    keys as written."""
    made: dict[str, Any] = {}
    for key, value in target.items():
        if key == "Input" and not isinstance(value, str):
            made[key] = json.dumps(value)
        elif key in {"InputTransformer", "DeadLetterConfig", "RetryPolicy", "SqsParameters"}:
            made[key] = _plain(value)
        else:
            made[key] = str(value)
    return made


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            key: (
                json.dumps(item)
                if key == "InputTemplate" and not isinstance(item, str)
                else _plain(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    return str(value)


PROVIDERS: Final = (
    EventBusProvider(),
    RuleProvider(),
    ScheduleGroupProvider(),
    ScheduleProvider(),
)
