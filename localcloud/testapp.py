"""``python -m localcloud test-app PATH``: a SAM application judged as its developer would
judge it on AWS, on a fresh local account.

For each application folder (a ``template.yaml`` at its root), in order:

1. ``sam build`` into a temporary folder (nothing is written into the application's);
2. a fresh local account on ``127.0.0.1:PORT`` in this process, an S3 bucket for the
   artifacts, and the stock ``sam deploy --no-resolve-s3`` to it (timed: the verdict's
   deploy time);
3. the application's own ``tests/integration`` with ``AWS_SAM_STACK_NAME``,
   ``AWS_ENDPOINT_URL``, the region and local credentials set, in a virtual environment
   of its own holding ``tests/requirements.txt`` (kept under
   ``~/.cache/localcloud/test-app/``, one per requirements file and interpreter), run from
   the application's folder; or, for an application without integration tests, each
   function of the stack invoked once with the first ``events/*.json`` (``{}`` without
   one) and each state machine started once with ``{}``: every invocation answering
   without a function error and every execution ``SUCCEEDED`` is a pass;
4. ``sam delete``, then one verdict line: ``PASS`` or ``FAIL``, the application, its stack
   name and region, the deploy time, what was run and its result.

Every step runs under one time limit per application (``--timeout``, seconds): a step
still running when it is spent is killed with its process group (an integration test may
loop forever waiting for a log stream) and the application fails with "timed out".
The exit status is 0 when every application passed, 1 otherwise, 2 when the command
cannot start (no SAM CLI, a folder without a template, a busy port).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.account import FAKE_CREDENTIALS, SAM_CLI_SETTINGS, LocalCloud
from localcloud.server.app import free_port
from localcloud.server.ports import ServeError, check_port
from localcloud.text import say

CACHE: Final = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "localcloud"
"""Where the integration tests' virtual environments are kept between runs."""

TEMPLATE_NAMES: Final = ("template.yaml", "template.yml")
"""The names ``sam build`` looks for, in its order."""

CAPABILITIES: Final = ("CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND")
"""What ``sam deploy --guided`` asks a developer to acknowledge for such templates."""

TAIL_LINES: Final = 25
"""How much of a failed step's output is printed above its verdict."""


class TimedOut(Exception):
    """The application's time limit was spent during a step (its process group killed)."""


class StepFailed(Exception):
    """A step ended unsuccessfully; the message is the verdict's reason, ``output`` the
    step's output (its tail is printed)."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.output = output


@dataclass
class Run:
    """One application's run: where it is, how it is deployed, and its time limit."""

    app: Path
    stack_name: str
    region: str
    port: int
    deadline: float
    """``time.monotonic()`` at which the application's time limit is spent."""
    work: Path
    """A temporary folder: the build, the logs, an empty AWS config."""
    env: dict[str, str] = field(default_factory=dict)

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimedOut()
        return left

    def step(
        self, name: str, argv: Sequence[str], *, extra_env: Mapping[str, str] | None = None
    ) -> str:
        """Run ``argv`` in the application's folder under what is left of the time limit;
        its output is kept in ``<work>/<name>.log`` and returned.

        Raises:
            TimedOut: the limit was spent (the step's process group is killed).
            StepFailed: a non-zero exit status.
        """
        log = self.work / f"{name}.log"
        with log.open("w") as out:
            process = subprocess.Popen(  # noqa: S603 - argv built here, no shell
                list(argv),
                cwd=self.app,
                env={**self.env, **(extra_env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                code = process.wait(timeout=self.remaining())
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise TimedOut() from None
        output = log.read_text(errors="replace")
        if code != 0:
            raise StepFailed(f"{name} exited {code}", output)
        return output


def find_sam() -> str:
    """The SAM CLI beside this interpreter (an environment that installed both), else the
    one on ``PATH``.

    Raises:
        ServeError: no SAM CLI is found.
    """
    beside = Path(sys.executable).with_name("sam")
    if beside.is_file():
        return str(beside)
    found = shutil.which("sam")
    if found is None:
        raise ServeError("the SAM CLI (sam) is not installed: pip install aws-sam-cli")
    return found


def template_of(app: Path) -> Path:
    """The application's template.

    Raises:
        ServeError: the folder holds none of :data:`TEMPLATE_NAMES`.
    """
    for name in TEMPLATE_NAMES:
        if (app / name).is_file():
            return app / name
    raise ServeError(f"{app} holds no {' or '.join(TEMPLATE_NAMES)}: is it a SAM application?")


def tool_env(run: Run, endpoint_url: str) -> dict[str, str]:
    """The environment every step runs in: the local account's endpoint, region and
    credentials, an empty AWS config (a developer's profiles never apply), no telemetry,
    this interpreter's folder first on ``PATH`` (``sam build`` looks for ``python3.X``)."""
    config = run.work / "aws-config"
    config.write_text("")
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AWS_") and key not in {"PYTHONPATH", "VIRTUAL_ENV"}
    }
    return {
        **kept,
        **FAKE_CREDENTIALS,
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_DEFAULT_REGION": run.region,
        "AWS_REGION": run.region,
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(config),
        "SAM_CLI_TELEMETRY": "0",
        **{key: os.environ.get(key, value) for key, value in SAM_CLI_SETTINGS.items()},
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def integration_environment(run: Run, requirements: Path | None) -> Path:
    """A virtual environment holding ``pytest`` and the packages ``requirements`` names,
    made once per requirements text and interpreter and kept in :data:`CACHE` (two runs
    at once make it once: the second waits on its lock). Returns its interpreter.

    Raises:
        TimedOut, StepFailed: making it or installing the packages failed (nothing kept).
    """
    text = requirements.read_text() if requirements is not None else ""
    key = hashlib.sha256(f"{sys.version}\n{text}".encode()).hexdigest()[:16]
    home = CACHE / "test-app" / key
    python = home / "bin" / "python"
    with _locked(home.with_suffix(".lock")):
        if (home / ".complete").is_file():
            return python
        shutil.rmtree(home, ignore_errors=True)
        try:
            run.step("venv", [sys.executable, "-m", "venv", str(home)])
            pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            wanted = [
                *pytest_requirement(text),
                *(["-r", str(requirements)] if requirements else []),
            ]
            run.step("pip", [*pip, *wanted])
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise
        (home / ".complete").touch()
    return python


PYTEST_CONFIGS: Final = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The files pytest reads its configuration from, in its order."""


def pytest_arguments(app: Path, work: Path) -> list[str]:
    """What keeps pytest inside the application: its folder as the root and the last
    folder searched for ``conftest.py``, and its own configuration file or, without one,
    an empty one (never the configuration or ``conftest.py`` of a project the folder
    happens to sit in)."""
    arguments = ["--rootdir", str(app), "--confcutdir", str(app)]
    if not any((app / name).is_file() for name in PYTEST_CONFIGS):
        empty = work / "pytest.ini"
        empty.write_text("[pytest]\n")
        arguments += ["-c", str(empty)]
    return arguments


def pytest_requirement(requirements: str) -> list[str]:
    """``pytest`` pinned to the version beside this interpreter (or unpinned without one),
    unless the application's requirements name it."""
    if re.search(r"^\s*pytest\b(?![-_.\w])", requirements, re.MULTILINE | re.IGNORECASE):
        return []
    try:
        return [f"pytest=={importlib.metadata.version('pytest')}"]
    except importlib.metadata.PackageNotFoundError:
        return ["pytest"]


STACK_NAME_LIMIT: Final = 128
"""CloudFormation's longest stack name."""


def stack_name_for(app: Path) -> str:
    """``<folder>-local`` in the characters a stack name may hold (``[a-zA-Z][-a-zA-Z0-9]*``,
    at most 128: CloudFormation's CreateStack): others become ``-``, a name not starting
    with a letter is prefixed ``app-``."""
    name = re.sub(r"[^-a-zA-Z0-9]", "-", app.name) + "-local"
    if not name[0].isalpha():
        name = f"app-{name}"
    return name[:STACK_NAME_LIMIT]


def integration_tests(app: Path) -> Path | None:
    """``tests/integration`` when it holds a ``test_*.py`` or ``*_test.py`` file."""
    folder = app / "tests" / "integration"
    if folder.is_dir() and (any(folder.rglob("test_*.py")) or any(folder.rglob("*_test.py"))):
        return folder
    return None


def last_line(output: str) -> str:
    """pytest's summary (its last non-empty line, without the ``=`` rule)."""
    lines = [line.strip(" =") for line in output.splitlines() if line.strip(" =")]
    return lines[-1] if lines else "no output"


CLIENT_SIDE_ERRORS: Final = ("botocore.exceptions.ParamValidationError", "ParamValidationError:")
"""What botocore raises before a request is sent: the test's own call is malformed."""
_INVALID_TYPE: Final = re.compile(
    r"(Invalid type for parameter [^,]+), value: .*, type: <class '([^']+)'>, "
    r"valid types: <class '([^']+)'>.*"
)


def client_side_error(output: str) -> str | None:
    """A note for a test run that failed on botocore's parameter validation: the request
    never left the test's process, so the same call fails against AWS; ``None`` for
    any other failure."""
    for line in output.splitlines():
        text = line.strip()
        if any(marker in text for marker in CLIENT_SIDE_ERRORS) or text.startswith(
            "E   botocore.exceptions.ParamValidationError"
        ):
            found = next(
                (
                    _INVALID_TYPE.sub(r"\1: a \2 where \3 is valid", follow.strip(" E"))
                    for follow in output.splitlines()
                    if "Invalid type for parameter" in follow
                    or "Missing required parameter" in follow
                ),
                "",
            )
            detail = f": {found}" if found else ""
            return (
                "botocore refused the test's own request before sending it, as it would "
                f"against AWS{detail}"
            )
    return None


def first_event(app: Path) -> tuple[str, Any]:
    """The first ``events/*.json`` by name, and its payload (``{}`` without one)."""
    events = sorted((app / "events").glob("*.json"))
    if not events:
        return "{}", {}
    return f"events/{events[0].name}", json.loads(events[0].read_text())


def invoke_each(cloud: LocalCloud, run: Run) -> str:
    """Each function of the stack invoked once with :func:`first_event`, each state
    machine started once with ``{}`` and waited for (within the time limit).

    Raises:
        StepFailed: a function error or an execution that did not succeed, naming it.
        TimedOut: an execution still running when the limit is spent.
    """
    cfn = cloud.client("cloudformation")
    pages = cfn.get_paginator("list_stack_resources").paginate(StackName=run.stack_name)
    resources = [r for page in pages for r in page["StackResourceSummaries"]]
    functions = [r for r in resources if r["ResourceType"] == "AWS::Lambda::Function"]
    machines = [r for r in resources if r["ResourceType"] == "AWS::StepFunctions::StateMachine"]
    event_name, payload = first_event(run.app)
    for resource in functions:
        answer = cloud.client("lambda").invoke(
            FunctionName=resource["PhysicalResourceId"], Payload=json.dumps(payload).encode()
        )
        body = answer["Payload"].read().decode(errors="replace")
        if "FunctionError" in answer:
            raise StepFailed(f"{resource['LogicalResourceId']} with {event_name}: {body}")
    sfn = cloud.client("stepfunctions")
    for resource in machines:
        arn = sfn.start_execution(stateMachineArn=resource["PhysicalResourceId"], input="{}")[
            "executionArn"
        ]
        while (execution := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
            run.remaining()
            time.sleep(0.2)
        if execution["status"] != "SUCCEEDED":
            raise StepFailed(
                f"{resource['LogicalResourceId']} execution {execution['status']}: "
                f"{execution.get('error', '')} {execution.get('cause', '')}".strip()
            )
    return (
        f"{len(functions)} function(s) invoked with {event_name}, "
        f"{len(machines)} state machine(s) run: no error"
    )


def judge(app: Path, *, stack_name: str, region: str, port: int, timeout_s: float) -> bool:
    """Build, deploy, test and delete one application; print its verdict line (and the
    tail of a failed step's output above it). Returns whether it passed."""
    template_of(app)
    sam = find_sam()
    with tempfile.TemporaryDirectory(prefix="localcloud-test-app-") as work_dir:
        run = Run(app, stack_name, region, port, time.monotonic() + timeout_s, Path(work_dir))
        cloud = LocalCloud(region=region, server_port=port)
        assert cloud.endpoint_url is not None
        run.env = tool_env(run, cloud.endpoint_url)
        deployed_s: float | None = None
        outcome = ""
        failure: StepFailed | None = None
        with cloud:
            cloud.start_event_sources()
            try:
                build = run.work / "build"
                run.step("build", [sam, "build", "--build-dir", str(build)])
                bucket = f"localcloud-test-app-{uuid.uuid4().hex[:12]}"
                location = {} if region == "us-east-1" else {"LocationConstraint": region}
                cloud.client("s3").create_bucket(
                    Bucket=bucket,
                    **({"CreateBucketConfiguration": location} if location else {}),
                )
                started = time.monotonic()
                run.step(
                    "deploy",
                    [
                        sam, "deploy", "--template-file", str(build / "template.yaml"),
                        "--stack-name", stack_name, "--region", region,
                        "--s3-bucket", bucket, "--no-resolve-s3",
                        "--capabilities", *CAPABILITIES,
                        "--no-confirm-changeset", "--no-fail-on-empty-changeset",
                    ],
                )  # fmt: skip
                deployed_s = time.monotonic() - started
                tests = integration_tests(app)
                if tests is None:
                    outcome = invoke_each(cloud, run)
                else:
                    requirements = app / "tests" / "requirements.txt"
                    python = integration_environment(
                        run, requirements if requirements.is_file() else None
                    )
                    output = run.step(
                        "tests",
                        [
                            str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *pytest_arguments(app, run.work), str(tests.relative_to(app)),
                        ],
                        extra_env={"AWS_SAM_STACK_NAME": stack_name},
                    )  # fmt: skip
                    outcome = f"{tests.relative_to(app)}: {last_line(output)}"
            except TimedOut:
                failure = StepFailed(f"timed out after {timeout_s:g} s")
            except StepFailed as exc:
                if exc.args[0].startswith("tests exited"):
                    said = f"tests/integration: {last_line(exc.output)}"
                    if (client_side := client_side_error(exc.output)) is not None:
                        said += f" ({client_side})"
                    exc = StepFailed(said, exc.output)
                elif exc.args[0].startswith("deploy exited") and (
                    reason := first_failure(cloud, stack_name)
                ):
                    exc = StepFailed(f"deploy failed: {reason}", exc.output)
                failure = exc
            deleted = _delete(run, sam) if deployed_s is not None else "not deployed"
        where = f"{app.name} (stack {stack_name}, {region}, port {port})"
        deploy = "" if deployed_s is None else f"deployed in {deployed_s:.1f} s; "
        if failure is not None:
            for line in failure.output.splitlines()[-TAIL_LINES:]:
                say(f"  | {line}")
            say(f"FAIL {where}: {deploy}{failure}; {deleted}")
            return False
        say(f"PASS {where}: {deploy}{outcome}; {deleted}")
        return True


def first_failure(cloud: LocalCloud, stack_name: str) -> str | None:
    """The first resource that failed in the stack's last deploy, as ``<logical id>:
    <reason>`` (its ``CREATE_FAILED`` or ``UPDATE_FAILED`` event), or ``None``."""
    try:
        events = cloud.client("cloudformation").describe_stack_events(StackName=stack_name)
    except ClientError:
        return None  # no stack: the change set itself was refused
    for event in reversed(events["StackEvents"]):  # CloudFormation lists the newest first
        if event["ResourceStatus"] in {"CREATE_FAILED", "UPDATE_FAILED"}:
            return f"{event['LogicalResourceId']}: {event.get('ResourceStatusReason', '')}"
    return None


def _delete(run: Run, sam: str) -> str:
    """``sam delete`` of the stack, with a little time of its own past a spent limit."""
    run.deadline = max(run.deadline, time.monotonic() + 60)
    try:
        run.step(
            "delete",
            [sam, "delete", "--stack-name", run.stack_name, "--region", run.region, "--no-prompts"],
        )
    except (TimedOut, StepFailed) as exc:
        return f"sam delete failed: {exc or 'timed out'}"
    return "deleted"


def run_apps(args: argparse.Namespace) -> int:
    """Judge each application folder of ``args.paths`` on its own fresh account."""
    apps = [Path(path).resolve() for path in args.paths]
    for app in apps:
        template_of(app)
    find_sam()
    if args.port:
        check_port("127.0.0.1", args.port, f"pick another port (--port {args.port + 1})")
    passed = 0
    for app in apps:
        stack_name = args.stack_name or stack_name_for(app)
        port = args.port or free_port()
        passed += judge(
            app, stack_name=stack_name, region=args.region, port=port, timeout_s=args.timeout
        )
    if len(apps) > 1:
        say(f"{passed} of {len(apps)} applications passed")
    return 0 if passed == len(apps) else 1


def add_parser(commands: Any) -> None:
    """The ``test-app`` subcommand of ``python -m localcloud``."""
    p = commands.add_parser(
        "test-app",
        help="build, deploy and run a SAM app's own integration tests on a fresh account",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a SAM application's folder")
    p.add_argument(
        "--stack-name", help="the stack each app is deployed as (default: <folder>-local)"
    )
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    p.add_argument(
        "--timeout", type=float, default=600, help="seconds per application, every step included"
    )
    p.set_defaults(run=run_apps)
