"""The suite's own rule (issue 28, finding 14): no test asserts how fast something ran.

A wall-clock delta (``time.monotonic()``, ``time.perf_counter()`` or ``time.time()`` minus
a start) asserted below a number written into the test is a speed claim, and a loaded
machine fails it (``assert took < 120`` failed at 199 s on two busy cores). Speed is
measured by ``make bench``; a deadline that is the behaviour under test is checked against
its configured value (at least the timeout, the backoff), and an upper bound is a named
hang guard far above what the wait takes. CPU clocks (``time.thread_time()``) are not wall
clocks.

The scan is syntactic and kept simple: a name counts as a delta when it is assigned one
in the same module, directly or from the matching item of a tuple that a function of the
module returns; a delta computed elsewhere (in a shell script, another module) is not seen.
"""

from __future__ import annotations

import ast
import re

from tests.support.paths import TESTS

WALL_CLOCKS = frozenset(
    {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
)
"""The functions of ``time`` that read a wall clock (``time.time()`` as well)."""
BARE_WALL_CLOCKS = WALL_CLOCKS - {"time"}
"""The same, imported by name (``from time import monotonic``); a bare ``time()`` is too
ambiguous to count."""


def _reads_a_wall_clock(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Attribute):
        return (
            function.attr in WALL_CLOCKS
            and isinstance(function.value, ast.Name)
            and function.value.id == "time"
        )
    return isinstance(function, ast.Name) and function.id in BARE_WALL_CLOCKS


def _is_delta(node: ast.AST) -> bool:
    """``<wall clock>() - <start>``."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and _reads_a_wall_clock(node.left)
    )


def _is_number(node: ast.AST) -> bool:
    """A number written into the test: a literal, or arithmetic of literals."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _is_number(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    return False


def _delta_names(tree: ast.Module) -> set[str]:
    """The names a module assigns a wall-clock delta, directly or through a function of
    the module that returns one (alone or as an item of a tuple)."""
    names: set[str] = set()

    def timed(node: ast.AST) -> bool:
        return _is_delta(node) or (isinstance(node, ast.Name) and node.id in names)

    # one walk of the module: each function's returned values, every assignment
    returned: list[tuple[str, list[ast.expr]]] = []
    assignments: list[ast.Assign | ast.AnnAssign] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and inner.value is not None:
                    value = inner.value
                    returned.append(
                        (node.name, value.elts if isinstance(value, ast.Tuple) else [value])
                    )
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            assignments.append(node)
    for _ in range(3):  # a name, a function returning it, a caller's name: a fixed point
        returns: dict[str, list[bool]] = {}
        for function, items in returned:
            if any(timed(item) for item in items):
                returns[function] = [timed(item) for item in items]
        for node in assignments:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            assert value is not None
            for target in targets:
                if isinstance(target, ast.Name) and timed(value):
                    names.add(target.id)
                called = (
                    value.func.id
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    else None
                )
                shape = returns.get(called or "")
                if shape is None:
                    continue
                items = target.elts if isinstance(target, ast.Tuple) else [target]
                if len(items) == len(shape):
                    names |= {
                        item.id
                        for item, is_timed in zip(items, shape, strict=True)
                        if is_timed and isinstance(item, ast.Name)
                    }
    return names


CLOCK_CALL = re.compile(
    r"\btime\s*\.\s*(?:{attributes})\s*\(|(?<![\w.])(?:{bare})\s*\(".format(
        attributes="|".join(sorted(WALL_CLOCKS)), bare="|".join(sorted(BARE_WALL_CLOCKS))
    )
)
"""A call of a wall clock as :func:`_reads_a_wall_clock` finds it, in a module's text: a
module without one holds no delta, and is not parsed."""


def speed_claims(source: str) -> list[tuple[int, str]]:
    """``(line, assertion)`` for each ``assert`` that holds a wall-clock delta (or a name
    assigned one) below a number: ``delta < n``, ``delta <= n``, ``n > delta``, ``n >= delta``."""
    if "assert" not in source or not CLOCK_CALL.search(source):
        return []
    tree = ast.parse(source)
    names = _delta_names(tree)

    def timed(node: ast.AST) -> bool:
        return _is_delta(node) or (isinstance(node, ast.Name) and node.id in names)

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            operands = [compare.left, *compare.comparators]
            for left, op, right in zip(operands, compare.ops, operands[1:], strict=False):
                below = isinstance(op, ast.Lt | ast.LtE) and timed(left) and _is_number(right)
                above = isinstance(op, ast.Gt | ast.GtE) and _is_number(left) and timed(right)
                if below or above:
                    found.append((node.lineno, ast.unparse(node.test)))
    return found


def test_the_scan_finds_the_speed_claims_the_suite_had() -> None:
    """The shapes issue 28 removed: a delta returned by a helper and asserted by its
    caller, a delta asserted at once, a delta in a name; and what stays allowed."""
    source = """
import time

def replay():
    started = time.monotonic()
    took = time.monotonic() - started
    return {}, took

def test_lab():
    steps, took = replay()
    assert took < 120

def test_busy_port():
    started = time.monotonic()
    assert time.monotonic() - started < 15

def test_budget():
    started = time.perf_counter()
    elapsed = time.perf_counter() - started
    assert 10 > elapsed

def test_allowed():
    started = time.monotonic()
    elapsed = time.monotonic() - started
    assert elapsed >= 2 * 1.0
    assert elapsed < HANG_GUARD_S
    deadline = time.monotonic() + 30
    assert time.monotonic() < deadline, "did not finish"
    spent = time.thread_time() - started
    assert spent < 0.09
"""
    assert [line for line, _ in speed_claims(source)] == [11, 15, 20]


def test_no_test_asserts_how_fast_something_ran() -> None:
    claims = [
        f"{path.relative_to(TESTS.parent)}:{line}: assert {assertion}"
        for folder in (TESTS, TESTS.parent / "localcloud" / "tests")  # the local cloud's own too
        for path in sorted(folder.rglob("*.py"))
        for line, assertion in speed_claims(path.read_text())
    ]
    assert claims == [], (
        "a wall-clock delta asserted below a number is a speed claim that a loaded machine "
        "fails: measure speed in make bench; check a deadline against its configured value "
        "(at least the timeout) or a named hang guard far above it:\n" + "\n".join(claims)
    )
