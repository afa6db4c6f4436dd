"""The functions' settings as template.yaml gives them: no variable the workers read is set
suite-wide, so a variable the template lacks fails the tests that need it."""

from __future__ import annotations

from order_guard.config import QueueWorkerSettings, WorkflowWorkerSettings
from tests.support.template import Template, load


def default_template() -> Template:
    """template.yaml with the default samconfig environment's parameters."""
    return load()


def function_environment(
    logical_id: str, *, orders_table: str, attempts_table: str = "unused-AttemptsTable"
) -> dict[str, str]:
    """The variables ``sam local invoke`` gives a function (``Globals.Function`` merged as
    SAM merges it, parameters at the default samconfig environment's values), with each
    ``!Ref OrdersTable`` / ``!Ref AttemptsTable`` (SAM CLI gives a resource's ``Ref`` as
    its logical id) pointing at the given tables."""
    tables = {"OrdersTable": orders_table, "AttemptsTable": attempts_table}
    function = default_template().function(logical_id)
    variables = (function.environment or {}).get("Variables", {})
    return {name: tables.get(str(value), str(value)) for name, value in variables.items()}


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
