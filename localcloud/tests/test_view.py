"""The live view: what it shows of the account, read through the page's own routes, and
the sections a project adds to it (``ViewPart``)."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localcloud.account import Extension, LocalCloud
from localcloud.server.view import ViewPart, short
from localcloud.state import TABLE_PAGE_ITEMS
from localcloud.tests.support.view import answers, get, rows, send, table_rows, unshown


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud(visibility_timeout=1)


def test_queues_mappings_tables_and_executions_are_shown(cloud: LocalCloud) -> None:
    send(cloud, {"id": "shown-order", "quantity": 2})
    cloud.drain(timeout_s=30)
    worker = cloud.function("TaskFunction")
    worker.invoke({"id": "shown-flow", "quantity": 1})

    html = get(cloud, "/sections")

    queues = {r.split()[0]: r.split()[1:] for r in rows(html, "queues")}
    jobs = cloud.outputs["TaskQueueUrl"].rsplit("/", 1)[-1]
    dead_letters = cloud.outputs["TaskDeadLetterQueueUrl"].rsplit("/", 1)[-1]
    assert queues[short(jobs, 32)][:2] == ["0", "0"]
    assert queues[short(dead_letters, 32)] == ["0", "0", "—"]
    assert "after 5 receives" in " ".join(queues[short(jobs, 32)])
    (mapping,) = rows(html, "mappings")
    assert mapping.endswith("10 Enabled —")  # a queue's mapping discards nothing
    orders = table_rows(html, cloud.outputs["ItemsTableName"])
    assert {r.split()[0] for r in orders} == {"shown-order", "shown-flow"}
    (attempts,) = table_rows(html, cloud.outputs["TriesTableName"])
    assert attempts.split()[0] == "shown-flow"
    assert attempts.endswith(" 1")  # every attribute is shown; ``tries`` sorts last
    newest = rows(html, "invocations")[0]
    assert re.search(r"shown-flow.* ok .*shown-flow.* [0-9.]+ ms$", newest)  # given, returned
    assert f'title="{cloud.outputs["TaskFunctionName"]}"' in html  # whole name on hover


def test_deleted_resources_show_as_gone_and_their_writes_stay(cloud: LocalCloud) -> None:
    send(cloud, {"id": "kept-order", "quantity": 3})
    cloud.drain(timeout_s=30)
    cloud.client("sqs").delete_queue(QueueUrl=cloud.outputs["TaskQueueUrl"])
    cloud.client("dynamodb").delete_table(TableName=cloud.outputs["ItemsTableName"])
    cloud.client("logs").delete_log_group(logGroupName=cloud.outputs["ConsumerLogGroupName"])

    html = get(cloud, "/sections")

    jobs = cloud.outputs["TaskQueueUrl"].rsplit("/", 1)[-1]
    (gone,) = [r for r in rows(html, "queues") if r.startswith(short(jobs, 32))]
    assert gone.endswith("gone (deleted)")
    orders = cloud.outputs["ItemsTableName"]
    assert f'{short(orders, 40)}</span> <span class="gone">gone (deleted)</span>' in html
    (write,) = [r for r in rows(html, "writes") if "kept-order" in r]
    assert "PutItem" in write
    assert "Accepted" in write


def test_the_page_loads_htmx_and_refreshes_its_sections_every_second(cloud: LocalCloud) -> None:
    html = get(cloud, "/")
    assert 'hx-get="/sections" hx-trigger="every 1s"' in html
    assert '<script src="/htmx.min.js"></script>' in html
    client = cloud.view_app().test_client()
    assert client.get("/htmx.min.js").status_code == 200


def test_a_projects_section_is_shown_with_its_data_and_filter_escaped(
    make_cloud: Callable[..., LocalCloud], tmp_path: Path
) -> None:
    """The extension interface: a section from a folder of the project's, the data it
    reads (merged over the account's, its ``pages`` beside the account's), and a filter
    of its own; what it shows goes through Jinja's autoescaping."""
    (tmp_path / "notes.html").write_text(
        '<h2>Notes</h2><p id="note">{{ note | shout }}</p><p id="pages">{{ pages | list }}</p>'
    )
    extension = Extension(
        view=ViewPart(tmp_path, ("notes.html",), {"shout": lambda text: f"{text}!"}),
        read=lambda args: {"note": f"<b>{args.get('n', 'x')}</b>", "pages": {"notes": {}}},
    )
    cloud = make_cloud(template=None, extensions=[extension])

    html = get(cloud, "/sections?n=hi")

    assert '<p id="note">&lt;b&gt;hi&lt;/b&gt;!</p>' in html
    assert sorted(json.loads(get(cloud, "/state.json"))["pages"]) == [
        "invocations",
        "notes",
        "writes",
    ]
    assert html.index("Notes") < html.index("Writes to DynamoDB")


@pytest.mark.parametrize("name", ["notes.html", "notes.j2", "notes"])
def test_a_section_is_escaped_whatever_its_file_is_named(
    make_cloud: Callable[..., LocalCloud], tmp_path: Path, name: str
) -> None:
    """Flask escapes only templates named .html and a few more; a project's section may
    be named otherwise, and what it shows comes from whoever wrote it (a key, a body)."""
    (tmp_path / name).write_text('<p id="shown">{{ note }}</p>')
    extension = Extension(
        view=ViewPart(tmp_path, (name,)), read=lambda args: {"note": "<script>alert(1)</script>"}
    )
    cloud = make_cloud(template=None, extensions=[extension])

    html = get(cloud, "/sections")

    assert '<p id="shown">&lt;script&gt;alert(1)&lt;/script&gt;</p>' in html
    assert "<script>alert(1)" not in html


HOSTILE = "a\u202eb\x1bc\x07d\x9be\x7ff\u2066g\u200fh\u061ci\u200bj\u2028k\nl"
"""A string whoever writes a name, an item or a payload may give: a right-to-left
override, ESC, BEL, a C1 CSI, DEL, a left-to-right isolate, a right-to-left mark, the
Arabic letter mark, a zero-width space, a line separator and a line feed."""
HOSTILE_SHOWN = "a\\u202eb\\x1bc\\x07d\\x9be\\x7ff\\u2066g\\u200fh\\u061ci\\u200bj\\u2028k\\nl"
""":data:`HOSTILE` as ``status`` prints it, each of those characters an escape."""


@pytest.mark.slow  # seconds: the quick loop leaves it to make test
def test_control_and_bidi_characters_reach_no_answer_of_the_view_raw(
    make_cloud: Callable[..., LocalCloud], tmp_path: Path
) -> None:
    """Names, keys, attribute names and values, payloads, execution inputs and outputs,
    a project's section (its values marked safe included) and the page's own query
    arguments: whatever the account holds reaches the page, its fragments and its JSON
    with no control or bidirectional character left raw, and shows each as the escape
    ``status`` prints."""
    (tmp_path / "notes.html").write_text(
        '<p id="note" title="{{ note }}" data-note="{{ note }}">{{ note }}</p>'
        '<p id="marked">{{ note | e }}</p>'
    )
    extension = Extension(
        view=ViewPart(tmp_path, ("notes.html",)), read=lambda args: {"note": HOSTILE}
    )
    cloud = make_cloud(visibility_timeout=1, extensions=[extension])
    dynamodb = cloud.client("dynamodb")
    orders = cloud.outputs["ItemsTableName"]
    dynamodb.put_item(TableName=orders, Item={"id": {"S": "plain"}, HOSTILE: {"S": HOSTILE}})
    # moto takes the name (AWS would refuse it): the view shows whatever the account holds.
    dynamodb.create_table(
        TableName=f"t{HOSTILE}",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    cloud.function("TaskFunction").invoke({"id": HOSTILE, "quantity": 1})
    cloud.client("stepfunctions").start_execution(
        stateMachineArn=cloud.outputs["TaskStateMachineArn"],
        name="hostile",
        input=json.dumps({"id": f"flow{HOSTILE}", "quantity": 1}, ensure_ascii=False),
    )
    send(cloud, {"id": f"queued{HOSTILE}", "quantity": 2})
    cloud.drain(timeout_s=30)

    page = "/?" + urllib.parse.urlencode({"asked": HOSTILE})
    shown = answers(cloud, page)

    (fragment,) = set(shown) - {page, "/state.json"}
    assert fragment.startswith("/sections?asked=")  # the one htmx refreshes, as it asks
    for path, body in shown.items():
        assert unshown(body) == [], path
    # Markup keeps the line breaks it is laid out with (HTML shows one as a space).
    marked = HOSTILE_SHOWN.replace("\\n", "\n")
    for path in (page, fragment):
        html = shown[path]
        assert f'<p id="note" title="{HOSTILE_SHOWN}" data-note="{HOSTILE_SHOWN}">' in html
        assert f'<p id="marked">{marked}</p>' in html
        for name in ("", "t", "queued"):  # an item, a table, an order sent through the queue
            assert f'title="{name}{HOSTILE_SHOWN}"' in html, name
    state = json.loads(shown["/state.json"])  # JSON escapes them its own way, exactly
    assert f"t{HOSTILE}" in {table["name"] for table in state["tables"]}


def test_a_section_may_not_take_a_name_the_view_has(tmp_path: Path) -> None:
    from localcloud.server.view import create_app

    with pytest.raises(ValueError, match="already has a filter named short"):
        create_app(lambda args: {}, [ViewPart(tmp_path, (), {"short": str})])
    with pytest.raises(ValueError, match="already has a template named sections.html"):
        create_app(lambda args: {}, [ViewPart(tmp_path, ("sections.html",))])


def test_executions_started_without_a_name_get_one_and_the_view_stays_up(
    cloud: LocalCloud,
) -> None:
    """``aws stepfunctions start-execution`` without ``--name`` is the usual case: moto
    named such an execution ``None``, a second one collided, and the view answered 500."""
    sfn = cloud.client("stepfunctions")
    arns = [
        sfn.start_execution(
            stateMachineArn=cloud.outputs["TaskStateMachineArn"],
            input=json.dumps({"id": f"unnamed-{n}", "quantity": 1}),
        )["executionArn"]
        for n in range(2)
    ]
    names = [arn.rsplit(":", 1)[-1] for arn in arns]
    assert len(set(names)) == 2
    assert all(len(name) == 36 and name.count("-") == 4 for name in names)  # UUIDs, as AWS
    state = json.loads(get(cloud, "/state.json"))
    (machine,) = state["state_machines"]
    assert {e["name"] for e in machine["executions"]} >= set(names)


def test_an_execution_input_of_256_kb_is_cut_in_every_refresh(cloud: LocalCloud) -> None:
    big = json.dumps({"id": "big-input", "quantity": 1, "pad": "x" * 262_000})  # the most AWS takes
    cloud.client("stepfunctions").start_execution(
        stateMachineArn=cloud.outputs["TaskStateMachineArn"], name="big", input=big
    )
    for path in ("/state.json", "/sections"):
        assert len(get(cloud, path)) < 100_000


def test_a_table_is_paged_by_its_own_key_and_a_hand_typed_key_starts_at_page_one(
    make_cloud: Callable[..., LocalCloud],
) -> None:
    """One page per refresh (``TABLE_PAGE_ITEMS``), whatever the table's key: a key of one
    string is given as its value, any other as the JSON of ``LastEvaluatedKey``; a page
    key that is not one of the table's (edited, or of the wrong types) is the first page,
    never an error."""
    cloud = make_cloud(template=None)
    dynamodb = cloud.client("dynamodb")
    dynamodb.create_table(
        TableName="events",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "n", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for n in range(TABLE_PAGE_ITEMS + 5):
        dynamodb.put_item(TableName="events", Item={"pk": {"S": "p"}, "n": {"N": str(n)}})

    def page(after: str | None = None) -> dict[str, Any]:
        query = "" if after is None else "?" + urllib.parse.urlencode({"after.events": after})
        (table,) = json.loads(get(cloud, f"/state.json{query}"))["tables"]
        return dict(table)

    first = page()
    assert len(first["items"]) == TABLE_PAGE_ITEMS
    assert first["columns"][:2] == ["pk", "n"]  # the key first
    assert json.loads(first["next"]) == {"pk": {"S": "p"}, "n": {"N": "24"}}
    second = page(first["next"])
    assert [item["n"] for item in second["items"]] == list(range(TABLE_PAGE_ITEMS, 30))
    assert second["next"] is None
    for edited in (
        "not json",
        '{"pk": {"S": "p"}}',
        '{"pk": {"S": "p"}, "n": {"S": "24"}}',
        '{"pk": {"S": "p"}, "n": {"N": "abc"}}',
        '{"pk": "p", "n": 24}',
        "[]",
    ):
        assert page(edited)["items"] == first["items"], edited


def test_writes_of_a_tagged_client_are_shown_apart_from_the_code_under_test(
    cloud: LocalCloud,
) -> None:
    table = cloud.outputs["ItemsTableName"]
    cloud.client("dynamodb", tag="setup").put_item(
        TableName=table, Item={"id": {"S": "seeded"}, "quantity": {"N": "1"}}
    )
    cloud.client("dynamodb").put_item(
        TableName=table, Item={"id": {"S": "by-hand"}, "quantity": {"N": "2"}}
    )

    state = cloud.view_data({})
    html = get(cloud, "/sections")

    assert [w["key"] for w in state["writes"]] == ["by-hand"]  # untagged: the CLI, a script
    assert [(w["key"], w["tag"]) for w in state["tagged_writes"]] == [("seeded", "setup")]
    (by_hand,) = rows(html, "writes")
    assert "by-hand" in by_hand
    (seeded,) = rows(html, "tagged-writes")
    assert "seeded" in seeded
    assert "setup" in seeded
