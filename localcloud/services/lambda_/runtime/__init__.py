"""The Lambda runtime: functions run as the Lambda Python runtime runs them.

Owns the runtime contract (:mod:`.contract`, awslambdaric's own rules for loading a
handler, the error envelope and marshalling, and the service's ``START``/``END``/
``REPORT`` lines), the two kinds of execution environment (:mod:`.inprocess`: from source,
in this process; :mod:`.environments`: from a deployment package, a process tree each, fed
by the Lambda Runtime API of :mod:`.runtime_api`), the function's environment variables
(:mod:`.environment`), whose output a line is (:mod:`.output`), Powertools' cold-start
flags (:mod:`.powertools`), the invocation payload quotas (:mod:`.payloads`) and the
account's functions (:mod:`.registry`). The Lambda API
reaches it through the moto patches (:mod:`localcloud.services.lambda_.patches`).

May import: nothing else of the local cloud.
"""

from localcloud.services.lambda_.runtime.contract import log_lines
from localcloud.services.lambda_.runtime.environments import ProcessFunction
from localcloud.services.lambda_.runtime.functions import (
    Function,
    Invocation,
    InvocationListener,
    LogSink,
    Throttled,
    timed_out,
)
from localcloud.services.lambda_.runtime.inprocess import InProcessFunction
from localcloud.services.lambda_.runtime.output import invoking as invoking_function
from localcloud.services.lambda_.runtime.packages import PackageError, extract, source_package
from localcloud.services.lambda_.runtime.payloads import RequestTooLarge
from localcloud.services.lambda_.runtime.registry import (
    Platform,
    access_key_for,
    add_listener,
    by_access_key,
    clear,
    invoke_through_api,
    invoking,
    lookup,
    platform,
    register,
    register_version,
    registered,
    remove_listener,
    runnable,
    set_alias,
    set_invoke_wrapper,
    set_platform,
    unregister,
)

__all__ = [
    "access_key_for",
    "by_access_key",
    "Function",
    "Platform",
    "clear",
    "platform",
    "runnable",
    "set_platform",
    "source_package",
    "InProcessFunction",
    "Invocation",
    "InvocationListener",
    "LogSink",
    "PackageError",
    "ProcessFunction",
    "RequestTooLarge",
    "Throttled",
    "add_listener",
    "extract",
    "invoke_through_api",
    "invoking",
    "invoking_function",
    "log_lines",
    "lookup",
    "register",
    "register_version",
    "registered",
    "remove_listener",
    "set_alias",
    "set_invoke_wrapper",
    "timed_out",
    "unregister",
]
