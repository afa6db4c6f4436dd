"""The cost model's capacity units follow DynamoDB's documented rule (Developer Guide,
"Item sizes and formats" and "DynamoDB read and write operations"), checked on the
guide's own kinds of example, never on the emulator's ConsumedCapacity."""

from __future__ import annotations

import pytest

from order_guard_tools.bench.cost_model import (
    init_cost,
    item_size_bytes,
    write_units,
    write_units_per_decision,
)


@pytest.mark.parametrize(
    ("item", "size"),
    [
        ({"id": {"S": "abc"}}, 2 + 3),
        ({"id": {"S": "é"}}, 2 + 2),  # UTF-8 bytes, not characters
        ({"n": {"N": "1100"}}, 1 + 2),  # "11" significant: 1 byte per two digits, plus 1
        ({"n": {"N": "123.45"}}, 1 + 4),  # five significant digits: 3, plus 1
        ({"n": {"N": "0.000100"}}, 1 + 2),  # zeros trimmed
        ({"b": {"BOOL": True}, "z": {"NULL": True}}, 2 + 2),
        ({"s": {"SS": ["ab", "c"]}}, 1 + 3),
        ({"l": {"L": [{"S": "ab"}, {"N": "1"}]}}, 1 + 3 + (1 + 2) + (1 + 2)),
        ({"m": {"M": {"k": {"S": "v"}}}}, 1 + 3 + (1 + 1 + 1)),
    ],
)
def test_item_sizes(item: dict[str, dict[str, object]], size: int) -> None:
    assert item_size_bytes(item) == size


def test_a_write_is_the_larger_item_rounded_up_to_a_kilobyte_and_at_least_one_unit() -> None:
    assert write_units(0, 1) == 1
    assert write_units(0, 1024) == 1
    assert write_units(0, 1025) == 2
    assert write_units(3000, 500) == 3  # an update that shrinks the item: the larger size
    assert write_units(0, 0) == 1


def test_every_decision_of_the_queue_path_costs_one_write_unit_and_invalid_none() -> None:
    units = write_units_per_decision()
    assert units["queue: accepted"]["write_units"] == 1
    assert units["queue: duplicate (condition fails)"]["write_units"] == 1  # still consumed
    assert units["queue: conflict (condition fails)"]["write_units"] == 1
    assert units["queue: invalid"]["write_units"] == 0
    assert units["workflow: first attempt, accepted"]["write_units"] == 2  # counter + order
    assert 150 < units["queue: accepted"]["item_bytes"] < 1024


def test_the_billed_init_per_million_orders() -> None:
    cost = init_cost(0.2, memory_mb=256)
    assert cost["cold_starts_per_million_orders"] == 1000  # 1% of 100,000 invocations
    assert cost["usd_per_million_orders"] == pytest.approx(
        1000 * 0.2 * 0.25 * 0.0000133334, rel=1e-3
    )


def test_the_latency_model_has_the_stated_median_and_tail() -> None:
    from order_guard_tools.bench.latency import LatencyModel

    sample = LatencyModel(median_ms=4, p99_ms=12).sampler()
    draws = sorted(sample() for _ in range(20_000))
    assert draws[10_000] * 1000 == pytest.approx(4, rel=0.05)
    assert draws[19_800] * 1000 == pytest.approx(12, rel=0.1)
    again = LatencyModel(median_ms=4, p99_ms=12).sampler()
    assert again() == LatencyModel(median_ms=4, p99_ms=12).sampler()()  # seeded


def test_init_figures_pair_each_round_and_take_the_median_ratio(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from order_guard_tools.bench import cold_start

    # per round the bare handler takes 0.2 s; the other 0.2 s × a ratio of that round
    ratios = iter([1.5, 1.0, 1.1, 1.2])  # the warm-up round's first, then three rounds
    seen: dict[str, list[float]] = {}

    def fake(contestant: cold_start.Contestant, environment: dict[str, str]) -> float:
        name = contestant.statement
        value = 0.2 if name == "bare" else 0.2 * next(ratios)
        seen.setdefault(name, []).append(value)
        return value

    monkeypatch.setattr(cold_start, "init_seconds", fake)
    entrants = {
        cold_start.BARE: cold_start.Contestant(Path("."), "bare"),
        "other": cold_start.Contestant(Path("."), "other"),
    }
    figures = cold_start.init_figures(entrants, {}, rounds=3)

    assert len(seen["other"]) == 4  # the warm-up round is run, then dropped
    assert figures["other"]["vs_bare"] == 1.1  # median of 1.0, 1.1, 1.2
    assert (figures["other"]["vs_bare_min"], figures["other"]["vs_bare_max"]) == (1.0, 1.2)
    assert figures[cold_start.BARE]["median_ms"] == 200.0
