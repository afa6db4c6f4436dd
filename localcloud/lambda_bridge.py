"""Run a function's handler in-process, the way the Lambda Python runtime would.

- **Execution environment**: the handler module is loaded fresh from the function's
  ``CodeUri`` on the first invocation (the cold start), with the function's environment
  applied, so module-scope clients and configuration are built once per environment, as
  on Lambda, and never shared between functions or between local clouds.
  :meth:`LocalFunction.new_execution_environment` discards it (the next invocation is a
  cold start again). Powertools keeps its cold-start flags in module globals, which the
  process shares; the bridge gives each function its own (see
  :func:`_powertools_cold_start`), so each function's first invocation logs
  ``cold_start: true`` and emits the ``ColdStart`` metric, whoever ran before it.
- **Environment**: each invocation sees the function's variables (``Globals`` merged
  with the function's own, references resolved) and the variables the runtime sets
  (``AWS_LAMBDA_FUNCTION_NAME``, ``AWS_REGION`` …, and ``AWS_CONFIG_FILE`` /
  ``AWS_SHARED_CREDENTIALS_FILE`` pointed at an empty file, as Lambda has no
  ``~/.aws``) on top of the host process's environment, whose own ``AWS_*`` variables
  ``LocalCloud`` hides while it runs (no real profile, endpoint or credentials can leak
  in); the invocation's variables are removed afterwards. A variable the template
  forgets but your shell sets is therefore still visible locally: the process is shared.
  So are the modules a handler imports (not the handler module itself): a thread pool
  kept at module scope in a shared module is shared between functions, and its threads
  write into the environment that started them.
  Because the environment is process-wide, invocations run one at a time (a
  process-wide lock), like a function with reserved concurrency 1.
- **Context**: ``function_name``, ``aws_request_id``, ``invoked_function_arn``,
  ``memory_limit_in_mb``, ``log_group_name``, ``log_stream_name`` and
  ``get_remaining_time_in_millis()`` counting down from the function's ``Timeout``.
- **Response**: serialised as the runtime's marshaller does (:func:`marshal_response`):
  ``Decimal`` is a JSON number, ``bytes`` go out raw, and what it refuses (a set, a
  datetime, an object …) is ``Runtime.MarshalError``. ``Invocation.payload`` is that JSON
  read back, what the caller of ``Invoke`` gets.
- **Errors**: a raised exception becomes the runtime's error envelope
  ``{"errorMessage", "errorType", "requestId", "stackTrace"}`` with ``errorType`` the
  unqualified class name, and the invoke response carries ``X-Amz-Function-Error:
  Unhandled``, so Step Functions retriers and catchers match by name. Loading the handler
  fails as the runtime's ``_get_handler`` reports it (:meth:`LocalFunction._load_handler`):
  an ``ImportError`` is ``Runtime.ImportModuleError``, a ``SyntaxError``
  ``Runtime.UserCodeSyntaxError``, a missing handler ``Runtime.HandlerNotFound``, and any
  other exception raised at import keeps its own class name (``ValueError`` …).
  ``sys.exit`` is ``Runtime.ExitError``. The timeout is reported, not enforced
  (a thread cannot be killed): an invocation that outlives it is logged as ``Task timed
  out`` and fails with ``Sandbox.Timedout``, whatever the handler returned (its side
  effects stay, as on Lambda). Step Functions on AWS names a timeout ``Lambda.Unknown``;
  moto's interpreter uses the ``errorType``, so locally it is ``Sandbox.Timedout``.
- **Logs**: everything the execution environment writes to stdout/stderr, from any of its
  threads (never attributed by thread id: see :class:`_InvocationOutput`), between ``START`` and
  ``END``/``REPORT`` lines, goes to the function's CloudWatch Logs group in the emulator.

moto's Step Functions interpreter sends ``lambda:invoke`` tasks to moto's Lambda backend;
without Docker that is ``LambdaSimpleBackend.invoke``, which only echoes. :func:`install`
replaces that one method with a call into this bridge; nothing else in moto offers a
hook. ``tests/test_localcloud.py`` fails loudly if a moto upgrade moves it.
"""

from __future__ import annotations

import base64
import contextlib
import decimal
import importlib.util
import io
import json
import math
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import simplejson
from moto.awslambda_simple.models import LambdaSimpleBackend

_INVOCATION_LOCK = threading.RLock()
_OWNER = "_localcloud_environment"
"""The attribute a thread carries when it belongs to a function's execution environment:
the invoking thread during an invocation, and every thread started from an owned thread
(:func:`_start_owned`), whenever it runs."""


@dataclass
class LambdaContext:
    """The Lambda Python runtime's context object (the attributes handlers read)."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    aws_request_id: str
    log_group_name: str
    log_stream_name: str
    deadline: float
    function_version: str = "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


@dataclass(frozen=True)
class Invocation:
    """One invocation's outcome: ``payload`` is the response or the error envelope."""

    function_name: str
    request_id: str
    payload: Any
    error: bool
    log_lines: list[str]
    duration_ms: float

    @property
    def error_type(self) -> str | None:
        return self.payload.get("errorType") if self.error else None

    def payload_bytes(self) -> bytes:
        """The invoke response body: the runtime's JSON (raw for a ``bytes`` response)."""
        if isinstance(self.payload, bytes):
            return self.payload
        return marshal_response(self.payload)[0]


LogSink = Callable[[str, str, list[tuple[int, str]]], None]
"""(log group, log stream, [(timestamp ms, message)]) → delivered."""


class _InvocationOutput(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` while the local cloud runs functions in-process.

    A write belongs to the execution environment of the thread that makes it (the
    thread's :data:`_OWNER`), never to whatever runs at that moment: the invoking thread
    and every thread started from it, at any depth (a handler's thread pool), write into
    their environment's output, which the running invocation takes at its end. A thread
    that belongs to no function (the server, a poller, a test) writes where it would
    have written anyway, so it never lands in a function's log group. This is Lambda's
    rule: an execution environment runs one invocation at a time, and every line it
    writes, from any thread, is that invocation's (a line written between invocations
    comes out with the next one, as when Lambda thaws the environment).

    Installed once and kept: a logging handler created at import time (Powertools binds
    ``sys.stdout`` when its ``Logger`` is created) keeps this object and stays routed.
    """

    def __init__(self, name: str) -> None:
        self.name_ = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        owner: LocalFunction | None = getattr(threading.current_thread(), _OWNER, None)
        if owner is not None:
            return owner._output.write(text)
        fallback = getattr(sys, f"__{self.name_}__")
        assert fallback is not None
        return int(fallback.write(text))

    def flush(self) -> None:
        return None


class _EnvironmentOutput:
    """What one execution environment's threads have written since it was last taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer = io.StringIO()

    def write(self, text: str) -> int:
        with self._lock:
            return self._buffer.write(text)

    def take(self) -> str:
        with self._lock:
            text, self._buffer = self._buffer.getvalue(), io.StringIO()
        return text


_STDOUT = _InvocationOutput("stdout")
_STDERR = _InvocationOutput("stderr")
_ORIGINAL_THREAD_START = threading.Thread.start


def _start_owned(self: threading.Thread) -> None:
    """``threading.Thread.start``, handing the starting thread's execution environment
    (if any) to the new thread, so what a handler's threads write is the handler's."""
    owner = getattr(threading.current_thread(), _OWNER, None)
    if owner is not None and getattr(self, _OWNER, None) is None:
        setattr(self, _OWNER, owner)
    _ORIGINAL_THREAD_START(self)


@dataclass
class LocalFunction:
    """One function of the template, runnable in-process."""

    name: str
    arn: str
    code_uri: Path
    handler: str
    environment: Mapping[str, str]
    timeout_s: int
    memory_mb: int
    log_group: str
    region: str
    log_sink: LogSink | None = None
    _module: ModuleType | None = field(default=None, repr=False)
    _output: _EnvironmentOutput = field(default_factory=_EnvironmentOutput, repr=False)
    _invoking: bool = field(default=False, repr=False)
    _log_stream: str = field(default="", repr=False)
    # This environment's Powertools cold-start flags (module name → value); empty: cold.
    _cold_start_flags: dict[str, bool] = field(default_factory=dict, repr=False)
    invocations: int = field(default=0, repr=False)

    def new_execution_environment(self) -> None:
        """Discard this function's execution environment: the next invocation is a cold
        start, as on Lambda after ``UpdateFunctionConfiguration`` or ``UpdateFunctionCode``.

        The handler module is dropped, so the next invocation imports it again (module
        scope runs anew with the environment of that moment), writes to a new log stream,
        and Powertools sees ``cold_start`` true again. An invocation in progress finishes
        in the old environment first (this waits for the bridge's lock).
        """
        with _INVOCATION_LOCK:
            self._module = None
            self._cold_start_flags.clear()

    def runtime_environment(self, request_id: str | None = None) -> dict[str, str]:
        """The variables one invocation sees (the function's own plus the runtime's)."""
        base = {
            "AWS_LAMBDA_FUNCTION_NAME": self.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(self.memory_mb),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": self.log_group,
            "AWS_LAMBDA_LOG_STREAM_NAME": self._log_stream,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
            "LAMBDA_TASK_ROOT": str(self.code_uri),
            "_HANDLER": self.handler,
            # Lambda has no ~/.aws: the host's config and credentials files must not
            # give a handler another endpoint, profile or real credentials.
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        if request_id:
            base["_X_AMZN_TRACE_ID"] = f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]}"
        return {**base, **self.environment}

    def invoke(self, event: Any) -> Invocation:
        """Run the handler on ``event`` and return its response or error envelope.

        A function that invokes itself from inside an invocation gets another execution
        environment for it, as on Lambda (an environment runs one invocation at a time):
        the outer invocation keeps its output and its state."""
        with _INVOCATION_LOCK:
            if self._invoking:
                return replace(
                    self,
                    _module=None,
                    _output=_EnvironmentOutput(),
                    _invoking=False,
                    _cold_start_flags={},
                    invocations=0,
                ).invoke(event)
            return self._invoke_locked(event)

    def _invoke_locked(self, event: Any) -> Invocation:
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        if self._module is None:  # a cold start: a new execution environment
            self._log_stream = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{uuid.uuid4().hex}"
            self._cold_start_flags.clear()
        # What this environment's threads wrote since the last invocation ended.
        pending = self._output.take()
        with (
            _environment(self.runtime_environment(request_id)),
            _captured(self),
            _powertools_cold_start(self._cold_start_flags),
        ):
            print(f"START RequestId: {request_id} Version: $LATEST")
            sys.stdout.write(pending)
            payload: Any
            handler: Callable[[Any, Any], Any] | None = None
            try:
                handler = self._load_handler()
            except _RuntimeFault as fault:
                payload = fault.envelope(request_id)
            except SystemExit as exc:
                payload = runtime_error("Runtime.ExitError", exc, request_id)
            except Exception as exc:  # noqa: BLE001 - bootstrap.run reports any init error
                payload = _Envelope(error_envelope(exc, request_id))
            if handler is not None:
                context = LambdaContext(
                    function_name=self.name,
                    memory_limit_in_mb=self.memory_mb,
                    invoked_function_arn=self.arn,
                    aws_request_id=request_id,
                    log_group_name=self.log_group,
                    log_stream_name=self._log_stream,
                    deadline=started + self.timeout_s,
                )
                payload = self._run(handler, event, context, request_id)
            duration_ms = (time.monotonic() - started) * 1000
            if duration_ms > self.timeout_s * 1000:
                # Not enforced (a thread cannot be stopped), but reported as Lambda does:
                # the invocation failed, whatever the handler returned.
                payload = _timeout_envelope(request_id, self.timeout_s)
                print(f"{datetime.now(UTC).isoformat()} {request_id} {payload['errorMessage']}")
            error = isinstance(payload, _Envelope)
            if error:
                print(f"[ERROR] {payload['errorType']}: {payload['errorMessage']}")
            print(f"END RequestId: {request_id}")
            print(
                f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
                f"Memory Size: {self.memory_mb} MB"
            )
            lines = log_lines(self._output.take())
        self.invocations += 1
        if self.log_sink is not None:
            now = int(time.time() * 1000)
            events = [(now, line) for line in lines if line.strip()]
            self.log_sink(self.log_group, self._log_stream, events)
        invocation = Invocation(
            self.name, request_id, dict(payload) if error else payload, error, lines, duration_ms
        )
        for listener in list(_LISTENERS):
            listener(self, event, invocation)
        return invocation

    @staticmethod
    def _run(
        handler: Callable[[Any, Any], Any], event: Any, context: LambdaContext, request_id: str
    ) -> Any:
        """Call the handler and marshal its response, as ``awslambdaric/bootstrap.py``
        ``handle_event_request`` does: a ``FaultException`` from ``marshal_response``
        becomes ``Runtime.MarshalError`` with the message ``Unable to marshal response:
        …`` and an empty ``stackTrace``; any other exception is reported under its class.
        The result is the JSON read back (``bytes`` stay raw), as the invoker receives it.
        """
        try:
            payload = handler(json.loads(json.dumps(event)), context)
        except SystemExit as exc:
            return runtime_error("Runtime.ExitError", exc, request_id)
        except Exception as exc:  # noqa: BLE001 - the runtime reports every error
            return _Envelope(error_envelope(exc, request_id))
        try:
            body, content_type = marshal_response(payload)
        except Exception as exc:  # noqa: BLE001 - LambdaMarshaller catches every error
            fault = _RuntimeFault("Runtime.MarshalError", f"Unable to marshal response: {exc}")
            return fault.envelope(request_id)
        if content_type != "application/json":
            return body
        return json.loads(body)

    def _load_handler(self) -> Callable[[Any, Any], Any]:
        """The handler, loading its module on a cold start, with the runtime's faults.

        As ``awslambdaric/bootstrap.py`` ``_get_handler``: a handler without a dot is
        ``Runtime.MalformedHandlerName`` (``Bad handler '…': …``), a built-in module name
        ``Runtime.BuiltInModuleConflict``, an ``ImportError`` (``ModuleNotFoundError``
        included) ``Runtime.ImportModuleError`` (``Unable to import module '<module>':
        <error>``), a ``SyntaxError`` ``Runtime.UserCodeSyntaxError`` (``Syntax error in
        module '<module>': <error>``, its stack trace the offending line) and a missing
        attribute ``Runtime.HandlerNotFound`` (``Handler '<name>' missing on module
        '<module>'``). Any other exception propagates: ``bootstrap.run`` reports it under
        its own class name (``build_fault_result``). A handler that is not callable is
        not checked here; calling it fails the invocation with ``TypeError``, as there.
        """
        try:
            module_name, attribute = self.handler.rsplit(".", 1)
        except ValueError as exc:
            raise _RuntimeFault(
                "Runtime.MalformedHandlerName", f"Bad handler '{self.handler}': {exc}"
            ) from None
        module = self._module
        if module is None:
            if module_name.split(".")[0] in sys.builtin_module_names:
                raise _RuntimeFault(
                    "Runtime.BuiltInModuleConflict",
                    f"Cannot use built-in module {module_name} as a handler module",
                )
            try:
                module = _load_module_fresh(self.code_uri, module_name.replace("/", "."))
            except ImportError as exc:
                raise _RuntimeFault(
                    "Runtime.ImportModuleError",
                    f"Unable to import module '{module_name}': {exc}",
                ) from exc
            except SyntaxError as exc:
                trace = [f'  File "{exc.filename}" Line {exc.lineno}\n    {exc.text}']
                raise _RuntimeFault(
                    "Runtime.UserCodeSyntaxError",
                    f"Syntax error in module '{module_name}': {exc}",
                    trace,
                ) from exc
        try:
            handler: Callable[[Any, Any], Any] = getattr(module, attribute)
        except AttributeError:
            raise _RuntimeFault(
                "Runtime.HandlerNotFound",
                f"Handler '{attribute}' missing on module '{module_name}'",
            ) from None
        # Kept only once init succeeded: a failed init leaves no environment behind, so the
        # next invocation initialises again (a cold start), as Lambda does.
        self._module = module
        return handler


def _timeout_envelope(request_id: str, timeout_s: float) -> _Envelope:
    message = f"Task timed out after {timeout_s:.2f} seconds"
    return _Envelope(
        errorMessage=f"RequestId: {request_id} Error: {message}", errorType="Sandbox.Timedout"
    )


def timed_out(invocation: Invocation, function: LocalFunction) -> Invocation:
    """``invocation`` as if it had outlived the function's timeout: its effects stay, its
    result becomes the runtime's ``Sandbox.Timedout`` error (for fault injection)."""
    envelope = dict(_timeout_envelope(invocation.request_id, function.timeout_s))
    return replace(invocation, payload=envelope, error=True)


def log_lines(text: str) -> list[str]:
    """An invocation's output as Lambda cuts it into log events: at ``\n`` only.

    Not ``str.splitlines``, which also cuts at ``\r``, ``\v``, ``\f``, ``\x1c``–``\x1e``,
    ``\x85``, ``\u2028`` and ``\u2029``: Powertools writes JSON with
    ``ensure_ascii=False``, so an order id holding one of them would cut its ``RESULT``
    line in two, and neither half would read as a write decision."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def invoking_function() -> LocalFunction | None:
    """The function whose invocation the calling thread belongs to, else ``None``.

    The invoking thread and every thread started from it belong to the invocation
    (:func:`_start_owned`); threads that belong to no function (a server, a poller, a
    test) do not, nor does a function's thread while its function is not invoking.
    """
    owner: LocalFunction | None = getattr(threading.current_thread(), _OWNER, None)
    return owner if owner is not None and owner._invoking else None


class _Envelope(dict[str, Any]):
    """An error response (as opposed to a handler's own dict result)."""


class _RuntimeFault(Exception):
    """One of the runtime's own errors, ``awslambdaric/lambda_runtime_exception.py``
    ``FaultException``: its envelope (``bootstrap.make_error``) carries the runtime's
    type and message, and its ``trace`` (usually none: ``[]``) as the stack trace."""

    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.trace = trace or []

    def envelope(self, request_id: str) -> _Envelope:
        return _Envelope(
            errorMessage=self.message,
            errorType=self.error_type,
            requestId=request_id,
            stackTrace=self.trace,
        )


def runtime_error(error_type: str, exc: BaseException, request_id: str) -> _Envelope:
    """An error the runtime names itself (``Runtime.ExitError``): the runtime's name, the
    exception's message and stack trace."""
    return _Envelope({**error_envelope(exc, request_id), "errorType": error_type})


def error_envelope(exc: BaseException, request_id: str) -> dict[str, Any]:
    """The Lambda Python runtime's error response for an unhandled exception.

    As ``awslambdaric/bootstrap.py`` ``handle_event_request`` (and ``build_fault_result``
    for an init error): ``errorType`` is the unqualified class name, ``errorMessage``
    ``str(exc)``, ``stackTrace`` ``traceback.format_list`` of the frames after the
    runtime's own leading ones (there ``bootstrap.py``'s, here this module's).
    """
    frames = traceback.extract_tb(exc.__traceback__)
    own = 0
    while own < len(frames) and frames[own].filename == __file__:
        own += 1
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "requestId": request_id,
        "stackTrace": traceback.format_list(frames[own:] if own < len(frames) else frames),
    }


class RuntimeEncoder(simplejson.JSONEncoder):
    """The runtime's response encoder (``awslambdaric/lambda_runtime_marshaller.py``
    ``Encoder``): simplejson with ``use_decimal=False, ensure_ascii=False,
    allow_nan=True`` (``ensure_ascii=False`` on ``AWS_Lambda_python3.12``/``3.13``), whose
    ``default`` writes a ``Decimal`` as the raw number ``str(d)`` and a NaN ``Decimal``
    as ``NaN``."""

    def __init__(self) -> None:
        super().__init__(use_decimal=False, ensure_ascii=False, allow_nan=True)

    def default(self, o: Any) -> Any:
        if isinstance(o, decimal.Decimal):
            return math.nan if o.is_nan() else simplejson.RawJSON(str(o))
        return super().default(o)


def marshal_response(response: Any) -> tuple[bytes, str]:
    """The body and content type the runtime sends for a handler's return value
    (``LambdaMarshaller.marshal_response``): ``bytes`` unchanged as
    ``application/unknown``; anything else through :class:`RuntimeEncoder`, which
    refuses (``TypeError``/``ValueError``) what the runtime reports as
    ``Runtime.MarshalError`` (a set, a datetime, an arbitrary object, a circular
    reference)."""
    if isinstance(response, bytes):
        return response, "application/unknown"
    return RuntimeEncoder().encode(response).encode(), "application/json"


def _load_module_fresh(code_uri: Path, module_name: str) -> ModuleType:
    """Load the handler module as a new module object (a new execution environment).

    The runtime puts the task root on ``sys.path``; the local cloud does the same with
    ``CodeUri`` so the package's absolute imports resolve. Modules the handler imports
    stay shared (they are stateless in this project); the handler module itself, with
    its module-scope clients and caches, is new per execution environment.
    """
    root = str(code_uri)
    if root not in sys.path:  # like LAMBDA_TASK_ROOT on the runtime's path
        sys.path.insert(0, root)
    path = code_uri.joinpath(*module_name.split(".")).with_suffix(".py")
    if not path.is_file():  # what importlib.import_module raises for a missing module
        raise ModuleNotFoundError(f"No module named {module_name!r}", name=module_name)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load handler module {module_name!r} from {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered while it executes (dataclasses and typing look the module up by name),
    # then the previous entry comes back: other environments keep their own copy.
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if previous is None:
            sys.modules.pop(module_name, None)
        else:
            sys.modules[module_name] = previous
    return module


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    # Key by key, never clear(): other threads (moto's interpreter, the server) read the
    # process environment meanwhile and must not see it empty. A variable is put back
    # only if it still holds the invocation's value, so another thread's change made
    # meanwhile is kept. (LocalCloud hides the host's own AWS_* variables for its whole
    # lifetime; see localcloud.cloud.)
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if os.environ.get(name) != values[name]:
                continue
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _captured(function: LocalFunction) -> Iterator[None]:
    """Make the calling thread, and every thread it starts, ``function``'s for the
    invocation; the streams route their writes to ``function``'s output."""
    _own_threads()
    thread = threading.current_thread()
    previous = getattr(thread, _OWNER, None)  # an invocation made from inside another
    setattr(thread, _OWNER, function)
    function._invoking = True
    try:
        with contextlib.redirect_stdout(_STDOUT), contextlib.redirect_stderr(_STDERR):
            yield
    finally:
        function._invoking = False
        if previous is None:
            delattr(thread, _OWNER)
        else:
            setattr(thread, _OWNER, previous)


def _own_threads() -> None:
    """Hand a thread's execution environment down to the threads it starts (idempotent)."""
    threading.Thread.start = _start_owned  # type: ignore[method-assign]


# Powertools' cold-start flags, each a module-level ``is_cold_start`` (aws-lambda-powertools
# 3.x): Logger.inject_lambda_context (``logging/logger.py`` ``_is_cold_start``),
# Tracer.capture_lambda_handler (``tracing/tracer.py`` ``_is_cold_start``), Metrics'
# ColdStart metric (``metrics/provider/cold_start.py``, read by ``metrics/provider/base.py``
# ``_add_cold_start_metric``) and the older MetricManager's own (``metrics/base.py``).
_POWERTOOLS_COLD_START_MODULES = (
    "aws_lambda_powertools.logging.logger",
    "aws_lambda_powertools.tracing.tracer",
    "aws_lambda_powertools.metrics.provider.cold_start",
    "aws_lambda_powertools.metrics.base",
)


@contextlib.contextmanager
def _powertools_cold_start(flags: dict[str, bool]) -> Iterator[None]:
    """Give one execution environment its own Powertools cold-start flags meanwhile.

    Powertools keeps "is this the first invocation" in module globals, set ``True`` at
    import and cleared by the first decorated invocation; on Lambda each execution
    environment is a process of its own, here the process is shared, so the first
    function would clear it for all. During an invocation (one at a time: the bridge's
    lock) each flag holds ``flags``' value (``True`` for a new environment), afterwards
    what the invocation left is kept in ``flags`` and the process's value comes back. A
    Powertools module first imported during the invocation starts from its own default.
    """
    saved: dict[str, bool] = {}
    for name in _POWERTOOLS_COLD_START_MODULES:
        namespace = vars(sys.modules[name]) if name in sys.modules else {}
        if "is_cold_start" in namespace:
            saved[name] = namespace["is_cold_start"]
            namespace["is_cold_start"] = flags.get(name, True)
    try:
        yield
    finally:
        for name in _POWERTOOLS_COLD_START_MODULES:
            namespace = vars(sys.modules[name]) if name in sys.modules else {}
            if "is_cold_start" not in namespace:
                continue
            flags[name] = bool(namespace["is_cold_start"])
            if name in saved:
                namespace["is_cold_start"] = saved[name]


# --- the moto hook -----------------------------------------------------------------------

_REGISTRY: dict[str, LocalFunction] = {}

InvocationListener = Callable[["LocalFunction", Any, Invocation], None]
"""(function, event, invocation) → called after every invocation (the live view's history)."""
_LISTENERS: list[InvocationListener] = []


def add_listener(listener: InvocationListener) -> None:
    """Call ``listener`` after every invocation of any local function."""
    _LISTENERS.append(listener)


def remove_listener(listener: InvocationListener) -> None:
    if listener in _LISTENERS:
        _LISTENERS.remove(listener)


def register(function: LocalFunction) -> None:
    """Route moto Lambda invocations of ``function`` (by name or ARN) to the bridge."""
    _REGISTRY[function.name] = function
    _REGISTRY[function.arn] = function


def lookup(name_or_arn: str) -> LocalFunction:
    """Raises KeyError when no local function has this name or ARN."""
    key = (
        name_or_arn.split(":function:")[-1].split(":")[0]
        if ":function:" in name_or_arn
        else name_or_arn
    )
    return _REGISTRY[key] if key in _REGISTRY else _REGISTRY[name_or_arn]


def _bridged_invoke(
    self: LambdaSimpleBackend,
    function_name: str,
    qualifier: str | None,
    body: Any,
    headers: Any,
    response_headers: Any,
) -> bytes:
    try:
        function = lookup(function_name)
    except KeyError:  # not a function of a local cloud: moto's own behaviour
        original = _ORIGINAL_INVOKE(self, function_name, qualifier, body, headers, response_headers)
        return original.encode() if isinstance(original, str) else original or b""
    event = json.loads(body) if body else {}
    if _INVOKE_WRAPPER is None:
        invocation = function.invoke(event)
    else:
        invocation = _INVOKE_WRAPPER(function, event, lambda: function.invoke(event))
    if invocation.error:
        response_headers["x-amz-function-error"] = "Unhandled"
    response_headers["x-amz-executed-version"] = "$LATEST"
    if str(_header(headers, "X-Amz-Log-Type")).lower() == "tail":
        # LogType=Tail: the last 4 KB of the invocation's log, base64-encoded, as on AWS.
        tail = "\n".join(invocation.log_lines).encode()[-4096:]
        response_headers["x-amz-log-result"] = base64.b64encode(tail).decode()
    return invocation.payload_bytes()


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return None if value is None else str(value)


_ORIGINAL_INVOKE = LambdaSimpleBackend.invoke

InvokeWrapper = Callable[[LocalFunction, Any, Callable[[], Invocation]], Invocation]
"""(function, event, run the invocation) → the invocation the invoke API answers with."""
_INVOKE_WRAPPER: InvokeWrapper | None = None


def set_invoke_wrapper(wrapper: InvokeWrapper | None) -> None:
    """Wrap every invocation through the invoke API (``localcloud.faults`` uses it)."""
    global _INVOKE_WRAPPER
    _INVOKE_WRAPPER = wrapper


def install() -> None:
    """Replace ``LambdaSimpleBackend.invoke`` with the bridge, and hand threads' execution
    environments down to the threads they start (idempotent)."""
    LambdaSimpleBackend.invoke = _bridged_invoke  # type: ignore[method-assign]
    _own_threads()


def installed() -> bool:
    return LambdaSimpleBackend.invoke is _bridged_invoke
