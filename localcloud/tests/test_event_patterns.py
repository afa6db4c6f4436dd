"""Event patterns as EventBridge matches them, one case per documented comparison operator
and array rule, through ``TestEventPattern`` (which moto answers with nothing).

Source: "Creating Amazon EventBridge event patterns", "Content filtering in Amazon
EventBridge event patterns" and "Arrays in Amazon EventBridge event patterns" in the
EventBridge user guide; the examples are theirs, or built from their rules.
"""

from __future__ import annotations

import faulthandler
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from localcloud.tests.support.aws import REGION

HANG_GUARD_S = 120
"""Seconds after which a match that never ends kills the test process (far above the
milliseconds it takes)."""

EVENT: dict[str, Any] = {
    "version": "0",
    "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
    "detail-type": "EC2 Instance State-change Notification",
    "source": "aws.ec2",
    "account": "111122223333",
    "time": "2017-12-22T18:43:48Z",
    "region": "us-west-1",
    "resources": ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],
    "detail": {
        "instance-id": "i-1234567890abcdef0",
        "state": "terminated",
        "c-count": 5,
        "d-count": 3,
        "x-limit": 301.8,
        "source-ip": "10.0.0.123",
        "filename": "photo.PNG",
        "location": "us-east-1",
        "flag": True,
        "nothing": None,
        "empty": "",
        "tags": ["blue", "green"],
        "items": [{"sku": "a-1", "quantity": 2}, {"sku": "b-2", "quantity": 7}],
    },
}

CASES: list[tuple[str, dict[str, Any], bool]] = [
    # exact values: a string, a number, null, the empty string; a list is an OR
    ("exact string", {"detail": {"state": ["terminated"]}}, True),
    ("exact string, other value", {"detail": {"state": ["running"]}}, False),
    ("one of a list", {"detail": {"state": ["running", "terminated"]}}, True),
    ("exact number", {"detail": {"c-count": [5]}}, True),
    ("null", {"detail": {"nothing": [None]}}, True),
    ("empty string", {"detail": {"empty": [""]}}, True),
    ("a missing field", {"detail": {"absent": ["x"]}}, False),
    ("case matters", {"detail": {"state": ["Terminated"]}}, False),
    # fields are ANDed
    ("and: both match", {"source": ["aws.ec2"], "detail": {"state": ["terminated"]}}, True),
    ("and: one fails", {"source": ["aws.s3"], "detail": {"state": ["terminated"]}}, False),
    # prefix, suffix, equals-ignore-case
    ("prefix", {"detail": {"location": [{"prefix": "us-"}]}}, True),
    ("prefix, no", {"detail": {"location": [{"prefix": "eu-"}]}}, False),
    (
        "prefix ignoring case",
        {"detail": {"location": [{"prefix": {"equals-ignore-case": "US-"}}]}},
        True,
    ),
    ("suffix", {"detail": {"filename": [{"suffix": ".PNG"}]}}, True),
    ("suffix is case-sensitive", {"detail": {"filename": [{"suffix": ".png"}]}}, False),
    (
        "suffix ignoring case",
        {"detail": {"filename": [{"suffix": {"equals-ignore-case": ".png"}}]}},
        True,
    ),
    ("equals-ignore-case", {"detail": {"state": [{"equals-ignore-case": "TERMINATED"}]}}, True),
    # anything-but
    ("anything-but a value", {"detail": {"state": [{"anything-but": "running"}]}}, True),
    ("anything-but that value", {"detail": {"state": [{"anything-but": "terminated"}]}}, False),
    (
        "anything-but a list",
        {"detail": {"state": [{"anything-but": ["stopped", "terminated"]}]}},
        False,
    ),
    ("anything-but numbers", {"detail": {"c-count": [{"anything-but": [1, 2, 3]}]}}, True),
    (
        "anything-but a prefix",
        {"detail": {"location": [{"anything-but": {"prefix": "us-"}}]}},
        False,
    ),
    (
        "anything-but a suffix",
        {"detail": {"filename": [{"anything-but": {"suffix": ".txt"}}]}},
        True,
    ),
    (
        "anything-but ignoring case",
        {"detail": {"state": [{"anything-but": {"equals-ignore-case": ["TERMINATED"]}}]}},
        False,
    ),
    (
        "anything-but a wildcard",
        {"detail": {"filename": [{"anything-but": {"wildcard": "*.PNG"}}]}},
        False,
    ),
    # numeric
    ("numeric range", {"detail": {"c-count": [{"numeric": [">", 0, "<=", 5]}]}}, True),
    (
        "numeric < and =",
        {"detail": {"d-count": [{"numeric": ["<", 10]}], "x-limit": [{"numeric": ["=", 3.018e2]}]}},
        True,
    ),
    ("numeric, too small", {"detail": {"c-count": [{"numeric": [">", 5]}]}}, False),
    ("numeric, >=", {"detail": {"c-count": [{"numeric": [">=", 5]}]}}, True),
    ("numeric on a string", {"detail": {"state": [{"numeric": [">", 0]}]}}, False),
    ("numeric on a boolean", {"detail": {"flag": [{"numeric": [">", 0]}]}}, False),
    # cidr
    ("cidr", {"detail": {"source-ip": [{"cidr": "10.0.0.0/24"}]}}, True),
    ("cidr, outside", {"detail": {"source-ip": [{"cidr": "10.0.1.0/24"}]}}, False),
    # exists
    ("exists", {"detail": {"state": [{"exists": True}]}}, True),
    ("exists, missing", {"detail": {"absent": [{"exists": True}]}}, False),
    ("not exists", {"detail": {"absent": [{"exists": False}]}}, True),
    ("not exists, present", {"detail": {"state": [{"exists": False}]}}, False),
    # wildcard
    ("wildcard", {"detail": {"filename": [{"wildcard": "photo.*"}]}}, True),
    ("wildcard, no", {"detail": {"filename": [{"wildcard": "*.jpg"}]}}, False),
    ("wildcard, several", {"detail": {"source-ip": [{"wildcard": "10.*.*.1*"}]}}, True),
    ("wildcard, in order", {"detail": {"location": [{"wildcard": "*east*us*"}]}}, False),
    ("wildcard, escaped star", {"detail": {"filename": [{"wildcard": "photo\\*"}]}}, False),
    ("wildcard, no star", {"detail": {"filename": [{"wildcard": "photo.PNG"}]}}, True),
    # $or
    (
        "$or, the second",
        {"detail": {"$or": [{"c-count": [{"numeric": [">", 10]}]}, {"d-count": [3]}]}},
        True,
    ),
    ("$or, neither", {"detail": {"$or": [{"c-count": [0]}, {"d-count": [0]}]}}, False),
    # arrays in the event: any value of the array matches
    ("array value", {"detail": {"tags": ["green"]}}, True),
    ("array value, none", {"detail": {"tags": ["red"]}}, False),
    ("array, prefix", {"detail": {"tags": [{"prefix": "bl"}]}}, True),
    ("array of ARNs", {"resources": [{"prefix": "arn:aws:ec2:us-west-1:"}]}, True),
    # arrays of objects: a field matches any object's value
    ("array of objects", {"detail": {"items": {"sku": ["b-2"]}}}, True),
    ("array of objects, none", {"detail": {"items": {"sku": ["c-3"]}}}, False),
    (
        "array of objects, numeric",
        {"detail": {"items": {"quantity": [{"numeric": [">", 5]}]}}},
        True,
    ),
]


@pytest.fixture(scope="module")
def events() -> Iterator[Any]:
    from moto import mock_aws

    from localcloud import services

    with mock_aws():
        services.install()
        try:
            yield boto3.client("events", region_name=REGION)
        finally:
            services.uninstall()


@pytest.mark.parametrize(("pattern", "expected"), [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_the_pattern_matches_as_eventbridge_documents(
    events: Any, pattern: dict[str, Any], expected: bool
) -> None:
    answer = events.test_event_pattern(EventPattern=json.dumps(pattern), Event=json.dumps(EVENT))
    assert answer["Result"] is expected


def test_a_wildcard_of_many_stars_is_matched_without_backtracking(events: Any) -> None:
    """Issue 47: moto made each ``*`` a regular expression's ``.*``; thirteen of them against
    a long value that fails at its end backtracked for minutes holding the interpreter lock,
    and the whole server froze. Matched as a pattern of literals, it answers at once (a
    backtracking matcher holds the interpreter lock, so the hang guard is faulthandler's
    watchdog, which needs no lock and ends the process: a loud failure, never a hang)."""
    pattern = {"detail": {"state": [{"wildcard": "*a" * 13 + "*b"}]}}
    event = {**EVENT, "detail": {"state": "a" * 5_000}}
    faulthandler.dump_traceback_later(HANG_GUARD_S, exit=True)
    try:
        answer = events.test_event_pattern(
            EventPattern=json.dumps(pattern), Event=json.dumps(event)
        )
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert answer["Result"] is False
