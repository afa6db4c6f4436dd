"""The model check reads its constants from the application and cannot pass blind.

``make model`` runs every model and mutant; here the runner itself is checked: the
constants follow template.yaml and the ASL, and a mutant that SPIN does not catch (a
``-D`` name the model ignores, so the model runs unchanged) makes the run fail.
"""

from __future__ import annotations

import json

import pytest

from model import check
from tests.support.paths import ROOT


def test_the_constants_are_the_templates_and_the_asls() -> None:
    asl = json.loads((ROOT / "statemachine" / "orders.asl.json").read_text())
    retriers = {
        error: retrier["MaxAttempts"]
        for retrier in asl["States"]["StoreOrder"]["Retry"]
        for error in retrier["ErrorEquals"]
    }
    assert check.constants() == {
        "queue": {"MAXRECV": 5},  # template.yaml MaxReceiveCount default
        "workflow": {
            "STORE_RETRIES": retriers["TransientStoreError"],
            "AFTER_RETRIES": retriers["TransientOrderError"],
        },
    }


def test_a_mutant_spin_does_not_catch_fails_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        check,
        "RUNS",
        [
            check.Run("workflow", None, "as written"),
            check.Run("workflow", "NOT_A_MUTANT", "changes nothing"),
        ],
    )
    assert check.main([]) == 1
    out = capsys.readouterr().out
    assert "holds" in out
    assert "NOT CAUGHT" in out


def test_the_workflow_model_and_its_mutants_as_make_model_runs_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [run for run in check.RUNS if run.model == "workflow"]
    monkeypatch.setattr(check, "RUNS", runs)
    assert check.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("counterexample: assertion violated") == len(runs) - 1
