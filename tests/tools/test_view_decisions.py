"""Order Guard's write decisions in the live view and ``status``: newest first with their
items and source, kept after resources are deleted, paged, bounded whatever the history
and tables hold, and printed and shown with control characters escaped."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

from localcloud.account import LocalCloud
from localcloud.account.view import view_reader
from localcloud.server.view import create_app, short
from localcloud.state import TABLE_PAGE_ITEMS
from localcloud.tests.support import view
from localcloud.tests.support.view import answers, get, rows, unshown
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.decisions import decision_of
from order_guard_tools.report import render_status


def send(cloud: LocalCloud, *bodies: dict[str, Any]) -> None:
    """Send each body, as JSON, to Order Guard's jobs queue."""
    view.send(cloud, *bodies, output="JobsQueueUrl")


@pytest.fixture
def cloud(make_cloud: Callable[..., OrderGuardCloud]) -> OrderGuardCloud:
    return make_cloud(visibility_timeout=1)


def test_decisions_show_newest_first_with_their_word_items_and_source(
    cloud: OrderGuardCloud,
) -> None:
    send(cloud, {"id": "view-order", "quantity": 4})
    cloud.drain(timeout_s=30)
    send(cloud, {"id": "view-order", "quantity": 4})
    cloud.drain(timeout_s=30)

    html = get(cloud, "/sections")

    duplicate, accepted = rows(html, "decisions")
    assert "view-order" in duplicate
    assert "duplicate" in duplicate
    assert duplicate.count("qty 4, 1100¢") == 2  # before and after: unchanged
    assert "ConditionalCheckFailedException" in duplicate
    assert "attribute_not_exists(id)" in accepted
    assert re.search(r"accepted — qty 4, 1100¢$", accepted)
    assert "receive 1" in accepted
    assert '<span class="badge duplicate">duplicate</span>' in html  # colour and word


def test_the_decisions_stay_after_their_resources_are_deleted(cloud: OrderGuardCloud) -> None:
    send(cloud, {"id": "kept-order", "quantity": 3})
    cloud.drain(timeout_s=30)
    cloud.client("sqs").delete_queue(QueueUrl=cloud.outputs["JobsQueueUrl"])
    cloud.client("dynamodb").delete_table(TableName=cloud.outputs["OrdersTableName"])
    cloud.client("logs").delete_log_group(logGroupName=cloud.outputs["QueueWorkerLogGroupName"])

    html = get(cloud, "/sections")

    jobs = cloud.outputs["JobsQueueUrl"].rsplit("/", 1)[-1]
    (gone,) = [r for r in rows(html, "queues") if r.startswith(short(jobs, 32))]
    assert gone.endswith("gone (deleted)")
    orders = cloud.outputs["OrdersTableName"]
    assert f'{short(orders, 40)}</span> <span class="gone">gone (deleted)</span>' in html
    (decision,) = rows(html, "decisions")
    assert "kept-order" in decision
    assert "accepted" in decision


def test_long_ids_are_shortened_with_the_whole_id_on_hover(cloud: OrderGuardCloud) -> None:
    long_id = "a-very-long-order-identifier-that-would-not-fit"
    send(cloud, {"id": long_id, "quantity": 1})
    cloud.drain(timeout_s=30)

    html = get(cloud, "/sections")

    assert f'<span class="id" title="{long_id}">{short(long_id, 20)}</span>' in html
    assert short(long_id, 20).endswith("…")


def test_status_prints_the_same_tables_once(
    cloud: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    send(cloud, {"id": "status-order", "quantity": 2}, {"id": "status-order", "quantity": 5})
    cloud.drain(timeout_s=60)
    state = json.loads(get(cloud, "/state.json"))

    render_status(Console(width=200), state)

    out = capsys.readouterr().out
    orders = f"Table {cloud.outputs['OrdersTableName']}"
    for heading in ("Queues", "Event source mappings", "Write decisions", orders):
        assert heading in out
    assert out.count("conflict") == 5  # listed on each of the maxReceiveCount receives
    assert "accepted" in out


class CountingTarget:
    """A target whose DynamoDB client counts the items its reads return."""

    def __init__(self, cloud: LocalCloud) -> None:
        self.cloud = cloud
        self.items_read = 0

    @property
    def outputs(self) -> dict[str, str]:
        return self.cloud.outputs

    def settle(self, timeout_s: float) -> None:
        self.cloud.settle(timeout_s)

    def client(self, service: str) -> Any:
        client = self.cloud.client(service)
        if service != "dynamodb":
            return client
        target = self

        class Counting:
            def __getattr__(self, name: str) -> Any:
                method = getattr(client, name)
                if name not in ("scan", "query", "get_item", "batch_get_item"):
                    return method

                def counted(**kwargs: Any) -> Any:
                    response = method(**kwargs)
                    target.items_read += len(response.get("Items", [])) + ("Item" in response)
                    return response

                return counted

        return Counting()


def fill(cloud: OrderGuardCloud, orders: int, first: int = 0) -> None:
    """``orders`` stored orders with 2 KB ids, and as many write decisions in the history."""
    dynamodb = cloud.client("dynamodb")
    ids = [f"{n:06d}-" + "x" * 2041 for n in range(first, first + orders)]
    for start in range(0, len(ids), 25):
        dynamodb.batch_write_item(
            RequestItems={
                cloud.outputs["OrdersTableName"]: [
                    {
                        "PutRequest": {
                            "Item": {
                                "id": {"S": order_id},
                                "quantity": {"N": "4"},
                                "total_cents": {"N": "1100"},
                            }
                        }
                    }
                    for order_id in ids[start : start + 25]
                ]
            }
        )
    for order_id in ids:
        line = {"message": "RESULT", "decision": "accepted", "id": order_id, "quantity": 4}
        cloud.decisions.add(decision_of(line, 0.0))


def refresh(cloud: OrderGuardCloud, path: str) -> tuple[int, int]:
    """(items read from DynamoDB, bytes sent) for one request of the view."""
    target = CountingTarget(cloud)
    extension = cloud.extensions[0]
    assert extension.view is not None
    read = view_reader(target, cloud.history, "order-guard", extensions=[extension])
    response = create_app(read, [extension.view]).test_client().get(path)
    assert response.status_code == 200
    return target.items_read, len(response.get_data())


def test_a_refresh_reads_and_sends_the_same_bounded_amount_whatever_the_table_size(
    cloud: OrderGuardCloud,
) -> None:
    fill(cloud, 200)
    small = {path: refresh(cloud, path) for path in ("/sections", "/state.json")}
    fill(cloud, 1800, first=200)  # 2,000 orders of 2 KB and 2,000 decisions in all
    large = {path: refresh(cloud, path) for path in ("/sections", "/state.json")}

    for path in small:
        items_small, bytes_small = small[path]
        items_large, bytes_large = large[path]
        assert items_large == items_small <= 2 * TABLE_PAGE_ITEMS  # a page per table, at most
        assert bytes_large <= bytes_small * 1.02
    assert large["/sections"][1] < 150_000  # not the 4 MB of ids the table holds
    html = get(cloud, "/sections")
    assert "2000 in all, page 1 of 40" in html
    assert "2000 item(s); 25 shown" in html


def test_older_decisions_are_on_later_pages_newest_first(cloud: OrderGuardCloud) -> None:
    for n in range(60):
        line = {"message": "RESULT", "decision": "accepted", "id": f"order-{n:02d}", "quantity": 1}
        cloud.decisions.add(decision_of(line, float(n)))

    first = json.loads(get(cloud, "/state.json"))
    second = json.loads(get(cloud, "/state.json?decisions=2"))

    assert [d["order_id"] for d in first["decisions"]][:2] == ["order-59", "order-58"]
    assert [d["order_id"] for d in second["decisions"]] == [
        f"order-{n:02d}" for n in range(9, -1, -1)
    ]
    assert second["pages"]["decisions"] == {"page": 2, "count": 2, "total": 60}
    assert '<a href="?decisions=2">older</a>' in get(cloud, "/sections")


HOSTILE_ID = "\x1b[2J\x1b[H\rRESULT queue accepted fake\u202eredro\x9b31m\u2028"


def test_status_prints_a_stored_id_with_its_control_characters_escaped(
    cloud: OrderGuardCloud,
) -> None:
    send(cloud, {"id": HOSTILE_ID, "quantity": 2})
    cloud.drain(timeout_s=30)
    state = json.loads(get(cloud, "/state.json"))
    out = io.StringIO()

    render_status(Console(file=out, width=400, color_system=None), state)

    printed = out.getvalue()
    assert HOSTILE_ID not in printed
    for raw in ("\x1b", "\r", "\u202e", "\x9b", "\u2028"):
        assert raw not in printed
    assert "\\x1b[2J\\x1b[H\\rRESULT queue accepted fake\\u202eredro\\x9b31m\\u2028" in printed


def test_the_view_shows_a_stored_id_escaped_as_status_prints_it(cloud: OrderGuardCloud) -> None:
    """The page, the sections htmx refreshes and the JSON: no raw control or
    bidirectional character of the id anywhere (a decision, a write, an invocation, an
    item), and each of them shown as the escape ``status`` prints."""
    send(cloud, {"id": HOSTILE_ID, "quantity": 2})
    cloud.drain(timeout_s=30)

    shown = answers(cloud)

    assert sorted(shown) == ["/", "/sections", "/state.json"]
    for path, body in shown.items():
        assert unshown(body) == [], path
    escaped = "\\x1b[2J\\x1b[H\\rRESULT queue accepted fake\\u202eredro\\x9b31m\\u2028"
    for path in ("/", "/sections"):
        html = shown[path]
        (decision,) = rows(html, "decisions")
        assert "accepted" in decision
        assert f'<span class="id" title="{escaped}">' in html.split('<table id="decisions"')[1]
        assert f'data-key="{escaped}"' in html  # the write's row


def test_status_prints_a_plain_local_clouds_view_without_decisions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``make status`` against ``python -m localcloud serve``: no decisions section there."""
    with LocalCloud() as plain_cloud:
        state = json.loads(get(plain_cloud, "/state.json"))
    assert "decisions" not in state

    render_status(Console(width=200), state)

    out = capsys.readouterr().out
    assert "Queues" in out
    assert "Writes to DynamoDB" in out
    assert "Write decisions" not in out
