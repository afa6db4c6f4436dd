"""Step Functions: moto's interpreter runs the executions (its ``lambda:invoke`` tasks
reach the account's functions through :mod:`localcloud.services.lambda_.patches`); the
refusals AWS makes and moto does not, execution names and stop details (:mod:`.patches`),
errors with their codes, a taken name, non-JSON input and a Choice on a missing path
(:mod:`.refusals`); the quotas that bound an execution: input of 256 KB, 25,000 history
events (:mod:`.quotas`), 40 inline Map iterations at once (:mod:`.inline_map`), paths
evaluated bounded (:mod:`.paths`); GetExecutionHistory in pages (:mod:`.history`); the
Task resources run locally, the others refused by name, and nested executions'
parameters and results in the shapes AWS gives (:mod:`.integrations`); one terminal line
per failed execution, not moto's logs (:mod:`.reports`); a Standard execution's status
changes on the default bus as AWS's events (:mod:`.status_events`);
``AWS::StepFunctions::StateMachine`` (:mod:`.providers`); the interpreter's threads
bounded server-wide, 1,000 running executions (:mod:`.threads`); the payload quota
measured without writing the payload out (:mod:`.payload`) and the intrinsic functions
bounded before they build (:mod:`.intrinsics`); every running execution stopped when the
account stops (:mod:`.lifecycle`, the service's ``on_stop``).

May import: the engine's provider contract, the patch registry and its bounded JSONPath.
"""

from typing import Final

from localcloud.services.service import Service
from localcloud.services.stepfunctions import (
    history,
    inline_map,
    integrations,
    intrinsics,
    lifecycle,
    patches,
    paths,
    payload,
    providers,
    quotas,
    refusals,
    reports,
    status_events,
    threads,
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
        *quotas.PATCHES,
        *history.PATCHES,
        *inline_map.PATCHES,
        *paths.PATCHES,
        *threads.PATCHES,
        *payload.PATCHES,
        *intrinsics.PATCHES,
    ),
    checks=(*patches.CHECKS, *history.CHECKS),
    on_stop=lifecycle.stopped_with_the_account,
    surfaces=(
        "executions in moto's interpreter: Task states call the account's functions (and "
        "the SDK integrations the patches name), retriers, catchers, waits, names, "
        "StopExecution, the refusals AWS makes; input of 256 KB, 25,000 history events, 40 "
        "inline Map iterations at once; GetExecutionHistory in pages; 1,000 running "
        "executions and 200 threads for Map iterations and Parallel branches, server-wide; "
        "payloads and intrinsic functions bounded before they are built",
        "AWS service events on the default bus: Step Functions Execution Status Change "
        "(Standard workflows)",
    ),
)

__all__ = ["SERVICE"]
