"""The local cloud as a package of its own (issue 31): its wheel, built from
``packaging/localcloud``, installed alone (with its ``test`` extra) in a fresh virtual
environment in a folder outside the repository (no ``src/``, no ``template.yaml``, no
tooling, no ``node_modules``), passes its own suite there (``python -m pytest --pyargs
localcloud.tests``: ``make test`` runs the local cloud's suite this way, not from the
checkout), and serves an account that a stock ``sam deploy`` from the SAM CLI of another
environment deploys a fixture app to, whose API then answers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from localcloud.tests.support.aws import free_port
from localcloud.tests.support.paths import APPS
from tests.support.paths import ROOT

PACKAGE = ROOT / "packaging" / "localcloud"
RUNTIMES = ROOT / ".venv" / "lambda-runtimes"
"""The machine's Lambda interpreters, as ``make setup`` sets them up: the installed
package finds them through ``LOCALCLOUD_LAMBDA_RUNTIMES``, as its README says."""
SUITE_WORKERS = "2"
BIN = Path(sys.executable).parent
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "localcloud",
    "AWS_SECRET_ACCESS_KEY": "localcloud",
    "AWS_SESSION_TOKEN": "localcloud",
}


def run(*command: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the project's own build and the installed wheel
        [str(part) for part in command],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        **options,  # type: ignore[call-overload]
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``localcloud`` command of a fresh environment holding the wheel alone."""
    where = tmp_path_factory.mktemp("wheel")
    assert ROOT not in where.parents
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", where / "dist", PACKAGE)
    (wheel,) = (where / "dist").glob("localcloud-*.whl")
    base = getattr(sys, "_base_executable", sys.executable)
    run(base, "-m", "venv", where / "venv")  # with pip: `sam build` of an app runs it
    python = where / "venv" / "bin" / "python"
    # this environment's pip installs into that one (--python, a pip of a known version);
    # the development lock constrains the wheel's ranges (a run is the same on every
    # machine); --no-compile: the server compiles what it imports, not every module
    lock = ROOT / "requirements-dev.txt"
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile",
        "-c", lock, f"localcloud[test] @ {wheel.as_uri()}")  # fmt: skip
    run(sys.executable, "-m", "pip", "--python", python, "check")
    return where / "venv" / "bin" / "localcloud"


def listening(port: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture(scope="module")
def served(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``localcloud serve`` of the installed wheel, from a folder outside the repository,
    with an environment that names nothing of it."""
    folder = tmp_path_factory.mktemp("served")
    port = free_port()
    environment = outside(folder, installed)
    log = (folder / "serve.log").open("w")  # a file: a pipe nobody reads would fill
    server = subprocess.Popen(  # noqa: S603 - the installed wheel's own command
        [str(installed), "serve", "--port", str(port)],
        cwd=folder,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        listening(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def outside(folder: Path, installed: Path) -> dict[str, str]:
    """An environment naming nothing of the repository: the installed environment's
    ``bin`` on ``PATH``, a ``HOME`` of its own, no ``PYTHONPATH``; the machine's Lambda
    runtimes and download caches."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return {
        "PATH": f"{installed.parent}:/usr/bin:/bin",
        "HOME": str(folder),
        # the machine's caches (pip's downloads, test-app's integration environments)
        "XDG_CACHE_HOME": str(cache),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(cache / "pip")),
        "LOCALCLOUD_LAMBDA_RUNTIMES": str(RUNTIMES),
        "SAM_CLI_TELEMETRY": "0",
    }


def test_the_package_suite_passes_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    """The suite the wheel carries, imported from the installed environment and run from
    a folder outside the repository: every test of it passes there."""
    python = installed.parent / "python"
    environment = outside(tmp_path, installed)
    where = run(
        python, "-c", "import localcloud.tests; print(localcloud.tests.__file__)",
        cwd=tmp_path, env=environment,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(installed.parents[1])
    log = tmp_path / "suite.log"
    with log.open("w") as output:
        done = subprocess.run(  # noqa: S603 - the installed wheel's own suite
            [str(python), "-m", "pytest", "--pyargs", "localcloud.tests", "-q",
             "-p", "no:cacheprovider", "-n", SUITE_WORKERS, "--dist", "loadfile"],
            cwd=tmp_path, env=environment, stdout=output, stderr=subprocess.STDOUT,
            timeout=1200, check=False,
        )  # fmt: skip
    printed = log.read_text()
    summary = printed.strip().splitlines()[-1]
    assert done.returncode == 0, printed[-6000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None, summary
    assert int(passed.group(1)) > 600, summary
    assert not re.search(r"\d+ (failed|errors?|skipped)", summary), summary


def test_the_wheel_carries_the_local_cloud_and_its_view_and_nothing_else(installed: Path) -> None:
    (wheel,) = (installed.parents[2] / "dist").glob("localcloud-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if not n.startswith(("localcloud/", "localcloud-"))] == []
    assert [n for n in names if "__pycache__" in n or n.endswith(".pyc")] == []
    assert "localcloud/server/view/static/htmx.min.js" in names
    assert "localcloud/server/view/templates/page.html" in names
    assert "localcloud/services/lambda_/runtime/supervisor_main.py" in names
    assert "localcloud/tests/conftest.py" in names  # its own suite
    assert "localcloud/tests/fixtures/apps/jobs_app/template.yaml" in names


def test_a_stock_sam_deploy_to_the_installed_wheels_server(served: str, tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(APPS / "rest_api", app)
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **CREDENTIALS,
        "AWS_ENDPOINT_URL": served,
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "SAM_CLI_TELEMETRY": "0",
    }

    def client(service: str) -> Any:
        return boto3.client(
            service,  # type: ignore[call-overload]  # a name boto3's stubs type one by one
            endpoint_url=served,
            region_name="eu-west-1",
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=CREDENTIALS["AWS_SESSION_TOKEN"],
        )

    client("s3").create_bucket(
        Bucket="artifacts", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    run(
        BIN / "sam", "deploy", "--stack-name", "wheel-a", "--s3-bucket", "artifacts",
        "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
        "--no-confirm-changeset", "--no-fail-on-empty-changeset",
        cwd=app, env=environment,
    )  # fmt: skip
    cloudformation = client("cloudformation")
    (stack,) = cloudformation.describe_stacks(StackName="wheel-a")["Stacks"]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    assert outputs["ImplicitUrl"].startswith(f"{served}/restapis/")
    with urllib.request.urlopen(f"{outputs['ImplicitUrl']}/items/i-1", timeout=30) as answer:  # noqa: S310
        seen = json.load(answer)
    assert (seen["pathParameters"], seen["stage"]) == ({"id": "i-1"}, "Prod")
    with urllib.request.urlopen(f"{served}/_localcloud/htmx.min.js", timeout=30) as answer:  # noqa: S310
        assert answer.status == 200
        assert b"htmx" in answer.read(4096)
