"""Lab EV05's named checks (``../shared/labs/ev05.zh.txt``), in the lab's order, each judged
by what the account shows happened:

- 部署检查 (deployment): the worker runs an uploaded package, not the starter, with
  ``app.py`` at its root (handler ``app.handler``).
- 工作流配置检查 (workflow configuration): ``labex-ev05-orders`` (STANDARD) runs as a role
  that trusts ``states.amazonaws.com`` and may only invoke the worker; every Task invokes
  the worker; the store Task retries ``TransientOrderError`` only (1 s, ×2, twice) and
  catches ``InvalidOrder`` into a Fail state. Once the state machine is deleted, its
  executions the view kept show the retry at work.
- 业务保护检查 (business protection): the three executions succeeded (the after-write
  failure retried, the summaries 1100, 1100 and 350), and the orders were stored once
  each: one accepted ``PutItem`` per order, the refused ones leaving it unchanged.
- 清理检查 (cleanup): the state machine, the workflow role, the orders, the attempts
  and the log groups gone; the provided worker, its role, tables and reference item kept.

May import: :mod:`order_guard_tools.labs.evidence` and :mod:`~order_guard_tools.labs.machines`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from order_guard_tools.labs.evidence import (
    Check,
    Client,
    Row,
    State,
    Verdict,
    accepted_puts,
    item_ids,
    judged,
    learner_deleted,
    machine_seen,
    package_files,
    provided_kept,
    refused_puts,
    stored_once,
    writes,
)
from order_guard_tools.labs.machines import EV05

MACHINE: Final = "labex-ev05-orders"
WORKFLOW_ROLE: Final = "labex-ev05-workflow-role"
ORDERS: Final = "labex-ev05-orders"
ATTEMPTS: Final = "labex-ev05-attempts"
LAMBDA_INVOKE: Final = "arn:aws:states:::lambda:invoke"
TRANSIENT: Final = "TransientOrderError"
RETRY: Final = (1, 2, 2)
"""The lab's retrier of ``TransientOrderError``: ``IntervalSeconds``, ``BackoffRate``,
``MaxAttempts``."""
EXECUTIONS: Final = {
    "after-write-order": ("protected-order", 1100),
    "repeated-order": ("protected-order", 1100),
    "different-order": ("different-order", 350),
}
"""The step's executions, in order: the order each stores and the total its summary reads."""
STORED: Final = {"protected-order": (4, 1100), "different-order": (1, 350)}
"""Each order's quantity and total (cents), as the lab expects them stored."""

DEPLOYMENT: Final = "部署检查 (deployment)"
WORKFLOW: Final = "工作流配置检查 (workflow configuration)"
PROTECTION: Final = "业务保护检查 (business protection)"
CLEANUP: Final = "清理检查 (cleanup)"


def deployment(client: Client) -> Check:
    """部署检查: the learner's package replaced the starter, ``app.py`` at its root."""
    functions = client("lambda")
    try:
        configuration = functions.get_function_configuration(FunctionName=EV05.function)
    except functions.exceptions.ResourceNotFoundException:
        return Check(DEPLOYMENT, Verdict.FAILS, f"the provided function {EV05.function} is gone")
    sha = configuration["CodeSha256"]
    if sha == EV05.starter_sha256():
        return Check(
            DEPLOYMENT,
            Verdict.NOT_YET,
            f"{EV05.function} still runs the provided starter: upload the protected worker",
        )
    problems = []
    if configuration.get("LastUpdateStatus") == "Failed":
        problems.append(f"the upload failed: {configuration.get('LastUpdateStatusReason')}")
    files = package_files(client, EV05.function)
    if files is not None and "app.py" not in files:
        problems.append(
            f"the package holds {', '.join(files) or 'nothing'}, no app.py at its root "
            "(handler app.handler): zip -j function.zip app.py"
        )
    return judged(
        DEPLOYMENT, problems, None, f"{EV05.function} runs the uploaded package (CodeSha256 {sha})"
    )


def _listed(values: Any) -> list[str]:
    """An IAM policy field (a string or a list of them) as a list."""
    return [values] if isinstance(values, str) else list(values or [])


def _role_problems(client: Client, role_arn: str, worker_arn: str) -> list[str]:
    """What is wrong with the workflow's role: it trusts Step Functions, and may invoke
    the worker (that one function) and nothing else."""
    iam = client("iam")
    name = role_arn.rsplit("/", 1)[-1]
    try:
        trust = iam.get_role(RoleName=name)["Role"]["AssumeRolePolicyDocument"]
    except iam.exceptions.NoSuchEntityException:
        return [f"its role {name} does not exist"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    problems = []
    if not any(
        s.get("Effect") == "Allow"
        and "states.amazonaws.com" in _listed((s.get("Principal") or {}).get("Service"))
        and "sts:AssumeRole" in _listed(s.get("Action"))
        for s in trust.get("Statement", [])
    ):
        problems.append(f"{name} does not trust states.amazonaws.com")
    statements = []
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        document = iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
        document = json.loads(document) if isinstance(document, str) else document
        statements += [s for s in _listed_statements(document) if s.get("Effect") == "Allow"]
    invoke = [s for s in statements if _listed(s.get("Action")) == ["lambda:InvokeFunction"]]
    if not any(_listed(s.get("Resource")) == [worker_arn] for s in invoke):
        problems.append(f"{name} may not invoke {worker_arn}")
    wider = [s for s in statements if s not in invoke or _listed(s.get("Resource")) != [worker_arn]]
    attached = iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]
    if wider or attached:
        problems.append(f"{name} may do more than invoke {EV05.function}")
    return problems


def _listed_statements(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    statement = document.get("Statement", [])
    return [statement] if isinstance(statement, Mapping) else list(statement)


def definition_problems(definition: Mapping[str, Any], worker_arn: str) -> list[str]:
    """What is wrong with the workflow's ASL: every Task invokes the worker; one retries
    ``TransientOrderError`` only, as the lab does (1 s, ×2, twice), and catches
    ``InvalidOrder`` into a Fail state."""
    states: Mapping[str, Any] = definition.get("States", {})
    tasks = {name: s for name, s in states.items() if s.get("Type") == "Task"}
    problems = [
        f"{name} does not invoke {EV05.function} ({LAMBDA_INVOKE})"
        for name, task in tasks.items()
        if task.get("Resource") != LAMBDA_INVOKE
        or (task.get("Parameters") or {}).get("FunctionName") not in (EV05.function, worker_arn)
    ]
    retrying = {name: task for name, task in tasks.items() if task.get("Retry")}
    if not retrying:
        problems.append(f"no Task retries {TRANSIENT}")
    for name, task in retrying.items():
        for retrier in task["Retry"]:
            errors = _listed(retrier.get("ErrorEquals"))
            if errors != [TRANSIENT]:
                problems.append(
                    f"{name} retries {', '.join(errors)}: only {TRANSIENT} is transient"
                )
                continue
            seen = (
                retrier.get("IntervalSeconds", 1),
                retrier.get("BackoffRate", 2.0),
                retrier.get("MaxAttempts", 3),
            )
            if seen != RETRY:
                problems.append(
                    f"{name} retries {TRANSIENT} after {seen[0]} s, ×{seen[1]}, at most "
                    f"{seen[2]} times, not after 1 s, ×2, twice"
                )
        if not any(
            _listed(catcher.get("ErrorEquals")) == ["InvalidOrder"]
            and states.get(catcher.get("Next"), {}).get("Type") == "Fail"
            for catcher in task.get("Catch", [])
        ):
            problems.append(f"{name} does not catch InvalidOrder into a Fail state")
    return problems


def _retried(executions: Iterable[Row]) -> bool:
    """Whether a task of these executions was attempted again after a TransientOrderError."""
    for execution in executions:
        tasks = execution["tasks"]
        for failed, following in zip(tasks, tasks[1:], strict=False):
            if (failed["event"], failed["error"]) == ("failed", TRANSIENT) and (
                following["state"],
                following["event"],
            ) == (failed["state"], "scheduled"):
                return True
    return False


def workflow(state: State, client: Client) -> Check:
    """工作流配置检查: the state machine and its role as the lab configures them, judged
    from the account while the state machine exists, from its executions once deleted."""
    seen = machine_seen(state, MACHINE)
    if seen is None:
        return Check(WORKFLOW, Verdict.NOT_YET, f"no state machine {MACHINE} yet")
    sfn = client("stepfunctions")
    arns = [
        m["stateMachineArn"]
        for m in sfn.list_state_machines()["stateMachines"]
        if m["name"] == MACHINE
    ]
    if not arns:  # deleted: what its executions showed
        return judged(
            WORKFLOW,
            []
            if _retried(seen["executions"])
            else [f"{MACHINE} is deleted, and none of its executions retried after {TRANSIENT}"],
            None,
            f"{MACHINE} (deleted since): its executions retried after {TRANSIENT}",
        )
    described = sfn.describe_state_machine(stateMachineArn=arns[0])
    worker_arn = client("lambda").get_function_configuration(FunctionName=EV05.function)[
        "FunctionArn"
    ]
    problems = (
        []
        if described.get("type") == "STANDARD"
        else [f"{MACHINE} is {described.get('type')}, not STANDARD"]
    )
    problems += _role_problems(client, described["roleArn"], worker_arn)
    problems += definition_problems(json.loads(described["definition"]), worker_arn)
    return judged(
        WORKFLOW,
        problems,
        None,
        f"{MACHINE} (STANDARD) runs as {described['roleArn'].rsplit('/', 1)[-1]}, trusted by "
        f"states.amazonaws.com, allowed to invoke {EV05.function} only; it retries "
        f"{TRANSIENT} only (1 s, ×2, twice) and catches InvalidOrder into a Fail state",
    )


def _execution_problems(name: str, execution: Row) -> list[str]:
    """What is wrong with one of the step's executions that has ended."""
    if execution["status"] != "SUCCEEDED":
        error = execution.get("error")
        where = f": {error} in {execution.get('failed_state') or 'the workflow'}" if error else ""
        return [f"{name} {execution['status']}{where}"]
    order, total = EXECUTIONS[name]
    problems = []
    try:
        output = json.loads(execution["output"] or "null")
    except ValueError:  # cut: longer than the view keeps
        output = None
    if not isinstance(output, dict) or (output.get("id"), output.get("total_cents")) != (
        order,
        total,
    ):
        problems.append(f"{name} returned {execution['output']}, not the summary {order} {total}")
    if name == "after-write-order" and not _retried([execution]):
        problems.append(f"{name} never failed after its write and was not retried")
    return problems


def protection(state: State) -> Check:
    """业务保护检查: the retry after the write and the re-execution stored the order once,
    the different order stored its own; every execution of the step succeeded."""
    seen = machine_seen(state, MACHINE)
    kept = {e["name"]: e for e in seen["executions"]} if seen else {}
    ran = {name: kept[name] for name in EXECUTIONS if name in kept}
    if not ran:
        return Check(
            PROTECTION,
            Verdict.NOT_YET,
            f"none of the step's executions has run yet ({', '.join(EXECUTIONS)})",
        )
    since = min(e["started"] for e in ran.values())
    rows = {
        key: writes(state, ORDERS, key=key, function=EV05.function, since=since) for key in STORED
    }
    ended = {name: e for name, e in ran.items() if e["status"] != "RUNNING"}
    problems = [p for name, e in ended.items() for p in _execution_problems(name, e)]
    problems += [p for key, (q, t) in STORED.items() for p in stored_once(rows[key], key, q, t)]
    needed = {order for name, (order, _) in EXECUTIONS.items() if name in ended}
    problems += [
        f"the order {key} was never written"
        for key in sorted(needed)
        if not accepted_puts(rows[key])
    ]
    waiting = [name for name in EXECUTIONS if name not in ended]
    refused = sum(len(refused_puts(found)) for found in rows.values())
    so_far = ", ".join(
        f"{name} {ran[name]['status'] if name in ran else 'not run yet'}" for name in EXECUTIONS
    )
    return judged(
        PROTECTION,
        problems,
        f"so far {so_far}" if waiting else None,
        "after-write-order retried after its write, repeated-order and different-order "
        "succeeded (summaries 1100, 1100, 350); protected-order 4/1100 and different-order "
        f"1/350 stored once each, {refused} repeat(s) refused with the item unchanged",
    )


def cleanup(state: State, client: Client) -> Check:
    """清理检查: what the learner made is gone, what the machine provides is kept."""
    seen = machine_seen(state, MACHINE)
    if seen is None:
        return Check(CLEANUP, Verdict.NOT_YET, f"nothing to clean up yet: {MACHINE} never existed")
    if not seen["gone"] and not learner_deleted(state, [ORDERS, ATTEMPTS], STORED):
        return Check(
            CLEANUP,
            Verdict.NOT_YET,
            f"{MACHINE}, {WORKFLOW_ROLE} and the orders are still in use "
            "(the cleanup step removes them)",
        )
    iam = client("iam")
    left = [
        f"the state machine {m['name']}"
        for m in client("stepfunctions").list_state_machines()["stateMachines"]
    ]
    left += [
        f"the role {r['RoleName']}" for r in iam.list_roles()["Roles"] if r["RoleName"] != EV05.role
    ]
    left += [f"the order {key}" for key in item_ids(client, ORDERS)]
    left += [f"the attempts item {key}" for key in item_ids(client, ATTEMPTS)]
    left += [
        f"the log group {g['logGroupName']}"
        for g in client("logs").describe_log_groups()["logGroups"]
    ]
    problems = [f"still there: {', '.join(left)}"] if left else []
    return judged(
        CLEANUP,
        problems + provided_kept(EV05, client),
        None,
        f"{MACHINE}, {WORKFLOW_ROLE}, the orders, the attempts and the log groups are gone; "
        "the provided worker, its role, the tables and the reference item kept",
    )


def ev05_checks(state: State, client: Client) -> list[Check]:
    """Lab EV05's named checks, in the lab's order."""
    return [deployment(client), workflow(state, client), protection(state), cleanup(state, client)]
