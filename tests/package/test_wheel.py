"""The local cloud as a package of its own (issue 31): its wheel, built from
``packaging/localcloud`` and installed alone (with its ``test`` extra) in a fresh virtual
environment in a folder outside the repository (``make wheel``: no ``src/``, no
``template.yaml``, no tooling, no ``node_modules``), carries the local cloud, its view and
its suite; imports and collects its suite from there; and serves an account that a stock
``sam deploy`` from the SAM CLI of another environment deploys a fixture app to, whose API
then answers. The suite itself runs from the wheel in ``test_wheel_suite.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from localcloud.account import SAM_CLI_SETTINGS
from localcloud.tests.support.aws import free_port
from localcloud.tests.support.paths import APPS
from tests.support.paths import ROOT
from tests.support.wheel import BIN, Installed, installed, outside, run

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "localcloud",
    "AWS_SECRET_ACCESS_KEY": "localcloud",
    "AWS_SESSION_TOKEN": "localcloud",
}


@pytest.fixture(scope="module")
def wheel() -> Installed:
    """The wheel of this checkout, installed alone (``make wheel``)."""
    return installed()


def listening(port: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture(scope="module")
def served(wheel: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``localcloud serve`` of the installed wheel, from a folder outside the repository,
    with an environment that names nothing of it."""
    folder = tmp_path_factory.mktemp("served")
    port = free_port()
    log = (folder / "serve.log").open("w")  # a file: a pipe nobody reads would fill
    server = subprocess.Popen(  # noqa: S603 - the installed wheel's own command
        [str(wheel.bin / "localcloud"), "serve", "--port", str(port)],
        cwd=folder,
        env=outside(folder, wheel),
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


def test_the_suite_imports_and_collects_from_the_installed_wheel(
    wheel: Installed, tmp_path: Path
) -> None:
    """The suite the wheel carries is imported from the installed environment, from a
    folder outside the repository, and collects there: the same modules as the checkout's
    ``localcloud/tests``, more than a thousand tests."""
    environment = outside(tmp_path, wheel)
    where = run(
        wheel.python, "-c", "import localcloud.tests; print(localcloud.tests.__file__)",
        cwd=tmp_path, env=environment,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(wheel.folder / "venv")
    collected = run(
        wheel.python, "-m", "pytest", "--pyargs", "localcloud.tests", "--collect-only", "-q",
        "-p", "no:cacheprovider", "-p", "no:xdist", cwd=tmp_path, env=environment,
    ).stdout  # fmt: skip
    ids = [line for line in collected.splitlines() if "::" in line]
    modules = {re.sub(r"\.py$", "", line.split("::")[0].rsplit("/", 1)[-1]) for line in ids}
    checkout = {path.stem for path in (ROOT / "localcloud" / "tests").glob("test_*.py")}
    assert modules == checkout
    assert len(ids) > 1000, collected[-2000:]


def test_the_wheel_carries_the_local_cloud_and_its_view_and_nothing_else(
    wheel: Installed,
) -> None:
    names = zipfile.ZipFile(wheel.wheel).namelist()
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
        **SAM_CLI_SETTINGS,  # as the local cloud's own commands run sam deploy
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
