"""The labs' AWS View in headless Chromium (Debian's package, driven by Playwright): what a
learner sees beside the terminal during lab Q05 and after its cleanup, the page open from
the start. Screenshots are kept in test-artifacts/ (lab-q05-*.png). Lab EV05's view after
its cleanup is tested in ``test_labs.py``, on the machine its replay ran on."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, expect

from localcloud.account import LocalCloud
from order_guard_tools.labs import Q05, Lab, provision
from tests.e2e.test_labs import FIXTURES, lab_cloud_for_the_suite
from tests.support.pages import screenshot


@contextmanager
def lab_page(browser: Browser, lab: Lab) -> Iterator[tuple[LocalCloud, Page]]:
    cloud = lab_cloud_for_the_suite(lab)
    with cloud:
        provision(lab, cloud.client)
        cloud.remember_resources()
        cloud.start_event_sources()
        cloud.watch()
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        assert cloud.view_url is not None
        page.goto(cloud.view_url)
        try:
            yield cloud, page
        finally:
            page.close()


def protected_package() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(FIXTURES / "q05_protected.py", "app.py")
    return buffer.getvalue()


def test_the_q05_view_during_the_lab_and_after_its_cleanup(browser: Browser) -> None:
    with lab_page(browser, Q05) as (cloud, page):
        sqs, functions = cloud.client("sqs"), cloud.client("lambda")
        url = sqs.create_queue(QueueName="labex-q05-jobs", Attributes={"VisibilityTimeout": "30"})[
            "QueueUrl"
        ]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        uuid = functions.create_event_source_mapping(
            FunctionName=Q05.function, EventSourceArn=arn, BatchSize=1
        )["UUID"]
        functions.update_function_code(FunctionName=Q05.function, ZipFile=protected_package())
        for body in ({"id": "dedup-order", "quantity": 4},) * 3 + (
            {"id": "other-order", "quantity": 1},
        ):
            sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))

        expect(page.locator("#queues")).to_contain_text("labex-q05-jobs")
        mapping = page.locator("#mappings tr", has_text="labex-q05-worker")
        expect(mapping.locator("td").nth(2)).to_have_text("1")
        expect(mapping.locator("td").nth(3)).to_have_text("Enabled")
        refused = page.locator('tr.write[data-outcome="ConditionalCheckFailedException"]')
        expect(refused).to_have_count(2, timeout=20_000)
        accepted = page.locator('tr.write[data-key="dedup-order"][data-outcome="Accepted"]')
        expect(accepted).to_have_count(1)
        expect(accepted.locator("td").nth(3)).to_contain_text("attribute_not_exists(id)")
        expect(accepted.locator("td").nth(5)).to_have_text("none")  # no item before …
        expect(accepted.locator("td").nth(6)).to_contain_text('"total_cents": 1100')  # … then it
        for row in refused.all():  # the item before and after a refused repeat: unchanged
            expect(row.locator("td").nth(5)).to_contain_text('"quantity": 4')
            expect(row.locator("td").nth(6)).to_contain_text('"quantity": 4')
            expect(row.locator("td").nth(2)).to_contain_text("labex-q05-worker")
        expect(page.locator("#invocations")).to_contain_text('"duplicate": true')
        assert screenshot(page, "lab-q05-during.png").stat().st_size > 10_000

        functions.delete_event_source_mapping(UUID=uuid)
        sqs.delete_queue(QueueUrl=url)
        for key in ("dedup-order", "other-order"):
            cloud.client("dynamodb").delete_item(
                TableName="labex-q05-orders", Key={"id": {"S": key}}
            )

        expect(page.locator("#queues")).to_contain_text("gone (deleted)")
        expect(page.locator("#mappings")).to_contain_text("none")
        expect(refused).to_have_count(2)  # the history stays
        # two orders, two deletes; the reference item the machine was given is shown apart
        expect(page.locator('tr.write[data-outcome="Accepted"]')).to_have_count(4)
        expect(page.locator('tr.tagged-write[data-tag="setup"]')).to_have_count(1)
        assert screenshot(page, "lab-q05-after-cleanup.png").stat().st_size > 10_000
