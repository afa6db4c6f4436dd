"""AWS's own service events that the local cloud sees happen, put on the account's default
bus in AWS's documented shape, so that rules matching ``aws.*`` sources fire.

- EC2 (``InstanceBackend.run_instances``, ``start_instances``, ``stop_instances``,
  ``terminate_instances``): ``EC2 Instance State-change Notification`` with
  ``detail: {"instance-id", "state"}`` and the instance's ARN in ``resources``, one event
  per state the instance passes: ``pending`` and ``running`` on run and start,
  ``stopping`` and ``stopped`` on stop, ``shutting-down`` and ``terminated`` on terminate
  (moto reaches the last state at once; EC2 passes through the first). Source: "Amazon EC2
  instance state-change events" in the EC2 user guide.
- ``RunInstances`` with ``ImageId=resolve:ssm:<parameter>`` (the EC2 API resolves an SSM
  parameter to an AMI id, "Use a Systems Manager parameter instead of an AMI ID"): moto
  keeps the text as the image id; here it is the parameter's value (moto's SSM holds AWS's
  public ``/aws/service/ami-amazon-linux-latest/…`` parameters), and an unknown parameter
  is refused with ``InvalidParameterValue`` before any instance is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models.instances import InstanceBackend

from localcloud.patches.registry import Method, Patch

RESOLVE_SSM: Final = "resolve:ssm:"
DETAIL_TYPE: Final = "EC2 Instance State-change Notification"


def state_changes(backend: Any, instance_ids: Iterable[str], states: Iterable[str]) -> None:
    """Put one state-change notification per instance and state on the default bus."""
    from moto.events.models import events_backends

    account, region = backend.account_id, backend.region_name
    entries = [
        {
            "Source": "aws.ec2",
            "DetailType": DETAIL_TYPE,
            "Detail": json.dumps({"instance-id": instance_id, "state": state}),
            "Resources": [f"arn:aws:ec2:{region}:{account}:instance/{instance_id}"],
        }
        for instance_id in instance_ids
        for state in states
    ]
    if entries:
        events_backends[account][region].put_events(entries)


def resolved_image(backend: Any, image_id: str) -> str:
    """The AMI id ``resolve:ssm:<parameter>`` stands for; any other id as given.

    Raises:
        EC2ClientError: ``InvalidParameterValue``, the parameter is not in SSM.
    """
    if not image_id.startswith(RESOLVE_SSM):
        return image_id
    from moto.ssm.models import ssm_backends

    name = image_id[len(RESOLVE_SSM) :]
    try:
        parameter = ssm_backends[backend.account_id][backend.region_name].get_parameter(name)
    except Exception:  # noqa: BLE001 - a malformed name is not found either
        parameter = None
    if parameter is None:
        raise EC2ClientError(
            "InvalidParameterValue",
            f"Invalid value '{image_id}' for parameter 'ImageId': SSM parameter {name} not found",
        )
    return str(parameter.value)


def _run_instances(original: Method) -> Method:
    def run_instances(
        self: InstanceBackend,
        image_id: str,
        count: int,
        user_data: Any,
        security_group_names: list[str],
        **kwargs: Any,
    ) -> Any:
        image = resolved_image(self, image_id)
        reservation = original(self, image, count, user_data, security_group_names, **kwargs)
        state_changes(self, [i.id for i in reservation.instances], ("pending", "running"))
        return reservation

    return run_instances


def _changing(states: tuple[str, ...]) -> Any:
    def make(original: Method) -> Method:
        def change(self: InstanceBackend, instance_ids: list[str]) -> Any:
            changed = original(self, instance_ids)
            state_changes(self, [instance.id for instance, _ in changed], states)
            return changed

        return change

    return make


PATCHES: Final = (
    Patch(
        InstanceBackend,
        "run_instances",
        ("self", "image_id", "count", "user_data", "security_group_names"),
        _run_instances,
        "resolve:ssm: image ids; new instances' state changes reach EventBridge",
    ),
    Patch(
        InstanceBackend,
        "start_instances",
        ("self", "instance_ids"),
        _changing(("pending", "running")),
        "a started instance's state changes reach EventBridge",
    ),
    Patch(
        InstanceBackend,
        "stop_instances",
        ("self", "instance_ids"),
        _changing(("stopping", "stopped")),
        "a stopped instance's state changes reach EventBridge",
    ),
    Patch(
        InstanceBackend,
        "terminate_instances",
        ("self", "instance_ids"),
        _changing(("shutting-down", "terminated")),
        "a terminated instance's state changes reach EventBridge",
    ),
)

__all__ = ["DETAIL_TYPE", "PATCHES", "resolved_image", "state_changes"]
