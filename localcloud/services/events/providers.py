"""``AWS::Events::Rule``: an EventBridge rule with its targets (the SAM transform makes one
per ``Schedule`` or ``EventBridgeRule`` event). The rule is created and listed; the local
cloud does not fire schedules (a note says so when one is enabled).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.provider import Deployment, Provider, physical_name, refuse_unknown

TARGET_KEYS: Final = {"Arn", "Id", "RoleArn", "Input"}


class RuleProvider(Provider):
    TYPE = "AWS::Events::Rule"
    PROPERTIES = frozenset(
        {"ScheduleExpression", "EventPattern", "State", "Targets", "Description", "Name"}
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        events = stack.client("events")
        name = str(properties.get("Name") or physical_name(stack, logical_id, 64))
        state = str(properties.get("State", "ENABLED"))
        kwargs: dict[str, Any] = {"Name": name, "State": state}
        if "ScheduleExpression" in properties:
            kwargs["ScheduleExpression"] = str(properties["ScheduleExpression"])
            if state == "ENABLED":
                stack.notes.append(
                    f"{logical_id}: schedule {properties['ScheduleExpression']} is created but "
                    "never fires locally; start its target by hand"
                )
        if "EventPattern" in properties:
            kwargs["EventPattern"] = json.dumps(properties["EventPattern"])
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        arn = events.put_rule(**kwargs)["RuleArn"]
        targets = []
        for index, target in enumerate(properties.get("Targets", [])):
            refuse_unknown(target, TARGET_KEYS, f"{logical_id}.Targets[{index}]", "Target")
            targets.append({key: str(value) for key, value in target.items()})
        if targets:
            events.put_targets(Rule=name, Targets=targets)
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Targets")] = [t["Id"] for t in targets]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        events = stack.client("events")
        name = stack.refs[logical_id]
        targets = stack.attributes[(logical_id, "Targets")]
        if targets:
            events.remove_targets(Rule=name, Ids=targets)
        events.delete_rule(Name=name)


PROVIDERS: Final = (RuleProvider(),)
