"""moto's CloudFormation, deploying applications with the local deployer.

moto's CloudFormation cannot run this kind of application (its resources would not run
the handlers), so an *application* change set (one that declares the SAM transform) is
planned and carried out by :mod:`localcloud.cloudformation.changesets`, with
CloudFormation's statuses, events and rollbacks;
every other change set (SAM CLI's managed bucket stack) stays moto's, with its Outputs
computed after execution (moto leaves a stack created by a change set without them):

- ``CloudFormationBackend.create_change_set``, ``execute_change_set``, ``delete_stack``;
- ``describe_stack_resources`` and ``list_stack_resources`` list a local stack's real
  resources with their physical ids (:mod:`localcloud.cloudformation.stacks`);
- ``CloudFormationResponse._get_stack_from_s3_url``: ``TemplateURL`` is read from the
  local S3 whatever host it names (SAM CLI builds it from the endpoint,
  ``http://127.0.0.1:5000/bucket/key``, which moto parses as a virtual-hosted bucket
  named ``127``), and refused over CloudFormation's 1,000,000 bytes.

How moto parses a template, and what a request may carry, is :mod:`.api_templates`'s.
"""

from __future__ import annotations

from typing import Any, Final, cast
from urllib.parse import urlparse

from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import CloudFormationBackend
from moto.cloudformation.responses import CloudFormationResponse
from moto.cloudformation.utils import get_stack_from_s3_url

from localcloud.cloudformation import changesets, execution, stacks
from localcloud.cloudformation.template_limits import TemplateRefused, check_template_size
from localcloud.patches.registry import Method, Patch


def _create_change_set(original: Method) -> Method:
    def create_change_set(
        self: CloudFormationBackend, *args: Any, **kwargs: Any
    ) -> tuple[str, str]:
        """moto's arguments as moto passes them (by keyword), in moto's order (the
        registry checks it): stack_name, change_set_name, template, parameters, …"""
        template = kwargs["template"] if "template" in kwargs else args[2]
        host = changesets.host()
        if host is None or not changesets.is_application(template):
            created: tuple[str, str] = original(self, *args, **kwargs)
            return created
        return changesets.create(self, host, *args, **kwargs)

    return create_change_set


def _execute_change_set(original: Method) -> Method:
    def execute_change_set(
        self: CloudFormationBackend, change_set_name: str, stack_name: str | None = None
    ) -> None:
        change_set = changesets.find_change_set(self, change_set_name, stack_name)
        host = changesets.host()
        if isinstance(change_set, changesets.LocalChangeSet) and host is not None:
            execution.execute(self, host, change_set)
            return
        original(self, change_set.change_set_id, stack_name)
        stack = self.stacks[change_set.stack_id]
        # moto builds a stack's Outputs when the stack is created; one created by a
        # change set started from an empty template has none.
        stack._parse_template()
        stack.output_map = stack._create_output_map()

    return execute_change_set


def _delete_stack(original: Method) -> Method:
    def delete_stack(self: CloudFormationBackend, name_or_stack_id: str) -> None:
        host = changesets.host()
        if host is None or not execution.delete_stack(self, host, name_or_stack_id):
            original(self, name_or_stack_id)

    return delete_stack


def _describe(original: Method) -> Method:
    def describe_stack_resources(
        self: CloudFormationBackend, stack_name: str, logical_resource_id: str | None
    ) -> Any:
        # moto annotates logical_resource_id as str and passes None when the call has none
        stack, resources = original(self, stack_name, cast(str, logical_resource_id))
        found = stacks.listed(stack_name) or stacks.listed(getattr(stack, "stack_id", ""))
        if found is None:
            return stack, resources
        if logical_resource_id is not None:
            return stack, [r for r in found if r.logical_resource_id == logical_resource_id]
        return stack, found

    return describe_stack_resources


def _list(original: Method) -> Method:
    def list_stack_resources(self: CloudFormationBackend, stack_name_or_id: str) -> Any:
        stack, resources = original(self, stack_name_or_id)
        found = stacks.listed(stack_name_or_id) or stacks.listed(getattr(stack, "stack_id", ""))
        return stack, (resources if found is None else found)

    return list_stack_resources


def _template_from_url(_original: Method) -> Method:
    def get_stack_from_url(self: CloudFormationResponse, template_url: str) -> str:
        parsed = urlparse(template_url)
        host = parsed.hostname or ""
        if not host.endswith("amazonaws.com"):
            bucket, _, key = parsed.path.lstrip("/").partition("/")
            template_url = f"https://s3.amazonaws.com/{bucket}/{key}"
        text: str = get_stack_from_s3_url(
            template_url, account_id=self.current_account, partition=self.partition
        )
        try:
            check_template_size(text)
        except TemplateRefused as exc:
            raise ValidationError(message=exc.message) from exc
        return text

    return get_stack_from_url


PATCHES: Final = (
    Patch(
        CloudFormationBackend,
        "create_change_set",
        (
            "self",
            "stack_name",
            "change_set_name",
            "template",
            "parameters",
            "description",
            "change_set_type",
            "notification_arns",
            "tags",
            "role_arn",
        ),
        _create_change_set,
        "an application change set is planned with the SAM transform, as CloudFormation does",
    ),
    Patch(
        CloudFormationBackend,
        "execute_change_set",
        ("self", "change_set_name", "stack_name"),
        _execute_change_set,
        "an application change set is carried out by the local deployer",
    ),
    Patch(
        CloudFormationBackend,
        "delete_stack",
        ("self", "name_or_stack_id"),
        _delete_stack,
        "deleting an application stack deletes its resources, Retain aside",
    ),
    Patch(
        CloudFormationBackend,
        "describe_stack_resources",
        ("self", "stack_name", "logical_resource_id"),
        _describe,
        "a local stack lists the resources it made, with their physical ids",
    ),
    Patch(
        CloudFormationBackend,
        "list_stack_resources",
        ("self", "stack_name_or_id"),
        _list,
        "a local stack lists the resources it made, with their physical ids",
    ),
    Patch(
        CloudFormationResponse,
        "_get_stack_from_s3_url",
        ("self", "template_url"),
        _template_from_url,
        "SAM CLI's TemplateURL names the local endpoint; one over 1,000,000 bytes is refused",
    ),
)
