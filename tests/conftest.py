"""Fixtures for every test: fake credentials, moto, tables built from template.yaml, the
workers' dependencies and RESULT log lines, a Lambda context and the sample events in
events/. They import nothing of the local cloud or the tooling (the application's tests
run with moto and botocore's Stubber alone); the cloud factory of the tooling's and the
end-to-end tests is in ``tests/support/order_guard.py``, imported by their folders'
conftest. Helpers live in ``tests/support``.

Every test is marked with its folder (``unit``, ``template``, ``proofs``, ``tools``,
``package``, ``e2e``), so ``pytest -m "unit or template"`` is the fast loop (``make
check``). The local cloud's own suite, ``localcloud/tests``, has its own conftest and
marks (``localcloud``; ``pytest localcloud/tests -m "not slow"`` is its quick loop, ``make
check-localcloud``); ``make test`` runs it from the installed wheel (tests/package).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from moto import mock_aws

from order_guard import queue_worker, workflow_worker
from order_guard.config import WorkflowWorkerSettings
from tests.support import durations, outside
from tests.support.aws import REGION, LambdaContext, Tables, create_table, shared_client
from tests.support.durations import Durations
from tests.support.environment import default_template, queue_settings, workflow_settings_for
from tests.support.logs import LogCapture, capture
from tests.support.paths import EVENTS, TESTS
from tests.support.pool import FilePool, longest_first
from tests.support.template import Template

collect_ignore_glob = ["fixtures/*"]
"""The fixture apps' own tests (``fixtures/apps/*/tests``) are inputs, run by ``python -m
localcloud test-app`` against a deployed stack, never collected by this suite."""

SUBJECTS = ("package", "e2e", "localcloud", "proofs", "tools", "template", "unit")
"""The test folders, each a marker of its tests."""


def pytest_configure(config: pytest.Config) -> None:
    """Record per-file durations (:mod:`tests.support.durations`) in the process that sees
    every test's report (pytest-xdist's controller, or the only one), each worker handing
    it the files it deselected tests of; read the figures the pool is ordered and split on
    once, in that process, and hand them to the workers; under ``--dist loadfile``, hand
    the units out in collection order (:mod:`tests.support.pool`)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        config.pluginmanager.register(Durations(), "order-guard-durations")
        durations.use(durations.known())
    else:
        config.pluginmanager.register(durations.Deselections(config), "order-guard-deselections")
        durations.use(workerinput[durations.WORKER_FIGURES])
    if getattr(config.option, "dist", None) == "loadfile":
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Each pytest-xdist worker gets the figures the controller read."""
    node.workerinput[durations.WORKER_FIGURES] = durations.known()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` as :class:`tests.support.pool.FilePool` schedules it."""
    if config.option.dist == "loadfile":
        return FilePool(config, log)
    return None


def pytest_report_header() -> list[str]:
    """Which inputs from outside the repository are here, once (:mod:`tests.support.outside`)."""
    return outside.header()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the folder it lives in (its subject); leave out the tests whose
    input from outside the repository is absent (``outside`` marker); order the work units
    longest first on the recorded durations (:func:`tests.support.pool.longest_first`)."""
    absent = {name for name, each in outside.INPUTS.items() if not each.present()}
    kept, left_out = [], []
    for item in items:
        if item.path.is_relative_to(TESTS):
            subject = item.path.relative_to(TESTS).parts[0]
            if subject in SUBJECTS and subject != "localcloud":
                item.add_marker(subject)
        needs = {str(mark.args[0]) for mark in item.iter_markers("outside")}
        unknown = needs - set(outside.INPUTS)
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: no outside input named {sorted(unknown)}")
        (left_out if needs & absent else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    longest_first(items, durations.known())


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region: no test can reach a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture(scope="session")
def template() -> Template:
    """template.yaml with the default samconfig environment's parameters."""
    return default_template()


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws: None) -> Any:
    return shared_client("dynamodb")


@pytest.fixture
def tables(dynamodb: Any, template: Template) -> Tables:
    """OrdersTable and AttemptsTable created from template.yaml's own properties."""
    names = {}
    for logical_id in ("OrdersTable", "AttemptsTable"):
        names[logical_id] = f"test-{logical_id}"
        create_table(dynamodb, names[logical_id], template.resources[logical_id]["Properties"])
    return Tables(orders=names["OrdersTable"], attempts=names["AttemptsTable"])


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def load_event() -> Callable[[str], Any]:
    """Load ``events/<name>.json``: the same files ``sam local invoke -e`` uses."""

    def load(name: str) -> Any:
        return json.loads((EVENTS / f"{name}.json").read_text())

    return load


@pytest.fixture
def queue_deps(dynamodb: Any, tables: Tables) -> queue_worker.Dependencies:
    return queue_worker.Dependencies(dynamodb=dynamodb, settings=queue_settings(tables.orders))


@pytest.fixture
def workflow_settings(tables: Tables) -> WorkflowWorkerSettings:
    return workflow_settings_for(tables.orders, tables.attempts)


@pytest.fixture
def workflow_deps(
    dynamodb: Any, workflow_settings: WorkflowWorkerSettings
) -> workflow_worker.Dependencies:
    return workflow_worker.Dependencies(dynamodb=dynamodb, settings=workflow_settings)


@pytest.fixture(autouse=True)
def fresh_metrics() -> Iterator[None]:
    """Tests that call a worker's testable core add metrics without the handler's flush;
    Powertools keeps them in one process-wide set, so clear it between tests."""
    yield
    queue_worker.metrics.clear_metrics()
    workflow_worker.metrics.clear_metrics()


@pytest.fixture
def queue_logs() -> Iterator[LogCapture]:
    yield from capture(queue_worker.logger)


@pytest.fixture
def workflow_logs() -> Iterator[LogCapture]:
    yield from capture(workflow_worker.logger)
