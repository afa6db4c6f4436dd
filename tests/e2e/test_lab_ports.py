"""``make lab`` serves a lab on the port its own code calls (issue 28, finding 8).

Q05's worker, as its text has the learner write it, creates its DynamoDB client with
``endpoint_url='http://127.0.0.1:5000'``: served on another port, its writes go to whatever
holds 5000. So ``make lab`` refuses another ``PORT``, naming the port and the line of the
lab's text that holds it, unless ``--any-port`` says the code was edited (the suite's own
lab runs say so: their workers call no port); on a busy port it suggests only what works.

Each test writes a lab text of the lab's shape in a temporary folder (the labs' text is
not in the repository), its worker calling a free port, and is refused before anything
is deployed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from order_guard_tools import cli
from order_guard_tools.labs import provision
from order_guard_tools.labs.serve import lab_cloud
from order_guard_tools.project import ROOT
from tests.support.aws import free_port

WORKER_LINE = 6
"""The line of :func:`q05_text` holding the worker's endpoint."""


def q05_text(port: int) -> str:
    """Lab Q05's text in its shape: prose, then the worker's here-document calling
    127.0.0.1:``port`` on line :data:`WORKER_LINE` (the Chinese text has it on line 63)."""
    return "\n".join(
        [
            "部署原子业务键保护",
            "使用 Terminal 旁的 AWS View (http://127.0.0.1:1/_localcloud/)：",  # prose, not code
            "cat > app.py <<'PY'",
            "import boto3",
            "def handler(event, context):",
            "    database=boto3.client('dynamodb',endpoint_url="
            f"'http://127.0.0.1:{port}',region_name='us-east-1')",
            "PY",
            "zip -q function.zip app.py",
            "",
        ]
    )


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    folder = tmp_path / "labs"
    folder.mkdir()
    return folder


@pytest.fixture
def busy() -> Iterator[int]:
    """A port something else listens on."""
    with socket.create_server(("127.0.0.1", 0)) as holder:
        yield holder.getsockname()[1]


def test_make_lab_refuses_a_port_other_than_the_one_the_labs_worker_calls(texts: Path) -> None:
    calls, asked = free_port(), free_port()
    (texts / "q05.zh.txt").write_text(q05_text(calls), encoding="utf-8")
    (texts / "q05.de.txt").write_text("Q05\n\n" + q05_text(calls), encoding="utf-8")

    make = subprocess.Popen(  # noqa: S603 - make, the project's own Makefile
        [  # noqa: S607
            "make",
            "--no-print-directory",
            "-o",
            "setup",
            "-o",
            "lab-tools",  # built already: the refusal alone
            "lab",
            "LAB=q05",
            f"PORT={asked}",
            f"LAB_TEXTS={texts}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, to stop it if it serves
    )
    try:
        out, _ = make.communicate(timeout=60)  # a hang guard, not a speed claim
    except subprocess.TimeoutExpired:
        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C, as make lab says
        out, _ = make.communicate(timeout=60)
        pytest.fail(f"make lab served on PORT={asked} instead of refusing it:\n{out}")

    assert make.returncode != 0
    assert out.splitlines()[-1] == (
        f"error: lab Q05's app.py calls http://127.0.0.1:{calls} itself "
        f"({texts}/q05.zh.txt:{WORKER_LINE}, also q05.de.txt:{WORKER_LINE + 2}), "
        f"so the lab runs on port {calls} only, not {asked}: make lab LAB=q05 (port {calls} "
        f"is free); or edit that line of your app.py to call port {asked} and add --any-port "
        f"(make lab LAB=q05 PORT={asked} ANY_PORT=1)"
    )
    assert "Lab Q05 (" not in out  # nothing was deployed


def test_the_lab_command_names_what_holds_the_labs_port_when_it_refuses_another(
    texts: Path, busy: int, capsys: pytest.CaptureFixture[str]
) -> None:
    (texts / "q05.zh.txt").write_text(q05_text(busy), encoding="utf-8")
    asked = free_port()

    assert cli.main(["lab", "q05", "--port", str(asked), "--lab-texts", str(texts)]) == 2

    printed = capsys.readouterr().out
    assert f": free port {busy} (ss -ltnp 'sport = :{busy}' (or lsof -i :{busy}) " in printed
    assert "names it) and run make lab LAB=q05; or edit that line" in printed


def test_a_busy_port_the_labs_worker_calls_is_to_be_freed_not_left(
    texts: Path, busy: int, capsys: pytest.CaptureFixture[str]
) -> None:
    (texts / "q05.zh.txt").write_text(q05_text(busy), encoding="utf-8")

    assert cli.main(["lab", "q05", "--port", str(busy), "--lab-texts", str(texts)]) == 2

    printed = capsys.readouterr().out.strip()
    assert printed.startswith(f"error: cannot listen on 127.0.0.1:{busy}: Address already in use")
    assert printed.endswith(
        f"; lab Q05's app.py calls http://127.0.0.1:{busy} itself "
        f"({texts}/q05.zh.txt:{WORKER_LINE}), so the lab needs this port: stop what holds it "
        f"(another make serve or make lab? ss -ltnp 'sport = :{busy}' (or lsof -i :{busy}) "
        "names it)"
    )
    assert "PORT=" not in printed


def test_with_any_port_a_busy_port_may_be_left_for_another_the_edited_worker_calls(
    texts: Path, busy: int, capsys: pytest.CaptureFixture[str]
) -> None:
    (texts / "q05.zh.txt").write_text(q05_text(5000), encoding="utf-8")

    options = ["--port", str(busy), "--any-port", "--lab-texts", str(texts)]
    assert cli.main(["lab", "q05", *options]) == 2

    printed = capsys.readouterr().out.strip()
    assert printed.endswith(
        "or pick another port, with your code edited to call it: "
        f"make lab LAB=q05 PORT={busy + 1} ANY_PORT=1"
    )


def test_a_lab_whose_code_calls_no_port_may_move_to_another(
    texts: Path, busy: int, capsys: pytest.CaptureFixture[str]
) -> None:
    (texts / "ev05.zh.txt").write_text(
        q05_text(busy).replace(f"endpoint_url='http://127.0.0.1:{busy}',", ""), encoding="utf-8"
    )

    assert cli.main(["lab", "ev05", "--port", str(busy), "--lab-texts", str(texts)]) == 2

    printed = capsys.readouterr().out.strip()
    assert printed.endswith(
        "or pick another port (lab EV05's code calls none of its own): "
        f"make lab LAB=ev05 PORT={busy + 1}"
    )


def test_lab_env_gives_another_port_only_once_a_lab_runs_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()

    assert cli.main(["lab-env", "--port", str(port)]) == 2

    printed = capsys.readouterr()
    assert printed.out == ""  # nothing for eval
    assert printed.err == (
        f"error: no lab answers at http://127.0.0.1:{port}: start the lab there first (make lab "
        f"LAB=… PORT={port}); lab-env gives a port other than make lab's own (5000) only once "
        "a lab runs there\n"
    )


def test_lab_check_says_where_an_unedited_worker_writes_when_the_lab_runs_elsewhere(
    texts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls, port = free_port(), free_port()
    (texts / "q05.zh.txt").write_text(q05_text(calls), encoding="utf-8")
    lab, cloud = lab_cloud(
        cli.build_parser().parse_args(["lab", "q05", "--port", str(port), "--any-port"])
    )
    with cloud:
        provision(lab, cloud.client)

        assert cli.main(["lab-check", "--port", str(port), "--lab-texts", str(texts)]) == 1

    assert capsys.readouterr().out.splitlines()[1] == (
        f"  note: lab Q05's app.py calls http://127.0.0.1:{calls} itself "
        f"({texts}/q05.zh.txt:{WORKER_LINE}): deployed unedited, it writes to port {calls}, "
        f"not to this lab on {port}"
    )
