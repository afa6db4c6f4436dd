"""``lab-check`` judges each lab's named checks by what the account shows happened: a
fresh lab says "not yet" for every one, a resource that merely exists passes none, and
the unprotected starter storing an order twice fails the check that says it must be
stored once. The learner's moves go through boto3 against the lab's machine in-process
(the full replay through the AWS CLI, ending with every check ✓, is tests/e2e/test_labs.py).
"""

from __future__ import annotations

from collections.abc import Callable

from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.labs import EV05, Q05
from order_guard_tools.labs.evidence import Verdict
from tests.support.labs import (
    checks,
    connect_q05,
    create_ev05_workflow,
    ev05_definition,
    lab_account,
    run_ev05,
    send_q05,
    upload,
)

MakeCloud = Callable[..., OrderGuardCloud]

Q05_CHECKS = [
    "检查连接 (connection)",
    "检查实际工作程序结果 (worker results)",
    "检查消息确认情况 (message acknowledgement)",
    "清理检查 (cleanup)",
]
EV05_CHECKS = [
    "部署检查 (deployment)",
    "工作流配置检查 (workflow configuration)",
    "业务保护检查 (business protection)",
    "清理检查 (cleanup)",
]
ORDER = '{"id":"dedup-order","quantity":4}'


# --- a fresh lab ------------------------------------------------------------------------


def test_a_fresh_q05_lab_says_not_yet_for_each_named_check(make_cloud: MakeCloud) -> None:
    cloud = lab_account(make_cloud, Q05)  # its setup wrote the reference item

    found = checks(cloud)

    assert list(found) == Q05_CHECKS
    assert {name: c.verdict for name, c in found.items()} == dict.fromkeys(
        Q05_CHECKS, Verdict.NOT_YET
    )
    assert found["清理检查 (cleanup)"].detail == (
        "nothing to clean up yet: labex-q05-jobs never existed"
    )


def test_a_fresh_ev05_lab_says_not_yet_for_each_named_check(make_cloud: MakeCloud) -> None:
    cloud = lab_account(make_cloud, EV05)

    found = checks(cloud)

    assert list(found) == EV05_CHECKS
    assert {name: c.verdict for name, c in found.items()} == dict.fromkeys(
        EV05_CHECKS, Verdict.NOT_YET
    )
    assert found["部署检查 (deployment)"].detail.endswith(
        "still runs the provided starter: upload the protected worker"
    )


# --- Q05 --------------------------------------------------------------------------------


def test_q05_connection_holds_for_the_labs_mapping_before_any_message(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, Q05)
    connect_q05(cloud)

    found = checks(cloud)

    assert found["检查连接 (connection)"].verdict is Verdict.HOLDS
    assert found["检查连接 (connection)"].detail == (
        "labex-q05-jobs → labex-q05-worker, batch size 1, Enabled; 0 message(s) delivered so far"
    )
    assert found["检查实际工作程序结果 (worker results)"].verdict is Verdict.NOT_YET
    assert found["清理检查 (cleanup)"].verdict is Verdict.NOT_YET  # made, nothing removed yet


def test_q05_connection_fails_for_a_mapping_of_another_batch_size(make_cloud: MakeCloud) -> None:
    cloud = lab_account(make_cloud, Q05)
    connect_q05(cloud, batch_size=5)

    connection = checks(cloud)["检查连接 (connection)"]

    assert (connection.verdict, connection.detail) == (Verdict.FAILS, "batch size 5, not 1")


def test_the_q05_starter_storing_a_repeat_again_fails_the_worker_results(
    make_cloud: MakeCloud,
) -> None:
    """The starter's plain PutItem is accepted for the repeat too: the order is written
    twice, whatever the table holds afterwards."""
    cloud = lab_account(make_cloud, Q05)
    url = connect_q05(cloud)
    send_q05(cloud, url, ORDER, ORDER)  # no upload: the starter runs

    results = checks(cloud)["检查实际工作程序结果 (worker results)"]

    assert results.verdict is Verdict.FAILS
    assert results.detail == "the order dedup-order was written twice: 2 accepted writes"


def test_q05_cleanup_names_what_is_left_once_it_has_begun(make_cloud: MakeCloud) -> None:
    cloud = lab_account(make_cloud, Q05)
    url = connect_q05(cloud)
    checks(cloud)  # the AWS View has seen the queue
    cloud.client("sqs").delete_queue(QueueUrl=url)  # the mapping left behind

    cleanup = checks(cloud)["清理检查 (cleanup)"]

    assert cleanup.verdict is Verdict.FAILS
    assert cleanup.detail.startswith("still there: the mapping ")


# --- EV05 -------------------------------------------------------------------------------


def test_ev05_deployment_fails_for_a_package_without_app_py_at_its_root(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, EV05)
    upload(cloud, EV05, {"project/app.py": "def handler(event, context):\n    return event\n"})

    deployment = checks(cloud)["部署检查 (deployment)"]

    assert deployment.verdict is Verdict.FAILS
    assert deployment.detail.startswith("the package holds project/app.py, no app.py at its root")


def test_ev05_deployment_holds_once_the_protected_worker_is_uploaded(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, EV05)
    upload(cloud, EV05)

    deployment = checks(cloud)["部署检查 (deployment)"]

    assert deployment.verdict is Verdict.HOLDS
    assert deployment.detail.startswith("labex-ev05-worker runs the uploaded package (CodeSha256 ")


def test_ev05_workflow_configuration_holds_for_the_labs_state_machine(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, EV05)
    create_ev05_workflow(cloud)

    found = checks(cloud)

    assert found["工作流配置检查 (workflow configuration)"].verdict is Verdict.HOLDS
    assert found["业务保护检查 (business protection)"].verdict is Verdict.NOT_YET
    assert found["清理检查 (cleanup)"].verdict is Verdict.NOT_YET


def test_ev05_workflow_configuration_fails_for_a_retry_of_every_error(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, EV05)
    definition = ev05_definition()
    definition["States"]["StoreOrder"]["Retry"] = [{"ErrorEquals": ["States.ALL"]}]
    create_ev05_workflow(cloud, definition)

    workflow = checks(cloud)["工作流配置检查 (workflow configuration)"]

    assert workflow.verdict is Verdict.FAILS
    assert workflow.detail == (
        "StoreOrder retries States.ALL: only TransientOrderError is transient"
    )


def test_the_ev05_starter_storing_the_order_on_the_retry_fails_business_protection(
    make_cloud: MakeCloud,
) -> None:
    """The execution succeeds, and the summary reads 1100: only the writes show that the
    retry after the write stored the order a second time."""
    cloud = lab_account(make_cloud, EV05)
    machine = create_ev05_workflow(cloud)
    assert run_ev05(cloud, machine, "after-write-order") == "SUCCEEDED"  # no upload: the starter

    protection = checks(cloud)["业务保护检查 (business protection)"]

    assert protection.verdict is Verdict.FAILS
    assert protection.detail == "the order protected-order was written twice: 2 accepted writes"


def test_ev05_business_protection_is_not_yet_until_the_steps_executions_have_run(
    make_cloud: MakeCloud,
) -> None:
    cloud = lab_account(make_cloud, EV05)
    upload(cloud, EV05)
    machine = create_ev05_workflow(cloud)
    run_ev05(cloud, machine, "after-write-order")

    protection = checks(cloud)["业务保护检查 (business protection)"]

    assert (protection.verdict, protection.detail) == (
        Verdict.NOT_YET,
        "so far after-write-order SUCCEEDED, repeated-order not run yet, "
        "different-order not run yet",
    )


def test_ev05_cleanup_names_what_is_left_once_it_has_begun(make_cloud: MakeCloud) -> None:
    cloud = lab_account(make_cloud, EV05)
    machine = create_ev05_workflow(cloud)
    checks(cloud)  # the AWS View has seen the state machine
    cloud.client("stepfunctions").delete_state_machine(stateMachineArn=machine)

    cleanup = checks(cloud)["清理检查 (cleanup)"]

    assert (cleanup.verdict, cleanup.detail) == (
        Verdict.FAILS,
        "still there: the role labex-ev05-workflow-role",
    )
