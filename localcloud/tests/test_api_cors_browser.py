"""A page on another origin that an API's CORS configuration allows (issue 30): it calls
that API and reads the answer, as on AWS, and still reaches nothing else of the local
cloud: the guard refuses its calls to the control plane and the live view. Headless
Chromium (Debian's package, through Playwright); the page is served at ``shop.test``
(``--host-resolver-rules`` maps it to 127.0.0.1).
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
