"""A caller's JSONPath cannot hold the server (issue 47, review round 2, finding 1): every
door (a mapping template, an HTTP API's parameter, a state machine, an EventBridge target)
evaluates it through one bounded evaluator (``localcloud.patches.jsonpath``), in the
syntax its service documents.

Before, the three doors ran ``jsonpath_ng.ext`` unbounded: ``=~`` ran Python's ``re``
holding every thread of the server (``(a|aa)+b`` doubles its time with each character),
``$.a * 400000000`` made a string of 2 GB from a 14-byte body, and a query matched as
many values as the document held. Each test is such an attack, scaled down to run in a
fraction of a second here (the regular expressions' bound is lowered to 0.1 s through its
constant; the attack took 0.8 s before, and doubles with every two characters).

One in-process account for the module, with the local cloud's patches.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.config import DefaultConfig
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from localcloud import services
from localcloud.patches import jsonpath
from localcloud.services.apigateway.http_integration import evaluate
from localcloud.services.apigateway.mapping import TemplateError, render
from localcloud.tests.support.aws import REGION

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
ROLE_ARN = "arn:aws:iam::123456789012:role/x"
BACKTRACKING = "(a|aa)+b"
"""A pattern both ``re`` and ``regex`` take exponential time on, given a run of ``a``."""
SLOW_SUBJECT = "a" * 32
"""0.8 s of ``re`` before the fix; past the lowered bound after it."""


@pytest.fixture(scope="module")
def account() -> Iterator[None]:
    services.install()
    try:
        with mock_aws(config=MOTO_CONFIG):
            yield
    finally:
        services.uninstall()


@pytest.fixture
def quick_regex_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonpath, "REGEX_SECONDS", 0.1)


def _render(template: str, body: str) -> str:
    return render(
        template,
        body=body,
        parameters={"path": {}, "querystring": {}, "header": {}},
        context={},
        stage_variables={},
    )


# --- API Gateway: $input.path and $input.json ------------------------------------------


def test_a_mapping_templates_regular_expression_filter_stops_at_its_bound(
    account: None, quick_regex_bound: None
) -> None:
    body = json.dumps([{"a": SLOW_SUBJECT}])

    with pytest.raises(TemplateError, match=r"regular expression '\(a\|aa\)\+b'.*ran past 0.1 s"):
        _render(f"$input.json('$[?(@.a =~ \"{BACKTRACKING}\")]')", body)


def test_a_mapping_templates_regular_expression_leaves_the_servers_threads_running(
    account: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's re held the GIL: no other thread of the server ran while it did."""
    monkeypatch.setattr(jsonpath, "REGEX_SECONDS", 0.3)
    body = json.dumps([{"a": SLOW_SUBJECT}])
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        rendering_from = time.monotonic()
        with contextlib.suppress(TemplateError):  # its bound: the test above
            _render(f"$input.json('$[?(@.a =~ \"{BACKTRACKING}\")]')", body)
        rendering_to = time.monotonic()
    finally:
        done.set()
        ticker.join(10)
    assert len([t for t in ticks if rendering_from < t < rendering_to]) >= 5  # ~30 in 0.3 s


def test_a_mapping_templates_jsonpath_has_no_arithmetic(account: None) -> None:
    """``$.a * 400000000`` made 2 GB; Jayway JsonPath has no arithmetic at all."""
    with pytest.raises(TemplateError, match="uses arithmetic, which Jayway JsonPath"):
        _render("$input.path('$.a * 3')", '{"a": "xxxxx"}')


def test_a_mapping_templates_jsonpath_matching_more_than_262144_values_is_refused(
    account: None,
) -> None:
    body = json.dumps([0] * (jsonpath.NODES + 1))

    with pytest.raises(TemplateError, match="more than 262,144 values"):
        _render("$input.json('$[*]')", body)


# --- API Gateway: an HTTP API's $request.body.name ------------------------------------


def _posted(body: str) -> Request:
    return Request(EnvironBuilder(method="POST", path="/", data=body).get_environ())


def test_an_http_api_parameter_has_no_recursive_descent(account: None) -> None:
    """``$request.body..a`` walked a body nested as deep as it liked, and printed every
    match with all it held (HTTP APIs have no recursive descent: it selects nothing)."""
    request = _posted(json.dumps({"a": {"a": {"a": "x"}}}))

    assert evaluate("$request.body..a", request, {}) is None


def test_an_http_api_parameter_reads_the_first_100_kb_of_the_body(account: None) -> None:
    """API Gateway cuts the body at 100 KB before it applies a JSON path: past it, the
    text is no longer JSON and the path selects nothing."""
    request = _posted(json.dumps({"pad": "x" * 100 * 1024, "id": "i-1"}))

    assert (evaluate("$request.body.id", request, {}), evaluate("$request.body", request, {})) == (
        None,
        request.get_data(as_text=True),
    )


# --- Step Functions: a state's paths ---------------------------------------------------


def _ended(sfn: Any, execution_arn: str, guard_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + guard_s  # a hang guard, far above the run's time
    while (described := sfn.describe_execution(executionArn=execution_arn))["status"] == (
        "RUNNING"
    ):
        assert time.monotonic() < deadline, f"{execution_arn} still RUNNING"
        time.sleep(0.02)
    result: dict[str, Any] = described
    return result


def test_a_state_machines_regular_expression_filter_fails_the_execution_at_its_bound(
    account: None, quick_regex_bound: None
) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    path = f"$.items[?(@.a =~ '{BACKTRACKING}')]"
    definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "InputPath": path, "End": True}}}
    machine = sfn.create_state_machine(
        name="regex-filter", definition=json.dumps(definition), roleArn=ROLE_ARN
    )["stateMachineArn"]
    items = [{"a": "ab"}, {"a": SLOW_SUBJECT}]  # the first matches, at once

    execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"items": items}))

    ended = _ended(sfn, execution["executionArn"])
    assert (ended["status"], ended["error"]) == ("FAILED", "States.Runtime")
    assert "regular expression '(a|aa)+b'" in ended["cause"]
    assert "ran past 0.1 s" in ended["cause"]


# --- EventBridge: a target's InputPath -------------------------------------------------


def test_an_eventbridge_input_path_with_a_filter_is_refused_and_dead_lettered(
    account: None,
) -> None:
    """EventBridge's JSON path has no filters: the target gets nothing, its dead-letter
    queue the event and why."""
    sqs = boto3.client("sqs", region_name=REGION)
    events = boto3.client("events", region_name=REGION)
    target = sqs.create_queue(QueueName="filtered-target")["QueueUrl"]
    dead = sqs.create_queue(QueueName="filtered-dead-letters")["QueueUrl"]

    def arn(url: str) -> str:
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        return str(attributes["Attributes"]["QueueArn"])

    events.put_rule(Name="filtered", EventPattern=json.dumps({"source": ["jobs"]}))
    events.put_targets(
        Rule="filtered",
        Targets=[
            {
                "Id": "queue",
                "Arn": arn(target),
                "InputPath": f"$.detail.items[?(@.a =~ '{BACKTRACKING}')]",
                "DeadLetterConfig": {"Arn": arn(dead)},
            }
        ],
    )
    detail = {"items": [{"a": "ab"}, {"a": SLOW_SUBJECT}]}

    events.put_events(Entries=[{"Source": "jobs", "DetailType": "t", "Detail": json.dumps(detail)}])

    letters = sqs.receive_message(
        QueueUrl=dead, MessageAttributeNames=["All"], WaitTimeSeconds=10
    ).get("Messages", [])
    assert len(letters) == 1
    why = letters[0]["MessageAttributes"]["ERROR_MESSAGE"]["StringValue"]
    assert "uses a filter [?(...)], which EventBridge's JSON path" in why
    assert "Messages" not in sqs.receive_message(QueueUrl=target)


def test_motos_own_input_transformer_evaluates_eventbridges_syntax_only(
    account: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log group target is moto's own delivery: its ``InputPathsMap`` ran any
    jsonpath_ng expression, ``=~`` in Python's re included, inside PutEvents."""
    logs = boto3.client("logs", region_name=REGION)
    events = boto3.client("events", region_name=REGION)
    logs.create_log_group(logGroupName="/transformed")
    group_arn = f"arn:aws:logs:{REGION}:123456789012:log-group:/transformed"
    events.put_rule(Name="to-logs", EventPattern=json.dumps({"source": ["logged"]}))
    events.put_targets(
        Rule="to-logs",
        Targets=[
            {
                "Id": "group",
                "Arn": group_arn,
                "InputTransformer": {
                    "InputPathsMap": {"a": f"$.detail.items[?(@.a =~ '{BACKTRACKING}')]"},
                    "InputTemplate": '{"a": <a>}',
                },
            }
        ],
    )
    detail = {"items": [{"a": "ab"}, {"a": SLOW_SUBJECT}]}

    events.put_events(
        Entries=[{"Source": "logged", "DetailType": "t", "Detail": json.dumps(detail)}]
    )

    streams = logs.describe_log_streams(logGroupName="/transformed")["logStreams"]
    assert streams == []
    assert "uses a filter [?(...)], which EventBridge's JSON path" in capsys.readouterr().out
