"""The live view: what it shows of the account, read through the page's own routes, and
the sections a project adds to it (``ViewPart``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from localcloud.account import Extension, LocalCloud
from localcloud.server.view import ViewPart, short
from tests.support.view import get, rows, send, table_rows


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud(visibility_timeout=1)


def test_queues_mappings_tables_and_executions_are_shown(cloud: LocalCloud) -> None:
    send(cloud, {"id": "shown-order", "quantity": 2})
    cloud.drain(timeout_s=30)
    worker = cloud.function("WorkflowWorkerFunction")
    worker.invoke({"id": "shown-flow", "quantity": 1})

    html = get(cloud, "/sections")

    queues = {r.split()[0]: r.split()[1:] for r in rows(html, "queues")}
    jobs = cloud.outputs["JobsQueueUrl"].rsplit("/", 1)[-1]
    dead_letters = cloud.outputs["JobsDeadLetterQueueUrl"].rsplit("/", 1)[-1]
    assert queues[short(jobs, 32)][:2] == ["0", "0"]
    assert queues[short(dead_letters, 32)] == ["0", "0", "—"]
    assert "after 5 receives" in " ".join(queues[short(jobs, 32)])
    (mapping,) = rows(html, "mappings")
    assert mapping.endswith("10 Enabled")
    orders = table_rows(html, cloud.outputs["OrdersTableName"])
    assert {r.split()[0] for r in orders} == {"shown-order", "shown-flow"}
    (attempts,) = table_rows(html, cloud.outputs["AttemptsTableName"])
    assert attempts.split()[0] == "shown-flow"
    assert attempts.endswith(" 1")  # every attribute is shown; ``attempts`` sorts last
    newest = rows(html, "invocations")[0]
    assert re.search(r"shown-flow.* ok .*shown-flow.* [0-9.]+ ms$", newest)  # given, returned
    assert f'title="{cloud.outputs["WorkflowWorkerFunctionName"]}"' in html  # whole name on hover


def test_deleted_resources_show_as_gone_and_their_writes_stay(cloud: LocalCloud) -> None:
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
            stateMachineArn=cloud.outputs["OrdersStateMachineArn"],
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


def test_an_execution_input_of_megabytes_is_cut_in_every_refresh(cloud: LocalCloud) -> None:
    big = json.dumps({"id": "big-input", "quantity": 1, "pad": "x" * 2_000_000})
    cloud.client("stepfunctions").start_execution(
        stateMachineArn=cloud.outputs["OrdersStateMachineArn"], name="big", input=big
    )
    for path in ("/state.json", "/sections"):
        assert len(get(cloud, path)) < 100_000
