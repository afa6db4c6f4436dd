"""The local cloud from scratch: the seed scenarios, the demo and invoke commands,
samconfig environments, and templates it cannot honour (each test deploys its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import Template, load
from localcloud.state import task_attempts
from order_guard_tools import cli, commands, verify
from order_guard_tools.cloud import OrderGuardCloud, order_guard_template
from order_guard_tools.project import SAMCONFIG_PATH
from order_guard_tools.reads import run_execution
from order_guard_tools.reads import stored as state_stored
from order_guard_tools.scenarios import Report, load_event, queue_scenario, workflow_scenario
from tests.support.paths import ROOT


def failed(report: Report) -> list[str]:
    return [f"{c.label}: {c.detail}" for c in report.checks if not c.ok]


def test_seed_queue_scenario() -> None:
    with OrderGuardCloud(visibility_timeout=1) as fresh:
        report = queue_scenario(fresh)
    assert failed(report) == []
    assert len(report.checks) >= 14


def test_seed_workflow_scenario() -> None:
    with OrderGuardCloud() as fresh:
        report = workflow_scenario(fresh)
    assert failed(report) == []
    decisions = [row.decision for step in report.steps for row in step.rows]
    assert decisions == ["accepted", "duplicate", "duplicate", "accepted"]


def test_demo_command_exits_zero_and_shows_every_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    marks = [line.strip()[0] for line in out.splitlines() if line.strip()[:1] in ("✓", "✗")]
    assert marks.count("✗") == 0
    assert marks.count("✓") >= 25
    assert f"all expectations met: {len(marks)} ✓, 0 ✗" in out
    assert "visibility timeout 1 s locally (template: 60 s)" in out


def test_invoke_command_prints_response_and_logs(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(
        [
            "invoke",
            "WorkflowWorkerFunction",
            "-e",
            "events/workflow-after-write.json",
            "-e",
            "events/workflow-repeat.json",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0  # like sam local invoke: a function error is printed, not fatal
    assert "function error (Unhandled)" in out  # after-write raises on attempt 1, by design
    assert '"errorType": "TransientOrderError"' in out
    assert '"duplicate": true' in out
    assert "START RequestId:" in out


@pytest.mark.parametrize(
    "command",
    [
        ["demo"],
        ["serve", "--port", "1"],
        ["invoke", "QueueWorkerFunction", "-e", "events/sqs-first-order.json"],
        ["verify"],
    ],
    ids=lambda command: command[0],
)
def test_every_command_refuses_an_unknown_config_env(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([*command, "--config-env", "staging"]) == 2
    assert "samconfig.toml [staging]: no such environment" in capsys.readouterr().out


def test_invoke_takes_parameter_overrides_that_replace_samconfigs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As with sam deploy, the command line's list replaces samconfig's: fault modes are
    back at the template default (off) unless given again."""
    argv = ["invoke", "WorkflowWorkerFunction", "-e", "events/workflow-flaky.json"]
    assert cli.main([*argv, "--parameter-overrides", "BatchSize=3"]) == 0
    assert '"errorType": "InvalidOrder"' in capsys.readouterr().out
    assert cli.main([*argv, "--parameter-overrides", "FaultModesEnabled=true"]) == 0
    assert '"errorType": "TransientOrderError"' in capsys.readouterr().out


@pytest.mark.parametrize("command", ["verify", "demo"])
def test_a_command_playing_the_seed_workflow_refuses_parameters_without_fault_modes(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At once: nothing is deployed and no scenario starts, rather than the scenarios
    failing their checks."""

    def start(*_: object, **__: object) -> None:
        raise AssertionError(f"{command} deployed or played a scenario before refusing")

    monkeypatch.setattr(commands, "OrderGuardCloud", start)
    for module in (commands, verify):
        monkeypatch.setattr(module, "queue_scenario", start)
        monkeypatch.setattr(module, "workflow_scenario", start)
    assert cli.main([command, "--config-env", "prod"]) == 2
    out = capsys.readouterr().out
    assert "needs FaultModesEnabled=true" in out
    assert "(from samconfig.toml [prod])" in out


def test_samconfig_prod_parameters_reach_the_functions() -> None:
    with OrderGuardCloud(config_env="prod") as prod:
        worker = prod.function("WorkflowWorkerFunction")
        assert worker.environment["FAULT_MODES_ENABLED"] == "false"


def _template_with(tmp_path: Path, edit: str, replacement: str) -> Template:
    text = (ROOT / "template.yaml").read_text()
    assert edit in text
    path = tmp_path / "template.yaml"
    path.write_text(text.replace(edit, replacement, 1))
    return load(path, samconfig=SAMCONFIG_PATH)


def test_an_unsupported_property_fails_naming_resource_and_property(tmp_path: Path) -> None:
    template = _template_with(
        tmp_path,
        "      SqsManagedSseEnabled: true\n",
        "      SqsManagedSseEnabled: true\n      KmsDataKeyReusePeriodSeconds: 300\n",
    )
    with (
        pytest.raises(UnsupportedTemplate, match=r"JobsQueue\.KmsDataKeyReusePeriodSeconds"),
        OrderGuardCloud(template=template),
    ):
        pass


def test_an_unsupported_resource_type_fails_naming_the_resource(tmp_path: Path) -> None:
    template = _template_with(
        tmp_path,
        "Resources:\n",
        "Resources:\n  Cluster:\n    Type: AWS::ECS::Cluster\n",
    )
    with (
        pytest.raises(UnsupportedTemplate, match=r"Cluster\.Type: AWS::ECS::Cluster"),
        OrderGuardCloud(template=template),
    ):
        pass


def test_a_new_local_cloud_is_a_new_execution_environment() -> None:
    """Warm within one cloud (no init on the second invocation), cold in the next."""
    with OrderGuardCloud() as first:
        worker = first.function("QueueWorkerFunction")
        inits = [worker.invoke(load_event("sqs-first-order")).init_ms for _ in range(2)]
    with OrderGuardCloud() as second:
        inits.append(
            second.function("QueueWorkerFunction").invoke(load_event("sqs-first-order")).init_ms
        )
    assert [init is not None for init in inits] == [True, False, True]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("BatchSize=11", r"Parameters\.BatchSize: 11 is above MaxValue 10"),
        ("BatchSize=ten", r"Parameters\.BatchSize: 'ten' is not a number"),
        ("MaxReceiveCount=0", r"Parameters\.MaxReceiveCount: 0 is below MinValue 1"),
        ("FaultModesEnabled=yes", r"Parameters\.FaultModesEnabled: 'yes' is not one of"),
        (
            "NoSuchParameter=1",
            r"--parameter-overrides parameter NoSuchParameter: no such template parameter",
        ),
    ],
)
def test_parameter_values_sam_deploy_would_reject_fail_locally_too(
    override: str, message: str
) -> None:
    with pytest.raises(UnsupportedTemplate, match=message):
        order_guard_template(parameter_overrides=override)


def test_the_dead_letter_queue_alarm_watches_the_dlq() -> None:
    with OrderGuardCloud() as cloud:
        (alarm,) = cloud.client("cloudwatch").describe_alarms(
            AlarmNames=[cloud.outputs["JobsDeadLetterQueueAlarmName"]]
        )["MetricAlarms"]
    dlq_name = cloud.outputs["JobsDeadLetterQueueArn"].rsplit(":", 1)[1]
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": dlq_name}]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 0.0)


def test_a_store_order_timeout_is_retried_by_the_state_machine() -> None:
    """Every invocation outlives a 0 s timeout: 1 attempt + 2 retries, then the execution
    fails with the timeout's name (the retrier waits 2 s, then 4 s)."""
    from localcloud.state import task_attempts
    from order_guard_tools.reads import run_execution

    with OrderGuardCloud() as cloud:
        cloud.function("WorkflowWorkerFunction").timeout_s = 0
        described, history = run_execution(
            cloud, "timeout-order", {"id": "timeout-order", "quantity": 2}
        )
    store = [attempt for attempt in task_attempts(history) if attempt.state == "StoreOrder"]
    assert [attempt.error for attempt in store] == ["Sandbox.Timedout"] * 3
    assert described["status"] == "FAILED"


def test_with_the_attempts_table_gone_orders_are_still_stored_by_the_workflow() -> None:
    """Issue 18, finding 3: every execution failed after its retries and no order was
    stored, while the queue path stored the same orders."""
    with OrderGuardCloud() as cloud:
        cloud.client("dynamodb").delete_table(TableName=cloud.outputs["AttemptsTableName"])

        normal, _ = run_execution(cloud, "no-counter", {"id": "no-counter", "quantity": 2})
        counted, history = run_execution(
            cloud, "needs-counter", {"id": "needs-counter", "quantity": 2, "mode": "after-write"}
        )
        stored = {
            order_id: state_stored(cloud, order_id) for order_id in ("no-counter", "needs-counter")
        }

    assert normal["status"] == "SUCCEEDED"
    assert counted["status"] == "FAILED"
    assert counted["error"] == "AttemptsCounterUnavailable"  # by name, never retried
    assert [a.error for a in task_attempts(history)] == ["AttemptsCounterUnavailable"]
    assert stored == {
        "no-counter": {"id": "no-counter", "quantity": 2, "total_cents": 600},
        "needs-counter": None,
    }
