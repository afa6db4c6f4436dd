"""``AWS::CloudWatch::Dashboard``: ``PutDashboard`` with the body the template resolves."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.resources.base import Provider, physical_name

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class DashboardProvider(Provider):
    TYPE = "AWS::CloudWatch::Dashboard"
    PROPERTIES = frozenset({"DashboardBody"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        """The body must be JSON text (CloudFormation takes a string, CloudWatch parses it)."""
        body = properties["DashboardBody"]
        where = f"{logical_id}.DashboardBody"
        if not isinstance(body, str):
            raise UnsupportedTemplate(where, "must be a string of JSON (use Fn::Sub)")
        try:
            json.loads(body)
        except ValueError as exc:
            raise UnsupportedTemplate(where, f"not valid JSON once resolved: {exc}") from exc
        name = physical_name(stack, logical_id, 255)
        stack.client("cloudwatch").put_dashboard(DashboardName=name, DashboardBody=body)
        stack.refs[logical_id] = name

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("cloudwatch").delete_dashboards(DashboardNames=[stack.refs[logical_id]])


PROVIDER: Final = DashboardProvider()
