"""The package as a library people copy: its public surface, the documented example run as
written, one job a module, and the demonstration kept off the deployed path."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import order_guard
from order_guard import exceptions, workflow_worker
from tests.support.aws import LambdaContext, Tables, scan_orders
from tests.support.environment import workflow_settings_for

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "order_guard"
MODULES = sorted(path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__")
EXAMPLE_HEADING = "## Use it in your own function"
MAX_MODULE_LINES = 250
BROAD = frozenset({"Exception", "BaseException"})


def example_source() -> str:
    """The first ``python`` block under the example's heading in docs/design.md."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split(EXAMPLE_HEADING, 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"docs/design.md: no python block under {EXAMPLE_HEADING!r}"
    return match.group(1)


def imports_from_package(tree: ast.AST) -> Iterator[tuple[str, str, int]]:
    """``(module, name, line)`` of every ``from order_guard[.module] import name``.

    Raises:
        AssertionError: an ``import order_guard…`` statement, whose attribute reads
            (``order_guard.store._previous_order``) no import list would show.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] != "order_guard", (
                    f"line {node.lineno}: import {alias.name}; use from … import names"
                )
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("order_guard"):
            for alias in node.names:
                yield node.module or "", alias.name, node.lineno


def module_tree(name: str) -> ast.Module:
    return ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))


# --- the example in docs/design.md, run as written ----------------------------------------


@pytest.fixture
def example(
    aws: None, tables: Tables, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> dict[str, Any]:
    """The example's module namespace, executed under moto with its table's name set."""
    monkeypatch.setenv("ORDERS_TABLE_NAME", tables.orders)
    root = logging.getLogger()
    monkeypatch.setattr(root, "level", root.level)  # the example sets the root's level
    namespace: dict[str, Any] = {"__name__": "own_function"}
    exec(compile(example_source(), "docs/design.md", "exec"), namespace)  # noqa: S102
    return namespace


def sqs_event(*jobs: tuple[str, Any]) -> dict[str, Any]:
    return {
        "Records": [
            {"messageId": message_id, "body": json.dumps(job), "attributes": {}}
            for message_id, job in jobs
        ]
    }


def test_the_example_stores_a_repeated_job_once_and_acknowledges_the_repeat(
    example: dict[str, Any], dynamodb: Any, tables: Tables
) -> None:
    job = {"id": "own-1", "quantity": 2}
    first = example["lambda_handler"](sqs_event(("m1", job)), None)
    repeat = example["lambda_handler"](sqs_event(("m2", job), ("m3", job)), None)

    assert first == repeat == {"batchItemFailures": []}
    assert scan_orders(dynamodb, tables.orders) == {"own-1": (2, 600)}
    (item,) = dynamodb.scan(TableName=tables.orders)["Items"]
    assert item["first_written_by"] == {"S": "sqs:m1"}


def test_the_example_raises_the_documented_errors_and_lists_their_records(
    example: dict[str, Any], dynamodb: Any, tables: Tables, caplog: pytest.LogCaptureFixture
) -> None:
    example["lambda_handler"](sqs_event(("m1", {"id": "own-2", "quantity": 2})), None)
    conflicting = {"messageId": "m2", "body": json.dumps({"id": "own-2", "quantity": 3})}

    with pytest.raises(order_guard.OrderConflict, match="already stored with different details"):
        example["store_job"](conflicting)
    with pytest.raises(order_guard.InvalidOrder, match="quantity must be from 1 to 10"):
        example["store_job"]({"messageId": "m3", "body": '{"id": "own-3", "quantity": 0}'})
    response = example["lambda_handler"](
        sqs_event(
            ("m4", {"id": "own-2", "quantity": 3}),
            ("m5", {"id": "own-4", "quantity": 1}),
            ("m6", {"id": "own-5"}),
        ),
        None,
    )

    assert response == {"batchItemFailures": [{"itemIdentifier": "m4"}, {"itemIdentifier": "m6"}]}
    assert scan_orders(dynamodb, tables.orders) == {"own-2": (2, 600), "own-4": (1, 350)}
    said = {(r.getMessage(), r.exc_info[0] if r.exc_info else None) for r in caplog.records}
    for message_id, error in (("m4", order_guard.OrderConflict), ("m6", order_guard.InvalidOrder)):
        assert (f"message {message_id} not acknowledged", error) in said
    assert ("message m5: accepted", None) in said


def test_the_example_imports_only_public_names() -> None:
    tree = ast.parse(example_source())
    imported = list(imports_from_package(tree))
    assert imported, "the example imports nothing from order_guard"
    for module, name, _ in imported:
        assert module == "order_guard", f"the example imports from {module}, not the package"
        assert name in order_guard.__all__, f"the example imports {name}, not in __all__"


# --- the public surface -------------------------------------------------------------------


def test_the_package_lists_its_public_names_and_each_exists() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import order_guard; print(order_guard.__all__)"],
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = ast.literal_eval(out)
    assert listed == order_guard.__all__
    assert {"put_order_once", "Decision", "WriteOutcome", "Order", "parse_job_body"} <= set(listed)
    assert {"process_batch_by_key", "OrderGuardError"} <= set(listed)
    for name in listed:
        assert getattr(order_guard, name) is not None


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_its_public_names_and_says_its_job(name: str) -> None:
    module = importlib.import_module(f"order_guard.{name}")
    assert isinstance(module.__all__, list), f"{name}: no __all__ list"
    assert module.__all__, f"{name}: an empty __all__"
    for public in module.__all__:
        assert hasattr(module, public), f"order_guard.{name}.__all__ lists a missing {public}"
    assert (module.__doc__ or "").strip(), f"{name}: no docstring"
    lines = len((PACKAGE / f"{name}.py").read_text(encoding="utf-8").splitlines())
    assert lines < MAX_MODULE_LINES, f"{name}.py is {lines} lines"


@pytest.mark.parametrize("name", MODULES)
def test_no_module_imports_another_modules_internals(name: str) -> None:
    """The workers (and every other module) import from the package's modules only the
    names each lists in ``__all__``."""
    for module, imported, line in imports_from_package(module_tree(name)):
        if module == "order_guard":  # the package itself: only a submodule
            assert imported in MODULES, f"{name}.py:{line} imports order_guard.{imported}"
            continue
        public = importlib.import_module(module).__all__
        assert imported in public, f"{name}.py:{line}: {imported} is not in {module}.__all__"


def test_no_module_imports_the_order_store_only_for_a_dynamodb_helper() -> None:
    helpers = set(importlib.import_module("order_guard.dynamodb_calls").__all__)
    for name in MODULES:
        for module, imported, line in imports_from_package(module_tree(name)):
            if module == "order_guard.store":
                assert imported not in helpers, f"{name}.py:{line} imports {imported} from store"
    assert "order_guard.store" not in {
        module for module, *_ in imports_from_package(module_tree("attempts"))
    }


# --- the errors: one root, never raised ---------------------------------------------------


def test_every_error_derives_from_the_root_which_is_never_raised() -> None:
    classes = [
        cls
        for _, cls in inspect.getmembers(exceptions, inspect.isclass)
        if cls.__module__ == exceptions.__name__ and cls is not exceptions.OrderGuardError
    ]
    assert len(classes) == len(exceptions.__all__) - 1
    for cls in classes:
        # The root and no other of ours: a subclass of another error would report its
        # own name and miss a retrier or catcher that lists the parent.
        ours = [base for base in cls.__bases__ if base.__module__ == exceptions.__name__]
        assert ours == [exceptions.OrderGuardError], f"{cls.__name__}: {cls.__bases__}"
    for name in MODULES:
        for node in ast.walk(module_tree(name)):
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                named = getattr(raised, "id", None) or getattr(raised, "attr", None)
                assert named != "OrderGuardError", f"{name}.py:{node.lineno} raises the root"


def test_a_broad_except_is_left_only_where_a_records_failure_must_be_reported() -> None:
    """Each ``except Exception`` says why on its line: the failure becomes a batch item
    failure or a ``RESULT`` line (and is re-raised)."""
    found = []
    for name in MODULES:
        lines = (PACKAGE / f"{name}.py").read_text(encoding="utf-8").splitlines()
        for node in ast.walk(module_tree(name)):
            if not isinstance(node, ast.ExceptHandler):
                continue
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(kind is None or getattr(kind, "id", None) in BROAD for kind in caught):
                line = lines[node.lineno - 1]
                found.append(f"{name}:{node.lineno}")
                if "BaseException" in line:
                    assert node.body[-1].__class__ is ast.Raise, f"{name}.py:{node.lineno}"
                    continue
                assert "batch item failure" in line or "RESULT line" in line, (
                    f"{name}.py:{node.lineno}: a broad except that does not say why: {line}"
                )
                if "RESULT line" in line:
                    assert isinstance(node.body[-1], ast.Raise), f"{name}.py:{node.lineno}"
    assert found, "no broad except found: the check reads nothing"


# --- the demonstration stays off the deployed path ----------------------------------------


def test_the_worker_accepts_exactly_the_fault_modes_the_demonstration_knows() -> None:
    from order_guard import fault_modes  # noqa: PLC0415 - loaded for this check only

    assert set(workflow_worker.MODES) == {"normal", *fault_modes.FAULT_MODES}
    assert set(fault_modes.FAULT_MODES) > fault_modes.COUNTED_MODES


def test_the_workflow_worker_does_not_load_the_fault_modes_unless_they_are_enabled() -> None:
    code = (
        "import sys, order_guard.workflow_worker; print('order_guard.fault_modes' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "", "AWS_DEFAULT_REGION": "us-east-1"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "False"


@pytest.mark.parametrize("enabled", [False, True], ids=["fault modes off", "on"])
def test_a_normal_store_stage_runs_without_the_demonstration(
    enabled: bool,
    dynamodb: Any,
    tables: Tables,
    lambda_context: LambdaContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "order_guard.fault_modes", raising=False)
    settings = workflow_settings_for(tables.orders, tables.attempts, fault_modes_enabled=enabled)
    deps = workflow_worker.Dependencies(dynamodb, settings)

    workflow_worker.handle({"id": "plain", "quantity": 1}, lambda_context, deps)

    assert "order_guard.fault_modes" not in sys.modules
    if enabled:
        with pytest.raises(order_guard.TransientOrderError):
            workflow_worker.handle(
                {"id": "f", "quantity": 1, "mode": "flaky"}, lambda_context, deps
            )
        assert "order_guard.fault_modes" in sys.modules
