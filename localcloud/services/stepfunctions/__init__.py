"""Step Functions: moto's interpreter runs the executions (its ``lambda:invoke`` tasks
reach the account's functions through :mod:`localcloud.services.lambda_.patches`); the
refusals AWS makes and moto does not, execution names and stop details (:mod:`.patches`),
errors with their codes, a taken name, non-JSON input and a Choice on a missing path
(:mod:`.refusals`); the Task resources run locally, the others refused by name, and nested
executions' parameters and results in the shapes AWS gives (:mod:`.integrations`); one
terminal line per failed execution, not moto's logs (:mod:`.reports`); a Standard
execution's status changes on the default bus as AWS's events (:mod:`.status_events`);
``AWS::StepFunctions::StateMachine`` (:mod:`.providers`).

May import: the engine's provider contract, the patch registry.
"""

from typing import Final

from localcloud.services.service import Service
from localcloud.services.stepfunctions import (
    integrations,
    patches,
    providers,
    refusals,
    reports,
    status_events,
)

SERVICE: Final = Service(
    "states",
    providers=providers.PROVIDERS,
    patches=(
        *patches.PATCHES,
        *refusals.PATCHES,
        *integrations.PATCHES,
        *reports.PATCHES,
        *status_events.PATCHES,
    ),
    checks=patches.CHECKS,
    surfaces=(
        "executions in moto's interpreter: Task states call the account's functions (and "
        "the SDK integrations the patches name), retriers, catchers, waits, names, "
        "StopExecution, the refusals AWS makes",
        "AWS service events on the default bus: Step Functions Execution Status Change "
        "(Standard workflows)",
    ),
)

__all__ = ["SERVICE"]
