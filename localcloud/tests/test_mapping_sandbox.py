"""A mapping template reaches only what API Gateway gives it, and cannot spend the server
(issue 47, finding 2).

airspeed resolves ``$x.name`` with Python's ``getattr``: before the sandbox, each gadget
below ran code in the server process (here: made a directory), outside every execution
environment; and a loop, a doubling, a regular expression or Python's own operators
held the server as long as they liked. Each test is an attack: it failed on the code
before the sandbox.

One local cloud for the module (an empty account, served): the sandbox is installed while
a local cloud runs, and one test creates an API through the public API, as any function
with credentials could.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcloud.account import LocalCloud
from localcloud.services.apigateway import mapping, velocity
from localcloud.services.apigateway.mapping import TemplateError, render
from localcloud.tests.support.cloud import started

MARKER = "{marker}"
"""Where a gadget's template names the directory it would make."""

GADGETS = {
    "the class of $input": (
        "#set($b = $input.__class__.__init__.__globals__.__builtins__)"
        "#set($os = $b.__import__('os'))$os.mkdir('{marker}')"
    ),
    "the globals of a $util function": (
        "#set($g = $util.escapeJavaScript.__globals__)$g.airspeed.operators.os.mkdir('{marker}')"
    ),
    "a method of a map ($context)": (
        "#set($g = $context.keySet.__globals__)$g.airspeed.operators.os.mkdir('{marker}')"
    ),
    "the subclasses of object, from a string literal": (
        "#set($s = 'x')#foreach($c in $s.__class__.__mro__[1].__subclasses__())"
        "#if($c.__name__ == '_wrap_close')$c.__init__.__globals__.mkdir('{marker}')#end#end"
    ),
    "a macro's argument": (
        "#macro(run $o)$o.__init__.__globals__.airspeed.operators.os.mkdir('{marker}')#end"
        "#run($input)"
    ),
    "a #define": (
        "#define($run)$util.escapeJavaScript.__globals__.airspeed.operators.os.mkdir("
        "'{marker}')#end$run"
    ),
}


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=None, server=True, region="us-east-1") as running:
        yield running


def _render(template: str, body: str = "{}") -> str:
    return render(
        template,
        body=body,
        parameters={"path": {}, "querystring": {}, "header": {}},
        context={"requestId": "r-1"},
        stage_variables={},
    )


@pytest.mark.parametrize("gadget", GADGETS.values(), ids=GADGETS.keys())
def test_a_gadget_reaching_python_runs_nothing_and_renders_null(
    cloud: LocalCloud, tmp_path: Path, gadget: str
) -> None:
    marker = tmp_path / "ran"

    rendered = _render(gadget.replace(MARKER, str(marker)))

    assert not marker.exists()
    assert rendered == ""  # an unknown member is null on API Gateway, printed as nothing


def test_evaluate_of_a_request_body_is_sandboxed_alike(cloud: LocalCloud, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    body = GADGETS["the globals of a $util function"].replace(MARKER, str(marker))

    rendered = _render("#evaluate($input.body)", body)

    assert (marker.exists(), rendered) == (False, "")


def test_string_formatting_reaches_no_attribute(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCALCLOUD_SANDBOX_PROBE", "server-secret")
    leak = "{0.__init__.__globals__[airspeed].operators.os.environ[LOCALCLOUD_SANDBOX_PROBE]}"

    rendered = _render(f"#set($f = '{leak}')[$f.format($input)]")

    assert rendered == "[]"


def test_include_and_parse_read_no_file_of_the_server(cloud: LocalCloud, tmp_path: Path) -> None:
    """Not an attack that succeeded before (airspeed had no loader): kept as a guard."""
    secret = tmp_path / "secret.txt"
    secret.write_text("server-secret")
    for directive in ("include", "parse"):
        with pytest.raises(TemplateError, match="reads no file"):
            _render(f"#{directive}('{secret}')")


def test_a_gadget_in_an_api_made_through_the_api_runs_nothing(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    """As the finding did it: an API created with the API Gateway API, called unsigned."""
    marker = tmp_path / "ran"
    queue = cloud.client("sqs").create_queue(QueueName="sandbox-intake")["QueueUrl"]
    apigateway = cloud.client("apigateway")
    api = apigateway.create_rest_api(name="gadget")["id"]
    root = apigateway.get_resources(restApiId=api)["items"][0]["id"]
    method = {"restApiId": api, "resourceId": root, "httpMethod": "POST"}
    apigateway.put_method(**method, authorizationType="NONE")
    gadget = GADGETS["the globals of a $util function"].replace(MARKER, str(marker))
    apigateway.put_integration(
        **method,
        type="AWS",
        integrationHttpMethod="POST",
        uri="arn:aws:apigateway:us-east-1:sqs:path/123456789012/sandbox-intake",
        requestParameters={
            "integration.request.header.Content-Type": "'application/x-www-form-urlencoded'"
        },
        requestTemplates={"application/json": f"{gadget}Action=SendMessage&MessageBody=sent"},
    )
    apigateway.put_integration_response(**method, statusCode="200", selectionPattern="")
    apigateway.create_deployment(restApiId=api, stageName="prod")
    request = urllib.request.Request(
        f"{cloud.endpoint_url}/restapis/{api}/prod/_user_request_/",
        data=b"{}",
        method="POST",
        headers={"Content-Type": "application/json"},
    )

    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
        status = answer.status

    assert (status, marker.exists()) == (200, False)
    (message,) = cloud.client("sqs").receive_message(QueueUrl=queue)["Messages"]
    assert message["Body"] == "sent"  # the rest of the template rendered as on AWS


def test_a_maps_entries_are_data_whatever_their_names(cloud: LocalCloud) -> None:
    """DynamoDB's errors carry ``__type``: a map's entry, unlike an object's attribute."""
    body = json.dumps({"__type": "ConditionalCheckFailedException", "_id": "i-1"})

    assert _render("$input.path('$').__type $input.path('$')._id", body) == (
        "ConditionalCheckFailedException i-1"
    )


def test_javas_string_methods_as_templates_call_them(cloud: LocalCloud) -> None:
    template = (
        "#set($s = ' Order-42 ')$s.trim().toLowerCase()|$s.replaceAll('(\\d+)', '#$1')|"
        "$s.indexOf('x')|$s.split('-').size()|$s.length()"
    )

    assert _render(template) == "order-42| Order-#42 |-1|2|10"


def test_a_foreach_stops_after_1000_iterations_as_on_api_gateway(cloud: LocalCloud) -> None:
    assert _render("#set($c = 0)#foreach($i in [1..5000])#set($c = $c + 1)#end$c") == "1000"


def test_a_foreach_over_a_string_is_no_loop_as_in_velocity(cloud: LocalCloud) -> None:
    """Velocity iterates arrays, collections and maps; a string it skips."""
    assert _render("#set($s = 'abc')[#foreach($c in $s)$c,#end]") == "[]"


def test_a_foreach_over_a_map_walks_its_values_as_in_velocity(cloud: LocalCloud) -> None:
    """Velocity's UberspectImpl iterates a map's values (templates walk ``keySet()``)."""
    body = json.dumps({"first": 1, "second": 2})

    assert _render("#foreach($v in $input.path('$'))$v;#end", body) == "1;2;"


def test_nested_loops_stop_at_the_step_bound(cloud: LocalCloud) -> None:
    with pytest.raises(TemplateError, match="250,000 steps"):
        _render("#foreach($i in [1..1000])#foreach($j in [1..1000])#end#end")


@pytest.mark.parametrize(
    ("depth", "bound"), [(40, "nested more than 20 deep"), (19, "250,000 steps")]
)
def test_a_macro_calling_itself_twice_is_bounded(cloud: LocalCloud, depth: int, bound: str) -> None:
    """2**depth calls: the call depth stops the deep one, the step bound the other."""
    with pytest.raises(TemplateError, match=bound):
        _render(f"#macro(f $n $m)#if($n > 0)#set($m = $n - 1)#f($m 0)#f($m 0)#end#end#f({depth} 0)")


def test_text_made_by_doubling_a_string_is_bounded(cloud: LocalCloud) -> None:
    with pytest.raises(TemplateError, match="20,971,520 characters"):
        _render("#set($s = 'aaaaaaaaaa')#foreach($i in [1..21])#set($s = \"$s$s\")#end$s")


@pytest.mark.parametrize(
    "expression", ["'a' * 20000000", "'%20000000d' % 1"], ids=["repetition", "formatting"]
)
def test_pythons_string_operators_make_nothing(cloud: LocalCloud, expression: str) -> None:
    """Velocity's ``*`` and ``%`` are arithmetic: on a string they are null."""
    assert _render(f"#set($x = {expression})[$x]") == "[]"


def test_integers_stay_within_javas_long(cloud: LocalCloud) -> None:
    with pytest.raises(TemplateError, match="long"):
        _render("#set($x = 2)#foreach($i in [1..30])#set($x = $x * $x)#end$x")


def test_a_regular_expression_cannot_take_exponential_time(cloud: LocalCloud) -> None:
    template = "#set($s = '" + "a" * 40 + "!')$s.matches('(a+)+$')"
    assert _render(template) == "false"


BACKTRACKING = "#set($s = '" + "a" * 60 + "')$s.matches('(a|aa)+b')"
"""A call that takes regex exponential time: it runs until its timeout."""


def test_a_regular_expression_call_stops_at_its_own_bound_not_the_renderings_deadline(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call got all the rendering's 29 s, and regex's timeout overshoots under load
    (46.7 s were seen): a call is capped (lowered to 0.1 s here), the deadline checked
    after it."""
    monkeypatch.setattr(velocity, "REGEX_SECONDS", 0.1)

    with pytest.raises(TemplateError, match=r"ran past 0.1 s, the local cloud's bound on one"):
        _render(BACKTRACKING)


def test_copies_of_the_body_are_bounded(cloud: LocalCloud) -> None:
    body = json.dumps(list(range(100_000)))
    template = "#set($kept = [])#foreach($i in [1..1000])$kept.add($input.path('$'))#end"
    with pytest.raises(TemplateError, match="1,000,000 values"):
        _render(template, body)


def test_a_list_a_method_makes_is_counted_as_it_is_made(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 9 MB body split into characters 1,000 times reached 2.2 GB: the parts are counted
    as they are made, and a split past the bound stops (1,000,000 values, lowered to
    10,000 here: a million parts take regex a second with a timeout)."""
    monkeypatch.setattr(velocity, "VALUES", 10_000)

    with pytest.raises(TemplateError, match="more than 10,000 values"):
        _render("$input.body.split('').size()", "x" * 10_001)


def test_the_json_of_many_matches_stops_at_the_text_bound_as_it_is_written(
    cloud: LocalCloud,
) -> None:
    """``$input.json('$..*')`` of a body nested 200 deep holds its 1 MB string 200 times:
    json.dumps made all 200 MB before the text was counted; now the writing stops at the
    bound, and the rendering never holds much more than the bound's 20 MB."""
    depth = 200
    body = '{"a":' * depth + json.dumps("x" * 1_000_000) + "}" * depth
    tracemalloc.start()
    try:
        with pytest.raises(TemplateError, match="20,971,520 characters"):
            _render("$input.json('$..*').length()", body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000_000


def test_a_failed_rendering_leaves_nothing_of_its_body_held(cloud: LocalCloud) -> None:
    """A template that fails after parsing the body leaves no reference cycle holding the
    parsed body for the garbage collector to find later (issue 47's held-back attacks:
    forty failing 10 MB renderings held 717 MB); measured with the collector off, counting
    what was allocated under :mod:`~localcloud.services.apigateway.mapping` only (the
    server's own threads allocate meanwhile)."""
    body = "[" + "{}," * 100_000 + "{}]"  # 0.3 MB of text, some 7 MB once parsed
    rendering = tracemalloc.Filter(True, mapping.__file__, all_frames=True)
    collecting = gc.isenabled()
    gc.disable()
    tracemalloc.start(6)
    try:
        try:
            _render("$input.json('$').length()$util.parseJson('{')", body)
        except TemplateError as exc:
            failure = str(exc)
        peak = tracemalloc.get_traced_memory()[1]
        held = tracemalloc.take_snapshot().filter_traces([rendering])
    finally:
        tracemalloc.stop()
        if collecting:
            gc.enable()
    assert "not JSON" in failure
    assert peak > 5_000_000  # the body was parsed
    assert sum(stat.size for stat in held.statistics("filename")) < 1_000_000


def test_a_template_over_300_kb_is_refused(cloud: LocalCloud) -> None:
    with pytest.raises(TemplateError, match="300 KB"):
        _render("x" * (300 * 1024 + 1))


def test_a_rendered_body_over_10_mb_is_refused(cloud: LocalCloud) -> None:
    line = "x" * (10 * 1024 * 1024 // 1000 + 1)
    with pytest.raises(TemplateError, match="10 MB"):
        _render(f"#foreach($i in [1..1000]){line}#end")


@pytest.mark.parametrize(
    "use", ["$a", "#return($a)", "#set($b = [$a..1])", "#if($a == $b)#end"], ids=str
)
def test_a_list_of_lists_built_by_doubling_is_never_walked_without_bound(
    cloud: LocalCloud, use: str
) -> None:
    """2**60 lists printed, returned, compared: Python's own str, == and < would walk them."""
    doubled = "#set($a = [1])#set($b = [1])#foreach($i in [1..60])#set($a = [$a, $a])"
    with pytest.raises(TemplateError, match="250,000 steps|integers"):
        _render(f"{doubled}#set($b = [$b, $b])#end{use}")
