"""A fresh lab machine shows no write decision: the item its own setup writes is tagged
``setup`` and shown apart, as the labs promise ("no write decisions" before the learner
acts)."""

from __future__ import annotations

import urllib.request

import pytest

from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.labs import EV05, Q05, Lab, provision
from tests.support.aws import free_port


@pytest.mark.parametrize("lab", [Q05, EV05], ids=["q05", "ev05"])
def test_a_fresh_lab_shows_its_setup_write_apart_and_no_decision(lab: Lab) -> None:
    with OrderGuardCloud(template=None, server_port=free_port(), lab=lab.name) as cloud:
        provision(lab, cloud.client)

        state = cloud.view_data({})
        with urllib.request.urlopen(f"{cloud.view_url}sections", timeout=30) as page:  # noqa: S310
            html = page.read().decode()

    assert state["writes"] == []
    assert [(w["table"], w["tag"]) for w in state["tagged_writes"]] == [
        (table, "setup") for table in lab.reference
    ]
    assert "no write yet" in html.split('<table id="writes"', 1)[1].split("</table>", 1)[0]
    assert '<table id="tagged-writes">' in html
