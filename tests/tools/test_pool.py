"""The pool's rules (tests/support/pool.py): work units, longest first, balanced parts."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support import pool

PARTS = "tests/package/test_wheel_suite.py"


def items(*nodeids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def test_a_file_is_a_unit_and_each_test_of_a_split_file_is_one() -> None:
    assert pool.unit_of("tests/e2e/test_a.py::test_x[1]") == "tests/e2e/test_a.py"
    assert pool.unit_of(f"{PARTS}::test_part[part-2-of-6]") == f"{PARTS}::test_part[part-2-of-6]"
    assert PARTS in pool.SPLIT


def test_units_start_longest_first_new_files_before_all_and_a_files_order_is_kept() -> None:
    collected = items(
        "tests/unit/test_a.py::one",
        "tests/e2e/test_b.py::one",
        "tests/unit/test_a.py::two",
        "tests/new/test_c.py::one",
        f"{PARTS}::part[1]",
        f"{PARTS}::part[2]",
    )
    figures: Any = {
        "tests/unit/test_a.py": {"seconds": 1.0},
        "tests/e2e/test_b.py": {"seconds": 30.0},
        PARTS: {"seconds": 100.0},  # 50 s a part
    }
    pool.longest_first(collected, figures)
    assert [item.nodeid for item in collected] == [
        "tests/new/test_c.py::one",
        f"{PARTS}::part[1]",
        f"{PARTS}::part[2]",
        "tests/e2e/test_b.py::one",
        "tests/unit/test_a.py::one",
        "tests/unit/test_a.py::two",
    ]


def test_parts_are_balanced_heaviest_first_and_the_same_every_time() -> None:
    weights = {"a": 60.0, "b": 30.0, "c": 30.0, "d": 20.0, "e": 10.0, "f": 10.0}
    parts = pool.balanced(weights, 3)
    assert parts == [["a"], ["b", "d"], ["c", "e", "f"]]
    assert pool.shares(parts, weights) == [60.0, 50.0, 50.0]
    assert pool.balanced(dict(reversed(weights.items())), 3) == parts
    assert pool.balanced({"a": 1.0}, 3) == [["a"]]  # no empty part
    with pytest.raises(ValueError, match="at least 1"):
        pool.balanced(weights, 0)
