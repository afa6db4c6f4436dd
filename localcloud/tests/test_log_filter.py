"""CloudWatch Logs filter patterns in the local cloud match as the AWS guide documents.

Rules: the CloudWatch Logs user guide, "Filter pattern syntax for metric filters,
subscription filters, filter log events, and Live Tail" (see
``localcloud.services.logs.filter_pattern``). Unit tests call
:func:`localcloud.services.logs.filter_pattern.matches`; the last tests go through boto3
and moto's ``FilterLogEvents`` with :mod:`localcloud.services.logs.patches` in force.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from localcloud import services
from localcloud.services.logs.filter_pattern import FilterPatternError, matches

CONFLICT = json.dumps(
    {
        "level": "INFO",
        "message": "OUTCOME",
        "decision": "conflict",
        "id": "dedup-job",
        "quantity": 5,
    },
    separators=(",", ":"),
)
ACCEPTED = json.dumps(
    {
        "level": "INFO",
        "message": "OUTCOME",
        "decision": "accepted",
        "id": "order-1",
        "quantity": 2,
    },
    separators=(",", ":"),
)
START = "START RequestId: abc"

EVENT = json.dumps(
    {
        "eventType": "UpdateTrail",
        "sourceIPAddress": "111.111.111.111",
        "arrayKey": ["value", "another value"],
        "objectList": [{"name": "a", "id": 1}, {"name": "b", "id": 2}],
        "SomeObject": None,
        "ThisFlag": True,
        "OtherFlag": False,
        "latency": 500,
        "ratio": 0.25,
        "user": {"id": 1, "email": "John.Stiles@example.com"},
        "coordinates": [[0, 1, 2], [4, 5, 6]],
        "code": "400",
    }
)
"""The guide's JSON example, with a few more fields."""


# --- unstructured events ------------------------------------------------------------------


def test_given_the_empty_pattern_when_matching_then_every_event_matches() -> None:
    assert matches("", START)
    assert matches("   ", CONFLICT)
    assert matches("", "")


def test_given_a_single_term_when_the_message_contains_it_then_it_matches() -> None:
    assert matches("ERROR", "[ERROR 400] BAD REQUEST")
    # the guide: ERROR matches "Exiting with ERRORCODE: -1" (a term is found anywhere)
    assert matches("ERROR", "Exiting with ERRORCODE: -1")


def test_given_a_single_term_when_the_message_lacks_it_then_it_does_not_match() -> None:
    assert not matches("ERROR", "[WARN] slow request")


def test_given_a_term_when_only_its_case_differs_then_it_does_not_match() -> None:
    assert not matches("error", "[ERROR 400] BAD REQUEST")
    assert not matches('"bad request"', "[ERROR 400] BAD REQUEST")


def test_given_several_terms_when_all_appear_then_it_matches() -> None:
    assert matches("ERROR Exception", "[ERROR] Caught IllegalArgumentException")
    assert matches("Exception ERROR", "[ERROR] Unhandled Exception")


def test_given_several_terms_when_one_is_missing_then_it_does_not_match() -> None:
    assert not matches("ERROR WARN", "ERROR message")


def test_given_several_terms_when_they_appear_apart_then_it_still_matches() -> None:
    assert matches("Failed request", "[WARN] Failed to process the request")


def test_given_a_quoted_phrase_when_the_exact_phrase_appears_then_it_matches() -> None:
    assert matches('"INTERNAL SERVER ERROR"', "[ERROR 500] INTERNAL SERVER ERROR")
    assert matches('"RequestId: abc"', START)


def test_given_a_quoted_phrase_when_its_words_appear_apart_then_it_does_not_match() -> None:
    assert not matches('"SERVER ERROR"', "[ERROR 500] SERVER INTERNAL ERROR")


def test_given_a_quoted_phrase_with_an_escaped_quote_when_matching_then_it_is_literal() -> None:
    assert matches(r'"say \"hi\""', 'they say "hi" twice')
    assert not matches(r'"say \"hi\""', "they say hi twice")


def test_given_or_terms_when_any_one_appears_then_it_matches() -> None:
    assert matches("?ERROR ?WARN", "ERROR WARN message")
    assert matches("?ERROR ?WARN", "ERROR message")
    assert matches("?ERROR ?WARN", "WARN message")


def test_given_or_terms_when_none_appears_then_it_does_not_match() -> None:
    assert not matches("?ERROR ?WARN", "INFO message")


def test_given_quoted_or_terms_when_one_phrase_appears_then_it_matches() -> None:
    assert matches('?"disk full" ?"out of memory"', "host: out of memory")
    assert not matches('?"disk full" ?"out of memory"', "host: memory out")


def test_given_a_term_and_an_exclusion_when_both_appear_then_it_does_not_match() -> None:
    # the guide: ERROR -WARN matches "ERROR message" only
    assert not matches("ERROR -WARN", "ERROR WARN message")
    assert matches("ERROR -WARN", "ERROR message")
    assert not matches("ERROR -WARN", "WARN message")


def test_given_a_quoted_exclusion_when_the_phrase_appears_then_it_does_not_match() -> None:
    assert not matches('ERROR -"Exiting with"', "Exiting with ERRORCODE: -1")
    assert matches('ERROR -"Exiting with"', "[ERROR] A fatal exception has occurred")


def test_given_only_an_exclusion_when_matching_then_events_without_it_match() -> None:
    assert matches("-DEBUG", "INFO started")
    assert not matches("-DEBUG", "DEBUG cache warm")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("[w1, w2]", "space-delimited"),
        ("[ip, user, ..., status_code = 404, bytes]", "space-delimited"),
        ("%ERR[0-9]+%", "regular expression"),
        ("?ERROR WARN", "mixed"),
        ("?ERROR -WARN", "mixed"),
        ("RequestId:", "double quotes"),
        ("dedup-job", "double quotes"),
        ("ERROR -", "must be followed by a term"),
        ("?", "must be followed by a term"),
        ('"unterminated', "unterminated"),
        ('"a"b', "followed by a space"),
        (r'"a\nb"', "escape"),
    ],
)
def test_given_unsupported_unstructured_syntax_when_matching_then_it_is_refused(
    pattern: str, reason: str
) -> None:
    with pytest.raises(FilterPatternError, match=reason):
        matches(pattern, "ERROR message")


def test_the_refusal_is_a_value_error() -> None:
    assert issubclass(FilterPatternError, ValueError)


# --- JSON events --------------------------------------------------------------------------


def test_given_a_string_equality_when_the_field_has_the_value_then_it_matches() -> None:
    assert matches('{ $.decision = "conflict" }', CONFLICT)
    assert matches('{ $.eventType = "UpdateTrail" }', EVENT)
    assert matches("{$.eventType=UpdateTrail}", EVENT)


def test_given_a_string_equality_when_the_field_differs_then_it_does_not_match() -> None:
    assert not matches('{ $.decision = "conflict" }', ACCEPTED)
    assert not matches('{ $.decision = "Conflict" }', CONFLICT)


def test_given_a_string_inequality_when_the_field_differs_then_it_matches() -> None:
    assert matches('{ $.decision != "conflict" }', ACCEPTED)
    assert not matches('{ $.decision != "conflict" }', CONFLICT)


def test_given_a_comparison_when_the_field_is_missing_then_neither_eq_nor_ne_matches() -> None:
    assert not matches('{ $.missing = "x" }', EVENT)
    assert not matches('{ $.missing != "x" }', EVENT)


def test_given_a_comparison_when_the_selector_is_an_array_or_object_then_it_never_matches() -> None:
    # the guide: "both {$.users = 1} and {$.users != 1} will fail to match" an array
    assert not matches("{ $.arrayKey = 1 }", EVENT)
    assert not matches("{ $.arrayKey != 1 }", EVENT)
    assert not matches('{ $.user != "x" }', EVENT)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("{ $.latency = 500 }", True),
        ("{ $.latency = 500.0 }", True),
        ("{ $.latency = 5e2 }", True),
        ("{ $.latency != 500 }", False),
        ("{ $.latency != 501 }", True),
        ("{ $.latency < 501 }", True),
        ("{ $.latency < 500 }", False),
        ("{ $.latency <= 500 }", True),
        ("{ $.latency <= 499 }", False),
        ("{ $.latency > 499 }", True),
        ("{ $.latency > +500 }", False),
        ("{ $.latency >= 500 }", True),
        ("{ $.latency >= 500.5 }", False),
        ("{ $.ratio < 10e-2 }", False),
        ("{ $.ratio > -1 }", True),
        ("{ $.ratio = 0.25 }", True),
    ],
)
def test_given_a_numeric_comparison_when_the_field_is_a_number_then_it_compares_numerically(
    pattern: str, expected: bool
) -> None:
    assert matches(pattern, EVENT) is expected


def test_given_a_numeric_comparison_when_the_field_is_a_string_then_it_does_not_match() -> None:
    assert not matches("{ $.code = 400 }", EVENT)
    assert not matches("{ $.code > 1 }", EVENT)


def test_given_a_string_comparison_when_the_field_is_a_number_then_it_does_not_match() -> None:
    assert not matches('{ $.latency = "500" }', EVENT)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ('{ $.eventType = "Update*" }', True),
        ('{ $.eventType = "*Trail" }', True),
        ('{ $.eventType = "*dateTr*" }', True),
        ('{ $.eventType = "Create*" }', False),
        ('{ $.eventType = "Up*Trail" }', False),  # a middle * is a literal, as the guide says
        ("{ $.sourceIPAddress != 123.123.* }", True),
        ("{ $.sourceIPAddress = 111.111.* }", True),
        ("{ $.latency = * }", True),  # the guide's "$.latency = *": any value
        ("{ $.eventType = * }", True),
        ("{ $.missing = * }", False),
        ("{ $.SomeObject = * }", False),
    ],
)
def test_given_a_wildcard_string_when_matching_then_star_matches_at_either_end(
    pattern: str, expected: bool
) -> None:
    assert matches(pattern, EVENT) is expected


def test_given_a_literal_star_in_the_middle_when_the_value_has_it_then_it_matches() -> None:
    assert matches('{ $.name = "Ev*ent" }', '{"name": "Ev*ent"}')
    assert not matches('{ $.name = "Ev*ent" }', '{"name": "EvXent"}')


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("{ $.ThisFlag IS TRUE }", True),
        ("{ $.ThisFlag IS FALSE }", False),
        ("{ $.OtherFlag IS FALSE }", True),
        ("{ $.OtherFlag IS TRUE }", False),
        ("{ $.SomeObject IS NULL }", True),
        ("{ $.ThisFlag IS NULL }", False),
        ("{ $.missing IS NULL }", False),
        ("{ $.missing NOT EXISTS }", True),
        ("{ $.SomeObject NOT EXISTS }", False),
        ("{ $.user.missing NOT EXISTS }", True),
        ("{ $.arrayKey[5] NOT EXISTS }", True),
        ("{ $.eventType.inner NOT EXISTS }", True),
        ("{ $.latency IS TRUE }", False),
    ],
)
def test_given_is_and_not_exists_tests_when_matching_then_they_check_kind_and_presence(
    pattern: str, expected: bool
) -> None:
    assert matches(pattern, EVENT) is expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("{ $.user.id = 1 }", True),
        ('{ $.user.email = "John.Stiles@example.com" }', True),
        ('{ $.arrayKey[0] = "value" }', True),
        ('{ $.arrayKey[1] = "value" }', False),
        ("{ $.objectList[1].id = 2 }", True),
        ("{ $.objectList[0].id = 2 }", False),
        ("{ $.coordinates[1][2] = 6 }", True),
        ('{ $.eventType[0] = "U" }', False),  # not an array: false, as the guide says
    ],
)
def test_given_nested_and_indexed_selectors_when_matching_then_they_follow_the_path(
    pattern: str, expected: bool
) -> None:
    assert matches(pattern, EVENT) is expected


GUIDE_COMPOUND = json.dumps(
    {
        "user": {"id": 1, "email": "John.Stiles@example.com"},
        "users": [
            {"id": 2, "email": "John.Doe@example.com"},
            {"id": 3, "email": "Jane.Doe@example.com"},
        ],
        "actions": ["GET", "PUT", "DELETE"],
        "coordinates": [[0, 1, 2], [4, 5, 6], [7, 8, 9]],
    }
)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ('{ ($.user.id = 1) && ($.users[0].email = "John.Doe@example.com") }', True),
        ('{ ($.user.id = 2 && $.users[0].email = "nonmatch") || $.actions[2] = "GET" }', False),
        (
            '{ $.user.email = "John.Stiles@example.com" || $.coordinates[0][1] = nonmatch '
            "&& $.actions[2] = nomatch }",
            True,
        ),
        (
            '{ ($.user.email = "John.Stiles@example.com" || $.coordinates[0][1] = nonmatch) '
            "&& $.actions[2] = nomatch }",
            False,
        ),
        ('{ $.actions[0] = "GET" && $.actions[1] = "PUT" && $.actions[2] = "DELETE" }', True),
        ("{ $.user.id = 9 || $.user.id = 8 || $.user.id = 1 }", True),
        ("{ ((($.user.id = 1))) }", True),
    ],
)
def test_given_the_guides_compound_examples_when_matching_then_and_binds_tighter_than_or(
    pattern: str, expected: bool
) -> None:
    assert matches(pattern, GUIDE_COMPOUND) is expected


@pytest.mark.parametrize(
    "message",
    [START, "", "not json {", '["a", "list"]', '"a string"', "5", '{"latency": NaN}'],
)
def test_given_an_event_that_is_not_a_json_object_when_a_json_pattern_is_used_then_no_match(
    message: str,
) -> None:
    assert not matches("{ $.decision NOT EXISTS }", message)
    assert not matches("{ $.latency = * }", message)


def test_given_a_plain_term_when_the_event_is_json_then_the_term_is_found_in_its_text() -> None:
    assert matches('"OUTCOME"', CONFLICT)
    assert matches("OUTCOME conflict", CONFLICT)
    assert not matches("OUTCOME conflict", ACCEPTED)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("{ }", "empty JSON pattern"),
        ("{ $.a = 1 ", "must end with"),
        ("{ $.a = 1 } x", "must end with"),
        ("{ $.a = %ERR% }", "regular expression"),
        ('{ $.a < "x" }', "numbers only"),
        ("{ $.a >= abc }", "numbers only"),
        ("{ $.a = true }", "IS TRUE"),
        ("{ $.a != null }", "IS NULL"),
        ("{ $.a IS NOT NULL }", "unsupported condition"),
        ("{ $.a EXISTS }", "unsupported condition"),
        ("{ $.a is true }", "unsupported condition"),
        ("{ $[0] = 1 }", "unsupported selector"),
        ("{ $ = 1 }", "unsupported selector"),
        ("{ $.a.* = 1 }", "unsupported selector"),
        ("{ $.a = 1 && }", "ends where"),
        ("{ ($.a = 1 }", "ends where"),
        ("{ $.a = 1 ) }", "unexpected"),
        ("{ !($.a = 1) }", "unexpected '!'"),
        ("{ $.a = 1 & $.b = 2 }", "unexpected '&'"),
        ("{ a = 1 }", "expected a selector"),
        ("{ $.a = user@example.com }", "double quotes"),
        ('{ $.a = "x\\y" }', "escape"),
        ("{ $.a = 1 $.b = 2 }", "expected && or ||"),
        ("{ " + "(" * 2000 + "$.a = 1" + ")" * 2000 + " }", "too deeply"),
    ],
)
def test_given_unsupported_json_syntax_when_matching_then_it_is_refused(
    pattern: str, reason: str
) -> None:
    with pytest.raises(FilterPatternError, match=reason):
        matches(pattern, CONFLICT)


# --- install: moto's FilterLogEvents -------------------------------------------------------

GROUP = "/aws/lambda/jobs-app-queue-worker"
STREAM = "2024/01/01/[$LATEST]abc"


@pytest.fixture
def logs() -> Iterator[Any]:
    """A moto log group with the two worker OUTCOME lines and a plain START line, and
    moto's FilterLogEvents patched (:mod:`localcloud.services.logs.patches`)."""
    with mock_aws():
        services.install()
        try:
            client = boto3.client("logs", region_name="us-east-1")
            client.create_log_group(logGroupName=GROUP)
            client.create_log_stream(logGroupName=GROUP, logStreamName=STREAM)
            now = int(time.time() * 1000)  # moto refuses events older than 14 days
            client.put_log_events(
                logGroupName=GROUP,
                logStreamName=STREAM,
                logEvents=[
                    {"timestamp": now + offset, "message": message}
                    for offset, message in enumerate([START, CONFLICT, ACCEPTED])
                ],
            )
            yield client
        finally:
            services.uninstall()


def _messages(client: Any, pattern: str) -> list[str]:
    response = client.filter_log_events(logGroupName=GROUP, filterPattern=pattern)
    return [event["message"] for event in response["events"]]


def test_given_install_when_filtering_by_a_json_property_then_only_the_conflict_returns(
    logs: Any,
) -> None:
    assert _messages(logs, '{ $.decision = "conflict" }') == [CONFLICT]


def test_given_install_when_filtering_by_a_quoted_term_then_the_json_lines_return(
    logs: Any,
) -> None:
    assert _messages(logs, '"OUTCOME"') == [CONFLICT, ACCEPTED]


def test_given_install_when_filtering_by_or_terms_then_either_decision_returns(
    logs: Any,
) -> None:
    assert _messages(logs, "?conflict ?accepted") == [CONFLICT, ACCEPTED]


def test_given_install_when_filtering_with_an_exclusion_then_the_conflict_is_left_out(
    logs: Any,
) -> None:
    assert _messages(logs, "OUTCOME -conflict") == [ACCEPTED]


def test_given_install_when_filtering_by_a_number_then_the_comparison_is_numeric(
    logs: Any,
) -> None:
    assert _messages(logs, "{ $.quantity > 3 }") == [CONFLICT]


def test_given_install_when_no_pattern_or_an_empty_one_is_given_then_every_event_returns(
    logs: Any,
) -> None:
    assert _messages(logs, "") == [START, CONFLICT, ACCEPTED]
    response = logs.filter_log_events(logGroupName=GROUP)
    assert [event["message"] for event in response["events"]] == [START, CONFLICT, ACCEPTED]


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("[w1, w2]", "space-delimited"),
        ("%OUTCOME%", "regular expression"),
        ("?conflict OUTCOME", "mixed"),
        ("{ $.decision = }", "JSON pattern"),
    ],
)
def test_given_install_when_the_pattern_is_unsupported_then_filter_log_events_fails(
    logs: Any, pattern: str, named: str
) -> None:
    with pytest.raises(ClientError) as raised:
        logs.filter_log_events(logGroupName=GROUP, filterPattern=pattern)
    error = raised.value.response
    assert error["Error"]["Code"] == "InvalidParameterException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert named in error["Error"]["Message"]
