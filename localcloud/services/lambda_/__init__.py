"""Lambda: functions run as the Lambda Python runtime runs them, the Lambda API that
creates and invokes them, and the event source mappings that feed them.

- the runtime (:mod:`.runtime`): the runtime contract, execution environments in this
  process or as process trees fed by the Lambda Runtime API, the function's environment,
  its output, the account's functions, and the listeners and hooks around every invocation;
- the Lambda API (:mod:`.patches`, :mod:`.invoke_patches`): moto's control plane and
  invoke API, run on the runtime within Lambda's quotas (:mod:`.limits`); versions and
  aliases (:mod:`.version_patches`); the event source mapping API (:mod:`.mapping_patches`),
  moto's own SQS trigger switched off; ``Code.Location`` as a link that downloads the
  package (:mod:`.code_links`);
- event source mappings (:mod:`.event_source_mappings`): a poller per mapping, made by
  the service its source belongs to;
- asynchronous invocation (:mod:`.asynchronous`): the queue, retries, destinations and
  dead-letter queues of ``InvocationType=Event`` and of the sources that invoke so;
- whether a function's role lets Lambda create its log group (:mod:`.permissions`);
- the CloudFormation types ``AWS::Lambda::Function``, ``EventSourceMapping`` and
  ``Permission`` (:mod:`.providers`).

May import: the CloudFormation engine's provider contract, the patch registry and
:mod:`localcloud.text`; no other service.
"""

from typing import Final

from localcloud.services.lambda_ import (
    code_links,
    dispatch,
    event_source_mappings,
    invoke_patches,
    lifecycle,
    mapping_patches,
    patches,
    providers,
    version_patches,
)
from localcloud.services.lambda_.runtime import (
    Function,
    InProcessFunction,
    Invocation,
    InvocationListener,
    LogSink,
    PackageError,
    Platform,
    ProcessFunction,
    RequestTooLarge,
    Throttled,
    access_key_for,
    add_listener,
    by_access_key,
    clear,
    extract,
    invoke_through_api,
    invoking,
    invoking_function,
    log_lines,
    lookup,
    platform,
    register,
    registered,
    remove_listener,
    runnable,
    set_invoke_wrapper,
    set_platform,
    source_package,
    timed_out,
    unregister,
)
from localcloud.services.service import Service

SERVICE: Final = Service(
    "lambda",
    providers=providers.PROVIDERS,
    patches=(
        *invoke_patches.PATCHES,
        *patches.PATCHES,
        *version_patches.PATCHES,
        *mapping_patches.PATCHES,
        *code_links.PATCHES,
    ),
    surfaces=(
        "the Runtime API (awslambdaric) in an execution environment of its own per "
        "concurrent invocation: one process tree each, reserved and account concurrency, "
        "timeouts, Lambda's payload, configuration and package quotas, each with Lambda's "
        "error, versions, aliases and layers",
    ),
    on_start=lifecycle.forget_earlier_account,
    on_stop=lifecycle.stopped_with_the_account,
)

__all__ = [
    "SERVICE",
    "code_links",
    "dispatch",
    "Function",
    "InProcessFunction",
    "Invocation",
    "InvocationListener",
    "LogSink",
    "PackageError",
    "Platform",
    "ProcessFunction",
    "RequestTooLarge",
    "Throttled",
    "access_key_for",
    "add_listener",
    "by_access_key",
    "clear",
    "event_source_mappings",
    "extract",
    "invoke_through_api",
    "invoking",
    "invoking_function",
    "log_lines",
    "lookup",
    "platform",
    "register",
    "registered",
    "remove_listener",
    "runnable",
    "set_invoke_wrapper",
    "set_platform",
    "source_package",
    "timed_out",
    "unregister",
]
