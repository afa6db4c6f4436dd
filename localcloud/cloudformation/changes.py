"""What an update changes, as CloudFormation lists it in a change set: compared resource
by resource after the SAM transform (so ``Globals`` and the resources SAM generates are
compared as CloudFormation compares them)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from moto.cloudformation.models import Change

from localcloud.cloudformation.provider import Deployment
from localcloud.cloudformation.template import Template


def update_changes(previous: Deployment, deployed: Template) -> list[Change]:
    """An update's changes as CloudFormation lists them, resource by resource of the
    templates as deployed (after the transform, so ``Globals`` and the resources SAM
    generates are compared as CloudFormation compares them): ``Add`` for a new resource,
    ``Modify`` for one whose definition or whose parameters (directly or through a
    condition) changed, ``Remove`` for one the template no longer has."""
    changes: list[Change] = []
    for logical_id, resource in deployed.resources.items():
        kind = str(resource.get("Type"))
        if logical_id not in previous.refs:
            changes.append(Change("Add", logical_id, kind))
        elif _changed(previous.template, deployed, logical_id):
            changes.append(Change("Modify", logical_id, kind))
    changes += [
        Change("Remove", logical_id, str(previous.template.resources[logical_id]["Type"]))
        for logical_id in previous.refs
        if logical_id not in deployed.resources and logical_id in previous.template.resources
    ]
    return changes


def _changed(old: Template, new: Template, logical_id: str) -> bool:
    """Whether ``logical_id``'s definition, or anything it depends on, differs: a
    parameter it names directly or through a condition, or the definition of a condition
    it uses. ``Metadata`` is left out: CloudFormation updates no resource for it alone
    (``sam build`` adds ``SamResourceId`` to every resource)."""

    def definition(template: Template) -> dict[str, Any]:
        resource = template.resources.get(logical_id, {})
        return {k: v for k, v in resource.items() if k != "Metadata"}

    after = definition(new)
    if definition(old) != after:
        return True
    parameters, conditions = _references([after], new)
    old_conditions = old.body.get("Conditions", {})
    new_conditions = new.body.get("Conditions", {})
    return any(old.parameters.get(name) != new.parameters.get(name) for name in parameters) or any(
        old_conditions.get(name) != new_conditions.get(name) for name in conditions
    )


def _references(value: Any, template: Template) -> tuple[set[str], set[str]]:
    """The parameters and the conditions a template value uses: ``Ref``, ``${Name}`` in
    ``Fn::Sub``, and the conditions it names (``Condition``, ``Fn::If``) with what they
    use in turn."""
    names: set[str] = set()
    conditions: Mapping[str, Any] = template.body.get("Conditions", {})
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if isinstance(node, str):
            names.update(re.findall(r"\$\{([A-Za-z0-9]+)\}", node))
            return
        if not isinstance(node, dict):
            return
        for key, item in node.items():
            if key == "Ref" and isinstance(item, str):
                names.add(item)
            elif key in ("Condition", "Fn::If"):  # (an IAM policy's Condition is a map)
                condition = item[0] if key == "Fn::If" and isinstance(item, list) else item
                if isinstance(condition, str) and condition not in seen:
                    seen.add(condition)
                    walk(conditions.get(condition))
            walk(item)

    walk(value)
    return {name for name in names if name in template.parameters}, seen
