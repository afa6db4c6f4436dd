"""The local server beside a browser: a page on another origin can neither read nor change
anything nor run code, and the live view still works on its own origin.

Issue 18, finding 1. Each attack is what a page the developer has open could do, run in
headless Chromium (Debian's package, through Playwright) from an "attacker" site served
on another port: fetches in cors and no-cors mode, a form posted into a hidden frame,
and DNS rebinding (``--host-resolver-rules`` maps ``rebind.test`` to 127.0.0.1, as a
rebinding DNS server would). What the page saw is read back from it; what the server
holds afterwards is read with signed calls.
"""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from playwright.sync_api import Browser, Page, expect, sync_playwright

from localcloud.account import LocalCloud
from localcloud.tests.support.aws import free_port
from localcloud.tests.support.browser import CHROMIUM_FLAGS, chromium
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import SUPPORT

# Chromium: the quick loop (make check-localcloud) leaves this module to make test.
pytestmark = pytest.mark.slow

ATTACKS = SUPPORT / "attacks.js"


class Site:
    """A web site on another port of 127.0.0.1: every path answers :attr:`html`."""

    def __init__(self, html: str = "") -> None:
        self.html = html
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(site.html.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    rules = "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP attacker.test 127.0.0.1"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium(), args=[*CHROMIUM_FLAGS, rules]
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True, visibility_timeout=1) as running:
        running.start_event_sources(idle_wait_seconds=0.1)
        yield running


def evil_zip(marker: Path) -> bytes:
    """A deployment package whose import writes ``marker``: it ran if the file exists."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(
            "app.py",
            f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
            "def handler(event, context):\n    return 'pwned'\n",
        )
    return archive.getvalue()


def attack_page(server: LocalCloud, bucket: str) -> str:
    values = {
        "endpoint": server.endpoint_url,
        "queue": server.outputs["TaskQueueUrl"],
        "table": server.outputs["ItemsTableName"],
        "function": server.outputs["ConsumerFunctionName"],
        "bucket": bucket,
    }
    script = f"const CONFIG = {json.dumps(values)};\n{ATTACKS.read_text()}"
    return f"<!doctype html><title>a page</title><body><script type=module>{script}</script>"


def run_attacks(browser: Browser, url: str) -> dict[str, str]:
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_function("window.outcomes !== undefined", timeout=30_000)
        outcomes: dict[str, str] = page.evaluate("window.outcomes")
    finally:
        page.close()
    return outcomes


def account(server: LocalCloud) -> dict[str, Any]:
    """What a signed caller sees of the account: stacks, functions, buckets, orders."""
    items = server.client("dynamodb").scan(TableName=server.outputs["ItemsTableName"])["Items"]
    return {
        "stacks": sorted(
            s["StackName"] for s in server.client("cloudformation").list_stacks()["StackSummaries"]
        ),
        "functions": sorted(
            f["FunctionName"] for f in server.client("lambda").list_functions()["Functions"]
        ),
        "buckets": sorted(b["Name"] for b in server.client("s3").list_buckets()["Buckets"]),
        "orders": sorted(item["id"]["S"] for item in items),
    }


@pytest.mark.parametrize("site", ["127.0.0.1", "attacker.test"])
def test_a_page_on_another_origin_can_neither_read_nor_change_anything_nor_run_code(
    browser: Browser, server: LocalCloud, tmp_path: Path, site: str
) -> None:
    marker = tmp_path / "the-zip-ran"
    bucket = f"dev-artifacts-{site.replace('.', '-')}"
    server.client("s3").create_bucket(Bucket=bucket)  # as `sam deploy` leaves one
    server.client("s3").put_object(Bucket=bucket, Key="evil.zip", Body=evil_zip(marker))
    server.client("sqs").send_message(
        QueueUrl=server.outputs["TaskQueueUrl"], MessageBody='{"id": "a-real-order", "quantity": 2}'
    )
    server.drain(timeout_s=30)
    before = account(server)
    attacker = Site(attack_page(server, bucket))
    try:
        outcomes = run_attacks(browser, f"http://{site}:{attacker.port}/")
    finally:
        attacker.close()
    server.drain(timeout_s=30)

    for name in ("scan the orders table", "read the live view", "list queues", "create a bucket"):
        assert outcomes[name] == "blocked: TypeError", name  # the browser saw nothing
    assert account(server) == before  # nothing created, changed or wiped
    assert "a-real-order" in before["orders"]
    assert not marker.exists()  # no code ran
    with pytest.raises(ClientError):
        server.client("cloudformation").describe_change_set(StackName="evil", ChangeSetName="evil")


def test_the_same_change_set_signed_does_run_the_zip(server: LocalCloud, tmp_path: Path) -> None:
    """The control: the attack above is a real one; what stops it is the guard."""
    marker = tmp_path / "the-zip-ran"
    server.client("s3").create_bucket(Bucket="signed-artifacts")
    server.client("s3").put_object(Bucket="signed-artifacts", Key="evil.zip", Body=evil_zip(marker))
    cloudformation = server.client("cloudformation")
    template = json.loads(
        ATTACKS.read_text().split("const evilTemplate = JSON.stringify(")[1].split(").replace(")[0]
    )  # the page's own template, with this bucket
    template["Resources"]["Evil"]["Properties"]["CodeUri"] = "s3://signed-artifacts/evil.zip"
    cloudformation.create_change_set(
        StackName="signed",
        ChangeSetName="signed",
        ChangeSetType="CREATE",
        Capabilities=["CAPABILITY_IAM"],
        TemplateBody=json.dumps(template),
    )
    cloudformation.execute_change_set(StackName="signed", ChangeSetName="signed")
    (function,) = [
        f["FunctionName"]
        for f in server.client("lambda").list_functions()["Functions"]
        if f["FunctionName"].startswith("signed-")
    ]
    payload = server.client("lambda").invoke(FunctionName=function)["Payload"].read()
    assert json.loads(payload) == "pwned"
    assert marker.read_text() == "ran"
    server.client("cloudformation").delete_stack(StackName="signed")


def test_dns_rebinding_finds_a_server_that_does_not_answer_for_that_name(
    browser: Browser, server: LocalCloud
) -> None:
    assert server.server_port is not None
    page = browser.new_page()
    try:
        response = page.goto(f"http://rebind.test:{server.server_port}/_localcloud/")
        assert response is not None
        assert response.status == 403
        assert "is not a name this local cloud answers for" in page.content()
        same_origin_read = page.evaluate(
            "fetch('/_localcloud/state.json').then(async r => [r.status, await r.text()])"
        )
    finally:
        page.close()
    status, body = same_origin_read
    assert status == 403
    assert server.outputs["ItemsTableName"] not in body


def test_the_live_view_works_on_its_own_origin(browser: Browser, server: LocalCloud) -> None:
    page: Page = browser.new_page()
    try:
        assert server.view_url is not None
        page.goto(server.view_url)
        server.client("sqs").send_message(
            QueueUrl=server.outputs["TaskQueueUrl"],
            MessageBody='{"id": "seen-live", "quantity": 3}',
        )
        orders = page.locator(f'table[data-table="{server.outputs["ItemsTableName"]}"]')
        expect(orders).to_contain_text("seen-live", timeout=15_000)
        expect(page.locator('tr.write[data-key="seen-live"]').first).to_contain_text("Accepted")
    finally:
        page.close()


def test_a_named_origin_may_read_the_view_and_call_signed(browser: Browser) -> None:
    """``--allow-origin``: a page of the developer's own, on another port, works."""
    site = Site()
    origin = f"http://127.0.0.1:{site.port}"
    try:
        with started(server=True, allow_origins=[origin]) as allowed:
            script = f"""
            const S = {json.dumps(allowed.endpoint_url)};
            const view = await fetch(S + "/_localcloud/state.json").then(r => r.json());
            const tables = await fetch(S + "/", {{method: "POST", headers: {{
                "X-Amz-Target": "DynamoDB_20120810.ListTables",
                "Content-Type": "application/x-amz-json-1.0",
                "Authorization": "AWS4-HMAC-SHA256 Credential=localcloud/20261201/us-east-1/"
                  + "dynamodb/aws4_request, SignedHeaders=host, Signature=0"}},
                body: "{{}}"}}).then(r => r.json());
            window.outcomes = {{title: view.title, tables: tables.TableNames}};
            """
            site.html = f"<!doctype html><body><script type=module>{script}</script>"
            outcomes = run_attacks(browser, f"{origin}/")
            assert outcomes["title"] == "stack jobs-app"
            assert allowed.outputs["ItemsTableName"] in outcomes["tables"]
    finally:
        site.close()


def test_a_forged_presigned_link_to_an_object_does_not_run_as_this_origin(
    browser: Browser, server: LocalCloud
) -> None:
    """moto checks no signature, so a link that merely looks presigned is served; an
    object shown as HTML through it must not run scripts on the server's origin (found in
    review: it read the view and listed the queues)."""
    s3 = server.client("s3")
    s3.create_bucket(Bucket="forged-link")
    s3.put_object(
        Bucket="forged-link",
        Key="note.txt",
        Body=b"<title>note</title><script>document.title='ran'</script>",
        ContentType="text/plain",
    )
    link = (
        f"{server.endpoint_url}/forged-link/note.txt?response-content-type=text/html"
        "&X-Amz-Credential=a/20261201/us-east-1/s3/aws4_request&X-Amz-Signature=x"
    )
    page = browser.new_page()
    try:
        response = page.goto(link)  # typed or clicked by the developer: Sec-Fetch-Site none
        assert response is not None
        assert response.status == 200
        assert page.title() == "note"
    finally:
        page.close()


# --- issue 47, finding 1: one decision on one path ------------------------------------------

ENCODED_SLASH_ATTACKS = """
const {port: P, secret: SECRET} = CONFIG;
const outcomes = {};
const read = async (r) => "read " + r.status + ": " + (await r.text()).slice(0, 300);
const attempt = async (name, run) => {
  try { outcomes[name] = await run(); } catch (e) { outcomes[name] = "blocked: " + e.name; } };
const notes = `http://notes-public.localhost:${P}`;
const route = "/%2Frestapis/a/b/_user_request_";
await attempt("plant an object", async () =>
  read(await fetch(notes + route + "/planted", {method: "PUT", body: "planted"})));
await attempt("copy a private object", async () =>
  read(await fetch(notes + route + "/loot", {method: "PUT",
    headers: {"x-amz-copy-source": SECRET}})));
await attempt("read the copy", async () => read(await fetch(notes + route + "/loot")));
await attempt("read it through the view's prefix", async () =>
  read(await fetch(notes + "/%2F_localcloud/loot")));
await attempt("read the private object", async () =>
  read(await fetch(`http://cards-private.localhost:${P}/%2F_localcloud/../cards.csv`)));
window.outcomes = outcomes;
"""


def test_an_encoded_slash_neither_plants_an_object_nor_reads_a_private_one(
    browser: Browser, server: LocalCloud
) -> None:
    """Issue 47, finding 1: a page sent ``/%2Frestapis/…`` to ``<bucket>.localhost``; the
    guard let it through unsigned as an API's route, and S3 stored it (and served a private
    object copied beside it)."""
    s3 = server.client("s3")
    s3.create_bucket(Bucket="notes-public")
    s3.create_bucket(Bucket="cards-private")
    s3.put_object(Bucket="cards-private", Key="cards.csv", Body=b"alice,4111-1111-1111-1111")
    config = {"port": server.server_port, "secret": "cards-private/cards.csv"}
    attacker = Site(
        "<!doctype html><title>a page</title><body><script type=module>"
        f"const CONFIG = {json.dumps(config)};\n{ENCODED_SLASH_ATTACKS}</script>"
    )
    try:
        outcomes = run_attacks(browser, f"http://attacker.test:{attacker.port}/")
    finally:
        attacker.close()
    assert set(outcomes.values()) == {"blocked: TypeError"}, outcomes  # nothing read, 400s
    assert s3.list_objects_v2(Bucket="notes-public").get("KeyCount") == 0  # nothing planted
    assert (
        s3.get_object(Bucket="cards-private", Key="cards.csv")["Body"].read().startswith(b"alice,")
    )
