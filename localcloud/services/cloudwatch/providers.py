"""The service's CloudFormation types, one provider each:

- ``AWS::CloudWatch::Alarm``: a metric alarm on one metric or on metric math. CloudWatch
  metrics are not recorded locally, so the alarm is created and never changes state.
- ``AWS::CloudWatch::Dashboard``: ``PutDashboard`` with the body the template resolves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import (
    ACCOUNT_ID,
    Deployment,
    Provider,
    flag,
    physical_name,
    refuse_unknown,
)

SINGLE_METRIC: Final = frozenset({"Namespace", "MetricName", "Dimensions", "Statistic", "Period"})
QUERY_KEYS: Final = {"Id", "Expression", "Label", "MetricStat", "ReturnData", "Period"}
STAT_KEYS: Final = {"Metric", "Period", "Stat", "Unit"}


class AlarmProvider(Provider):
    TYPE = "AWS::CloudWatch::Alarm"
    PROPERTIES = frozenset(
        {
            "AlarmDescription",
            *SINGLE_METRIC,
            "Metrics",
            "EvaluationPeriods",
            "Threshold",
            "ComparisonOperator",
            "TreatMissingData",
            "AlarmActions",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        """One metric (``Namespace``, ``MetricName`` …) or metric math (``Metrics``), never
        both, as ``PutMetricAlarm`` requires; ``AlarmActions`` as given (``Fn::If`` …
        ``AWS::NoValue`` leaves none)."""
        name = physical_name(stack, logical_id, 255)
        kwargs: dict[str, Any] = {
            "AlarmName": name,
            "AlarmDescription": properties.get("AlarmDescription", ""),
            "EvaluationPeriods": int(properties["EvaluationPeriods"]),
            "Threshold": float(properties["Threshold"]),
            "ComparisonOperator": properties["ComparisonOperator"],
            "TreatMissingData": properties.get("TreatMissingData", "missing"),
            "AlarmActions": [str(action) for action in properties.get("AlarmActions", [])],
        }
        single = sorted(SINGLE_METRIC & set(properties))
        if "Metrics" in properties:
            if single:
                raise UnsupportedTemplate(
                    f"{logical_id}.{single[0]}", "Metrics and a single metric exclude each other"
                )
            kwargs["Metrics"] = [
                _query(query, f"{logical_id}.Metrics[{i}]")
                for i, query in enumerate(properties["Metrics"])
            ]
        else:
            kwargs.update(
                Namespace=properties["Namespace"],
                MetricName=properties["MetricName"],
                Dimensions=list(properties.get("Dimensions", [])),
                Statistic=properties["Statistic"],
                Period=int(properties["Period"]),
            )
        stack.client("cloudwatch").put_metric_alarm(**kwargs)
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = (
            f"arn:aws:cloudwatch:{stack.region}:{ACCOUNT_ID}:alarm:{name}"
        )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("cloudwatch").delete_alarms(AlarmNames=[stack.refs[logical_id]])


def _query(query: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One ``MetricDataQuery`` of ``Metrics``, unknown keys refused."""
    refuse_unknown(query, QUERY_KEYS, where, "MetricDataQuery")
    result = dict(query)
    if "MetricStat" in query:
        stat = query["MetricStat"]
        refuse_unknown(stat, STAT_KEYS, f"{where}.MetricStat", "MetricStat")
        result["MetricStat"] = {**stat, "Period": int(stat["Period"])}
    if "ReturnData" in query:
        result["ReturnData"] = flag(query["ReturnData"])
    return result


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


PROVIDERS: Final = (AlarmProvider(), DashboardProvider())
