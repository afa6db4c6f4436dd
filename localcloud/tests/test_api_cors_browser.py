"""A page on another origin that an API's CORS configuration allows (issue 30): it calls
that API and reads the answer, as on AWS, and still reaches nothing else of the local
cloud: the guard refuses its calls to the control plane and the live view. A page an API
serves runs on the API's own origin (issue 47). Headless Chromium (Debian's package,
through Playwright); the page is served at ``shop.test`` (``--host-resolver-rules`` maps it
to 127.0.0.1), an API's origin is ``<api-id>.execute-api.localhost``, which Chromium
resolves to loopback itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from localcloud.account import LocalCloud
from localcloud.tests.support.browser import CHROMIUM_FLAGS, chromium
from localcloud.tests.support.cloud import started
from localcloud.tests.test_server_security_browser import Site, run_attacks

# Chromium: the quick loop (make check-localcloud) leaves this module to make test.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium(),
            args=[*CHROMIUM_FLAGS, "--host-resolver-rules=MAP shop.test 127.0.0.1"],
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        yield running


def cors_api_template(origin: str) -> str:
    """A queue behind an HTTP API (a first-class ``SQS-SendMessage`` integration) whose
    CORS configuration allows ``origin`` alone."""
    integration = {
        "type": "aws_proxy",
        "integrationSubtype": "SQS-SendMessage",
        "payloadFormatVersion": "1.0",
        "requestParameters": {"QueueUrl": {"Ref": "Orders"}, "MessageBody": "$request.body"},
    }
    api = {
        "CorsConfiguration": {
            "AllowOrigins": [origin],
            "AllowMethods": ["POST"],
            "AllowHeaders": ["content-type"],
        },
        "DefinitionBody": {
            "openapi": "3.0.1",
            "info": {"title": "cors-api", "version": "1"},
            "paths": {"/orders": {"post": {"x-amazon-apigateway-integration": integration}}},
        },
    }
    url = "https://${Api}.execute-api.${AWS::Region}.amazonaws.com/orders"
    return json.dumps(
        {
            "Transform": "AWS::Serverless-2016-10-31",
            "Resources": {
                "Orders": {"Type": "AWS::SQS::Queue"},
                "Api": {"Type": "AWS::Serverless::HttpApi", "Properties": api},
            },
            "Outputs": {
                "Url": {"Value": {"Fn::Sub": url}},
                "QueueUrl": {"Value": {"Ref": "Orders"}},
            },
        }
    )


CORS_PAGE = """<!doctype html><title>a shop</title><body><script type=module>
const CONFIG = %s;
const outcome = (promise) => promise.then(
  async (r) => `${r.status}: ${await r.text()}`, (e) => `blocked: ${e.name}`);
window.outcomes = {
  "call the API": await outcome(fetch(CONFIG.api, {method: "POST",
    headers: {"content-type": "application/json"}, body: JSON.stringify({from: "the shop"})})),
  "list queues": await outcome(fetch(CONFIG.endpoint + "/", {method: "POST",
    headers: {"content-type": "application/x-www-form-urlencoded"},
    body: "Action=ListQueues"})),
  "read the live view": await outcome(fetch(CONFIG.endpoint + "/_localcloud/state.json")),
  "read the API's control plane": await outcome(fetch(CONFIG.endpoint + "/restapis")),
};
</script>"""


def test_a_page_an_api_allows_calls_it_and_still_reaches_nothing_else(
    browser: Browser, server: LocalCloud
) -> None:
    """Issue 30: the API's own CORS configuration answers for its routes (the browser lets
    the allowed page read the answer); the guard still refuses that page everywhere else."""
    site = Site()
    cloudformation = server.client("cloudformation")
    try:
        origin = f"http://shop.test:{site.port}"
        created = cloudformation.create_change_set(
            StackName="cors-api",
            ChangeSetName="cors-api",
            ChangeSetType="CREATE",
            TemplateBody=cors_api_template(origin),
        )
        cloudformation.execute_change_set(ChangeSetName=created["Id"])
        (stack,) = cloudformation.describe_stacks(StackName="cors-api")["Stacks"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
        site.html = CORS_PAGE % json.dumps({"api": outputs["Url"], "endpoint": server.endpoint_url})
        before = sorted(server.client("sqs").list_queues().get("QueueUrls", []))
        outcomes = run_attacks(browser, f"{origin}/")
    finally:
        site.close()
    assert outcomes["call the API"].startswith("200: "), outcomes
    sent = json.loads(outcomes["call the API"].removeprefix("200: "))
    (message,) = server.client("sqs").receive_message(QueueUrl=outputs["QueueUrl"])["Messages"]
    assert (message["MessageId"], json.loads(message["Body"])) == (
        sent["MessageId"],
        {"from": "the shop"},
    )
    for name in ("list queues", "read the live view", "read the API's control plane"):
        assert outcomes[name] == "blocked: TypeError", name
    assert sorted(server.client("sqs").list_queues().get("QueueUrls", [])) == before
    cloudformation.delete_stack(StackName="cors-api")


# --- issue 47, finding 9: an API's pages on an origin of their own ---------------------------

WEB_PAGE = """<!doctype html><title>the shop</title><body><script type=module>
document.title = "ran";
const P = location.port;
const outcome = (promise) => promise.then(
  async (r) => `${r.status}: ${(await r.text()).slice(0, 200)}`, (e) => `blocked: ${e.name}`);
const signed = {"Authorization": "AWS4-HMAC-SHA256 Credential=a/20261201/us-east-1/sqs/"
  + "aws4_request, SignedHeaders=host, Signature=0",
  "Content-Type": "application/x-www-form-urlencoded"};
window.outcomes = {
  "read the live view": await outcome(fetch(`http://127.0.0.1:${P}/_localcloud/state.json`)),
  "read the view on the API's origin": await outcome(fetch("/_localcloud/state.json")),
  "list queues, signed": await outcome(fetch(`http://127.0.0.1:${P}/`,
    {method: "POST", headers: signed, body: "Action=ListQueues"})),
  "list queues on localhost": await outcome(fetch(`http://localhost:${P}/?Action=ListQueues`)),
  "read a bucket": await outcome(fetch(`http://cards.localhost:${P}/cards.csv`)),
};
</script>"""


def web_app_template() -> str:
    """A REST API whose one route is a function serving :data:`WEB_PAGE` (SAM's ``Api``
    event, the function's code inline)."""
    code = (
        f"PAGE = {WEB_PAGE!r}\n"
        "def handler(event, context):\n"
        "    return {'statusCode': 200, 'headers': {'Content-Type': 'text/html'}, 'body': PAGE}\n"
    )
    function = {
        "Runtime": "python3.13",
        "Handler": "index.handler",
        "InlineCode": code,
        "Events": {"Page": {"Type": "Api", "Properties": {"Path": "/", "Method": "get"}}},
    }
    url = "https://${ServerlessRestApi}.execute-api.${AWS::Region}.amazonaws.com/Prod/"
    return json.dumps(
        {
            "Transform": "AWS::Serverless-2016-10-31",
            "Resources": {"Page": {"Type": "AWS::Serverless::Function", "Properties": function}},
            "Outputs": {"Url": {"Value": {"Fn::Sub": url}}},
        }
    )


def test_a_page_an_api_serves_runs_its_scripts_on_its_own_origin_and_reaches_nothing_else(
    browser: Browser, server: LocalCloud
) -> None:
    """Issue 47, finding 9: every answer of the local server was sandboxed, so a web app on
    API Gateway could not be tried locally. The stack's URL (path-style, on the control
    plane's origin) sends a browser on to the API's own origin, where the page runs, and
    whatever the page tries beyond its API is another origin's, refused."""
    s3 = server.client("s3")
    s3.create_bucket(Bucket="cards")
    s3.put_object(Bucket="cards", Key="cards.csv", Body=b"alice,4111-1111-1111-1111")
    cloudformation = server.client("cloudformation")
    created = cloudformation.create_change_set(
        StackName="web-app",
        ChangeSetName="web-app",
        ChangeSetType="CREATE",
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        TemplateBody=web_app_template(),
    )
    cloudformation.execute_change_set(ChangeSetName=created["Id"])
    (stack,) = cloudformation.describe_stacks(StackName="web-app")["Stacks"]
    (url,) = [o["OutputValue"] for o in stack["Outputs"] if o["OutputKey"] == "Url"]
    api_id = url.split("/restapis/")[1].split("/")[0]
    page = browser.new_page()
    try:
        page.goto(url)  # as the developer opens the stack's output
        page.wait_for_function("window.outcomes !== undefined", timeout=30_000)
        outcomes: dict[str, str] = page.evaluate("window.outcomes")
        landed, title = page.url, page.title()
    finally:
        page.close()
        cloudformation.delete_stack(StackName="web-app")
    assert landed == f"http://{api_id}.execute-api.localhost:{server.server_port}/Prod/"
    assert title == "ran"
    assert outcomes["read the view on the API's origin"].startswith("403: "), outcomes
    assert "Missing Authentication Token" in outcomes["read the view on the API's origin"]
    for name in ("read the live view", "list queues, signed", "list queues on localhost"):
        assert outcomes[name] == "blocked: TypeError", (name, outcomes)
    assert outcomes["read a bucket"] == "blocked: TypeError", outcomes
