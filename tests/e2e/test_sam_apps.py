"""The local cloud runs SAM applications it was not written for: one of the shape of SAM
CLI's python3.13 Step Functions sample ("stock trader"), deployed with the stock ``sam
build && sam deploy``, its executions run and write their item, and ``sam delete``
removes it (issue 19)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcloud.account import LocalCloud
from order_guard_tools.reads import run_execution
from tests.support.order_guard import started
from tests.support.paths import FIXTURES
from tests.support.sam import deploy, outputs, sam

APP = FIXTURES / "apps" / "stock_trader"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True) as running:
        running.start_event_sources()
        yield running


def test_the_stock_trader_shape_deploys_trades_and_is_deleted(
    server: LocalCloud, tmp_path: Path
) -> None:
    project = shutil.copytree(APP, tmp_path / "stock_trader")
    built = sam(server, "build", cwd=project)
    assert built.returncode == 0, built.stdout + built.stderr

    deployed = deploy(server, "stock-trader", "--resolve-s3", cwd=project)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    found = outputs(server, "stock-trader")

    trades = {}
    for price in (20, 80):  # at most 50 buys, above sells: the Choice state
        described, _ = run_execution(
            server,
            f"trade-at-{price}",
            {"stock_price": price},
            timeout_s=60,
            state_machine_arn=found["StockTradingStateMachineArn"],
        )
        assert described["status"] == "SUCCEEDED", described
        trades[price] = json.loads(described["output"])
    table = found["TransactionTableName"]
    items = server.client("dynamodb").scan(TableName=table)["Items"]
    assert sorted((i["Type"]["S"], i["Price"]["N"]) for i in items) == [
        ("buy", "20"),
        ("sell", "80"),
    ]
    rules = server.client("events").list_rules(NamePrefix="stock-trader-")["Rules"]
    assert [(rule["ScheduleExpression"], rule["State"]) for rule in rules] == [
        ("rate(1 hour)", "DISABLED")  # the disabled Schedule event
    ]

    deleted = sam(server, "delete", "--stack-name", "stock-trader", "--no-prompts", cwd=project)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    functions = [f["FunctionName"] for f in server.client("lambda").list_functions()["Functions"]]
    assert not [name for name in functions if name.startswith("stock-trader-")]
    assert table not in server.client("dynamodb").list_tables()["TableNames"]
    assert not [
        r for r in server.client("events").list_rules()["Rules"] if "stock-trader" in r["Name"]
    ]
