"""Reading the live view as a test reads it: a page of a cloud's view app, and the text
of the rows of one of its tables; and sending a body to the stack's queue."""

from __future__ import annotations

import json
import re
from typing import Any

from localcloud.account import LocalCloud


def send(cloud: LocalCloud, *bodies: dict[str, Any]) -> None:
    """Send each body, as JSON, to the stack's ``JobsQueueUrl`` Output."""
    for body in bodies:
        cloud.client("sqs").send_message(
            QueueUrl=cloud.outputs["JobsQueueUrl"], MessageBody=json.dumps(body)
        )


def get(cloud: LocalCloud, path: str) -> str:
    """The view's answer to ``GET path`` (it must be 200), as text."""
    client = cloud.view_app().test_client()
    response = client.get(path)
    assert response.status_code == 200
    return response.get_data(as_text=True)


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
