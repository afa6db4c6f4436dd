"""`make bench` works, at a small size: every figure is produced and the request counts
(which do not depend on the machine) are exact. Speed is not asserted: a benchmark is
not a timed test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from order_guard_tools.bench import runner as bench


def test_a_small_bench_run_writes_every_figure_and_exact_request_counts(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"

    results = bench.run(
        messages=40, rounds=1, round_trip_ms=10, repeats=1, batch_repeats=1, output=output
    )

    assert json.loads(output.read_text()) == json.loads(json.dumps(results))
    assert results["requests_per_message"] == {
        "order-guard": {"new": 1.0, "repeat": 1.0, "conflict": 1.0, "invalid": 0.0},
        "floor": {"new": 1.0, "repeat": 1.0, "conflict": 1.0, "invalid": 0.0},
        "powertools": {"new": 3.0, "repeat": 1.0, "conflict": 1.0, "invalid": 0.0},
        "read-then-write": {"new": 2.0, "repeat": 1.0, "conflict": 1.0, "invalid": 0.0},
    }
    assert set(results["messages_per_second"]) == set(bench.STREAM_CONTESTANTS)
    for name in bench.CONTESTANTS:
        assert results["messages_per_second"][name]["median"] > 0
        assert results["messages_per_second_2ms"][name]["median"] > 0
        assert results["messages_per_second_latency"][name]["median"] > 0
        assert results["batch_round_trips"][name]["wall"] > 0
        assert results["peak_memory_kib"][name] > 0
    assert set(results["init"]) == {
        "bare boto3 handler",
        "queue worker",
        "workflow worker",
        "powertools idempotency",
    }
    for figures in results["init"].values():
        assert 0 < figures["min_ms"] <= figures["median_ms"] <= figures["max_ms"]
    assert results["init"]["bare boto3 handler"]["vs_bare"] == 1.0
    assert results["init_cost"]["queue worker"]["cold_starts_per_million_orders"] == 1000
    assert results["write_units"]["queue: duplicate (condition fails)"]["write_units"] == 1
    critical_path = results["batch_round_trips_worker"]
    assert critical_path["wall"] >= 1.0  # at least the round trip
    assert critical_path["worker_alone"] >= 1.0
    assert critical_path["sdk_cpu_ms"] > 0
    assert critical_path["worker_cpu_ms"] > 0
    assert results["messages_per_second"]["floor"]["vs_floor"] == 1.0
    assert set(results["cost_model"]) == {*bench.CONTESTANTS, "limits"}
    handoff = results["thread_handoff"]
    assert handoff["sequential_tasks_per_second"] > 0
    assert handoff["threaded_tasks_per_second"] > 0
    assert handoff["ratio"] == pytest.approx(
        handoff["threaded_tasks_per_second"] / handoff["sequential_tasks_per_second"], abs=0.01
    )
