"""The live view in a real browser: headless Chromium (Debian's package) driven by
Playwright, while the seed scenarios run against the local server.

`make test` installs chromium when it is missing (as root) or says what to install;
these tests never skip: without a browser they fail, saying so. Screenshots of the page
after each scenario are kept in test-artifacts/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from localcloud.account import LocalCloud
from order_guard_tools.project import ROOT
from order_guard_tools.reads import run_execution
from tests.support.order_guard import started
from tests.support.pages import screenshot


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True, visibility_timeout=1) as running:
        yield running


@pytest.fixture(scope="module")
def page(browser: Browser, server: LocalCloud) -> Iterator[Page]:
    opened = browser.new_page(viewport={"width": 1440, "height": 1000})
    assert server.view_url is not None
    opened.goto(server.view_url)
    yield opened
    opened.close()


def deliver(server: LocalCloud, *bodies: dict[str, object]) -> None:
    for body in bodies:
        server.client("sqs").send_message(
            QueueUrl=server.outputs["JobsQueueUrl"], MessageBody=json.dumps(body)
        )
    server.drain(timeout_s=60)


def test_the_seed_queue_scenario_as_a_learner_sees_it(server: LocalCloud, page: Page) -> None:
    first = {"id": "dedup-order", "quantity": 4}
    deliver(server, first)
    deliver(server, first, first)  # two copies, one batch
    deliver(server, {"id": "other-order", "quantity": 1})
    deliver(server, {"id": "dedup-order", "quantity": 5})  # the conflicting copy

    table = page.locator(f'table[data-table="{server.outputs["OrdersTableName"]}"]')
    orders = table.locator("tr")
    expect(orders).to_have_count(3)  # the header and two orders
    headers = table.locator("th").all_inner_texts()
    quantity_at, total_at = headers.index("quantity"), headers.index("total_cents")
    for row, (order_id, quantity, total) in zip(
        orders.all()[1:], [("dedup-order", "4", "1100"), ("other-order", "1", "350")], strict=True
    ):
        expect(row.locator("td").nth(0)).to_have_text(order_id)
        expect(row.locator("td").nth(quantity_at)).to_have_text(quantity)
        expect(row.locator("td").nth(total_at)).to_have_text(total)
    duplicates = page.locator('tr.decision[data-decision="duplicate"]')
    expect(duplicates).to_have_count(2)
    for row in duplicates.all():
        cells = row.locator("td")
        expect(cells.nth(5)).to_have_text("qty 4, 1100¢")  # item before …
        expect(cells.nth(6)).to_have_text("qty 4, 1100¢")  # … and after: unchanged
        expect(cells.nth(4)).to_contain_text("duplicate")  # the word, not only the colour
    expect(page.locator('tr.decision[data-decision="conflict"]')).to_have_count(5)
    dead_letters = page.locator("#queues tr", has_text="DeadLetterQu")
    expect(dead_letters.locator("td").nth(1)).to_have_text("1")
    assert screenshot(page, "live-view-queue-scenario.png").stat().st_size > 10_000


def test_the_seed_workflow_as_a_learner_sees_it(server: LocalCloud, page: Page) -> None:
    execution_input = json.loads((ROOT / "events" / "execution-after-write-order.json").read_text())
    described, _ = run_execution(server, "after-write-order", execution_input)
    assert described["status"] == "SUCCEEDED"

    row = page.locator('tr.execution[data-name="after-write-order"]')
    expect(row).to_contain_text("SUCCEEDED")
    expect(row).to_contain_text("StoreOrder failed: TransientOrderError")
    expect(row).to_contain_text("StoreOrder succeeded")
    expect(row).to_contain_text("ReadSummary succeeded")
    expect(row).to_contain_text('"total_cents": 1100')
    expect(page.locator('tr.decision[data-decision="accepted"]').first).to_contain_text(
        "protected-order"
    )
    assert screenshot(page, "live-view-workflow.png").stat().st_size > 10_000
