"""What a caller writes to select resources is matched as AWS matches it, never run as a
regular expression (issue 47's held-back attacks: moto compiled each of these into one,
and ``(a+)+b`` backtracked holding the interpreter lock, freezing the whole server):

- ``ListQueues`` lists the queues whose names begin with ``QueueNamePrefix`` (the
  ListQueues API reference), a prefix and nothing more; ``ListRules``' ``NamePrefix`` the
  same;
- an EC2 filter value's ``*`` matches zero or more characters and ``?`` zero or one ("Filter",
  EC2 API reference); every other character is itself.

The hang guard of a match that would never end is faulthandler's watchdog, which needs no
interpreter lock and ends the process: a loud failure, never a hang.
"""

from __future__ import annotations

import faulthandler
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from localcloud.tests.support.aws import REGION

HANG_GUARD_S = 120
"""Seconds after which a match that never ends kills the test process."""


@pytest.fixture(scope="module")
def sqs() -> Iterator[Any]:
    from moto import mock_aws

    from localcloud import services

    with mock_aws():
        services.install()
        try:
            client = boto3.client("sqs", region_name=REGION)
            for name in ("orders", "orders-dlq", "ORDERS", "o-rders", "a" * 40):
                client.create_queue(QueueName=name)
            yield client
        finally:
            services.uninstall()


def names(answer: dict[str, Any]) -> list[str]:
    return sorted(url.rsplit("/", 1)[1] for url in answer.get("QueueUrls", []))


@pytest.mark.parametrize(
    ("prefix", "listed"),
    [
        ("orders", ["orders", "orders-dlq"]),
        ("o.", []),  # a dot is a dot, not any character
        ("o-", ["o-rders"]),
        ("ORD", ["ORDERS"]),  # case counts
        ("rders", []),  # a prefix, not a substring
    ],
)
def test_the_prefix_is_the_start_of_the_name(sqs: Any, prefix: str, listed: list[str]) -> None:
    assert names(sqs.list_queues(QueueNamePrefix=prefix)) == listed


def test_a_prefix_that_reads_as_a_catastrophic_expression_lists_nothing_at_once(sqs: Any) -> None:
    faulthandler.dump_traceback_later(HANG_GUARD_S, exit=True)
    try:
        answer = sqs.list_queues(QueueNamePrefix="(a+)+b" + "a" * 30)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert names(answer) == []


@pytest.fixture(scope="module")
def ec2() -> Iterator[Any]:
    from moto import mock_aws

    from localcloud import services

    with mock_aws():
        services.install()
        try:
            client = boto3.client("ec2", region_name=REGION)
            client.create_security_group(GroupName="web", Description="web tier (public)")
            client.create_security_group(GroupName="db", Description="a" * 200)
            yield client
        finally:
            services.uninstall()


def described(ec2: Any, description: str) -> list[str]:
    answer = ec2.describe_security_groups(
        Filters=[{"Name": "description", "Values": [description]}]
    )
    return sorted(group["GroupName"] for group in answer["SecurityGroups"])


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("web tier (public)", ["web"]),  # parentheses are themselves
        ("web*", ["web"]),
        ("web tier ?public)", ["web"]),  # ? for the one character "("
        ("web tier (public)?", ["web"]),  # ? for none
        ("web ?(public)", []),  # "tier " is more than one
        ("web tier (publi?)", ["web"]),
        ("web.*", []),  # a dot is a dot
        ("web tier \\(public\\)", []),  # only \\* and \\? are escapes
    ],
)
def test_an_ec2_filter_value_is_a_wildcard_pattern(ec2: Any, value: str, found: list[str]) -> None:
    assert described(ec2, value) == found


def test_an_ec2_filter_that_reads_as_a_catastrophic_expression_matches_nothing_at_once(
    ec2: Any,
) -> None:
    faulthandler.dump_traceback_later(HANG_GUARD_S, exit=True)
    try:
        found = described(ec2, "(a+)+b" + "a" * 30)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert found == []


@pytest.fixture(scope="module")
def events() -> Iterator[Any]:
    from moto import mock_aws

    from localcloud import services

    with mock_aws():
        services.install()
        try:
            client = boto3.client("events", region_name=REGION)
            for name in ("orders-placed", "orders.shipped", "refunds", "a" * 40):
                client.put_rule(Name=name, EventPattern='{"source": ["shop"]}')
            yield client
        finally:
            services.uninstall()


@pytest.mark.parametrize(
    ("prefix", "listed"),
    [("orders", ["orders-placed", "orders.shipped"]), ("orders.", ["orders.shipped"]), ("o.", [])],
)
def test_list_rules_takes_its_name_prefix_as_a_prefix(
    events: Any, prefix: str, listed: list[str]
) -> None:
    answer = events.list_rules(NamePrefix=prefix)
    assert sorted(rule["Name"] for rule in answer["Rules"]) == listed


def test_a_rule_name_prefix_that_reads_as_a_catastrophic_expression_lists_nothing_at_once(
    events: Any,
) -> None:
    faulthandler.dump_traceback_later(HANG_GUARD_S, exit=True)
    try:
        answer = events.list_rules(NamePrefix="(a+)+b" + "a" * 30)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert answer["Rules"] == []
