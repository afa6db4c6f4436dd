"""Reading the live view as a test reads it: a page of a cloud's view app, every answer
the page is made of, the text of the rows of one of its tables, and the characters of an
answer that would not show as themselves; and sending a body to the stack's queue."""

from __future__ import annotations

import json
import re
import unicodedata
from html import unescape
from typing import Any

from localcloud.account import LocalCloud


def send(cloud: LocalCloud, *bodies: dict[str, Any], output: str = "TaskQueueUrl") -> None:
    """Send each body, as JSON, to the queue whose URL is the stack's ``output`` Output
    (the jobs app's ``TaskQueueUrl`` unless told)."""
    for body in bodies:
        cloud.client("sqs").send_message(
            QueueUrl=cloud.outputs[output], MessageBody=json.dumps(body)
        )


def get(cloud: LocalCloud, path: str) -> str:
    """The view's answer to ``GET path`` (it must be 200), as text."""
    client = cloud.view_app().test_client()
    response = client.get(path)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def answers(cloud: LocalCloud, path: str = "/") -> dict[str, str]:
    """The view's answers a browser showing ``path`` reads: the page, every fragment it
    loads (each ``hx-get``, as htmx asks for it), and ``/state.json`` (the same data, for
    ``status``), by path."""
    page = get(cloud, path)
    found = {path: page}
    for fragment in re.findall(r'hx-get="([^"]*)"', page):
        found[unescape(fragment)] = get(cloud, unescape(fragment))
    found["/state.json"] = get(cloud, "/state.json")
    return found


def unshown(text: str) -> list[str]:
    """The characters of ``text`` that a browser or terminal does not show as themselves,
    as ``U+XXXX``: Unicode's controls (C0, DEL, C1), format characters (bidirectional
    overrides and isolates, marks, zero-width characters), surrogates, private-use and
    unassigned code points, and the line and paragraph separators; the line breaks an
    HTML page is laid out with excepted."""
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if c != "\n"
            and (unicodedata.category(c).startswith("C") or unicodedata.category(c) in ("Zl", "Zp"))
        }
    )


def rows(html: str, table: str) -> list[str]:
    """The text of each row of one table (by its ``id``), tags removed."""
    return _rows(html.split(f'<table id="{table}"', 1)[1])


def table_rows(html: str, name: str) -> list[str]:
    """The rows of the DynamoDB table ``name`` as the view shows it, tags removed."""
    return _rows(html.split(f'data-table="{name}">', 1)[1])


def _rows(after_opening_tag: str) -> list[str]:
    body = after_opening_tag.split("</table>", 1)[0]
    return [
        " ".join(re.sub(r"<[^>]+>", " ", row).split())
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)[1:]
    ]
