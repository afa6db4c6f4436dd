"""The functions' settings as template.yaml gives them: no variable the workers read is set
suite-wide, so a variable the template lacks fails the tests that need it."""

from __future__ import annotations

import functools

from localcloud.cfn import template as template_module
from localcloud.cfn.deployer import function_properties
from localcloud.cfn.intrinsics import resolve
from order_guard.config import QueueWorkerSettings, WorkflowWorkerSettings


@functools.cache
def default_template() -> template_module.Template:
    """template.yaml with the default samconfig environment's parameters."""
    return template_module.load()


@functools.cache
def _variables(logical_id: str) -> dict[str, object]:
    """A function's ``Environment.Variables`` after the SAM transform, unresolved (the
    transform is the costly part, and the template does not change during a run)."""
    variables: dict[str, object] = function_properties(default_template(), logical_id)[
        "Environment"
    ]["Variables"]
    return variables


def function_environment(
    logical_id: str, *, orders_table: str, attempts_table: str = "unused-AttemptsTable"
) -> dict[str, str]:
    """The variables template.yaml gives a function (``Globals.Function`` merged as SAM
    merges it), with ``!Ref OrdersTable``/``AttemptsTable`` pointing at the given tables
    and parameters at the default samconfig environment's values."""
    template = default_template()
    tables = {"OrdersTable": orders_table, "AttemptsTable": attempts_table}
    resolved = resolve(
        _variables(logical_id),
        where=f"{logical_id}.Environment",
        ref=lambda name: tables[name] if name in tables else template.parameters[name],
        get_att=lambda *_: (_ for _ in ()).throw(KeyError("no GetAtt in Environment")),
    )
    return {name: str(value) for name, value in resolved.items()}


def queue_settings(orders_table: str) -> QueueWorkerSettings:
    """The queue worker's settings, read from its template environment."""
    return QueueWorkerSettings.from_environ(
        function_environment("QueueWorkerFunction", orders_table=orders_table)
    )


def workflow_settings_for(
    orders_table: str, attempts_table: str, *, fault_modes_enabled: bool = True
) -> WorkflowWorkerSettings:
    """The workflow worker's settings, read from its template environment (fault modes
    as the default samconfig environment has them, on, unless told otherwise)."""
    environment = function_environment(
        "WorkflowWorkerFunction", orders_table=orders_table, attempts_table=attempts_table
    )
    environment["FAULT_MODES_ENABLED"] = "true" if fault_modes_enabled else "false"
    return WorkflowWorkerSettings.from_environ(environment)
