"""The local cloud refuses and reports what AWS refuses and reports
(``localcloud.services.sqs.patches`` and ``.stepfunctions``) on Step Functions StartExecution
names, StopExecution's error, cause and stopDate, and the characters SQS accepts in a
message."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core.config import DefaultConfig

from localcloud.tests.support.aws import REGION

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
ROLE_ARN = "arn:aws:iam::123456789012:role/x"
WAIT_A_MINUTE = {
    "StartAt": "Hold",
    "States": {"Hold": {"Type": "Wait", "Seconds": 60, "End": True}},
}


@pytest.fixture
def checked(patched: None) -> None:
    """The checks installed with the rest of the local cloud's patches."""


@pytest.fixture
def cloud(checked: None) -> Iterator[None]:
    """moto as the local cloud runs it: the interpreter executes state machines."""
    with mock_aws(config=MOTO_CONFIG):
        yield


@pytest.fixture
def sfn(cloud: None) -> Any:
    return boto3.client("stepfunctions", region_name=REGION)


@pytest.fixture
def state_machine(sfn: Any) -> str:
    arn: str = sfn.create_state_machine(
        name="hold", definition=json.dumps(WAIT_A_MINUTE), roleArn=ROLE_ARN
    )["stateMachineArn"]
    return arn


@pytest.fixture
def sqs(cloud: None) -> Any:
    return boto3.client("sqs", region_name=REGION)


@pytest.fixture
def queue_url(sqs: Any) -> str:
    url: str = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    return url


def error_of(raised: pytest.ExceptionInfo[ClientError]) -> tuple[str, int, str]:
    """(code, HTTP status, message) of an AWS error response."""
    response: Any = raised.value.response
    return (
        response["Error"]["Code"],
        response["ResponseMetadata"]["HTTPStatusCode"],
        response["Error"]["Message"],
    )


def eventually(probe: Callable[[], Any], timeout_s: float = 10.0) -> Any:
    """``probe()``'s first truthy value, polling (moto's interpreter runs on threads)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def aborted_event(sfn: Any, execution_arn: str) -> dict[str, Any] | None:
    events = sfn.get_execution_history(executionArn=execution_arn)["events"]
    return next((e for e in events if e["type"] == "ExecutionAborted"), None)


def queue_bodies(sqs: Any, queue_url: str) -> list[str]:
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    return [message["Body"] for message in messages]


# --- StartExecution: execution names ----------------------------------------------------


def test_an_execution_name_of_80_characters_is_accepted(sfn: Any, state_machine: str) -> None:
    # Given a name at the 80-character limit
    name = "n" * 80

    # When an execution is started with it
    arn = sfn.start_execution(stateMachineArn=state_machine, name=name)["executionArn"]

    # Then it runs under that name
    assert sfn.describe_execution(executionArn=arn)["name"] == name


def test_an_execution_name_of_81_characters_is_a_validation_error(
    sfn: Any, state_machine: str
) -> None:
    # Given a name one character over the limit
    name = "n" * 81

    # When an execution is started with it
    with pytest.raises(ClientError) as raised:
        sfn.start_execution(stateMachineArn=state_machine, name=name)

    # Then AWS's length error comes back, and nothing started
    code, status, message = error_of(raised)
    assert (code, status) == ("ValidationException", 400)
    assert "Member must have length less than or equal to 80" in message
    assert sfn.list_executions(stateMachineArn=state_machine)["executions"] == []


@pytest.mark.parametrize(
    "character",
    [
        " ",
        "<",
        ">",
        "\u0007",
        *'{}[]?*"#%\\^|~`$&,;:/',
        "\t",
        "\u007f",
        "\u009f",
        "\u2003",  # em space: white space
        "\ufffe",
    ],
    ids=lambda character: f"U+{ord(character):04X}",
)
def test_an_execution_name_with_a_forbidden_character_is_invalid_name(
    sfn: Any, state_machine: str, character: str
) -> None:
    # Given a name holding a character AWS forbids in execution names
    name = f"order{character}42"

    # When an execution is started with it
    with pytest.raises(ClientError) as raised:
        sfn.start_execution(stateMachineArn=state_machine, name=name)

    # Then the answer is InvalidName, HTTP 400, and nothing started
    code, status, message = error_of(raised)
    assert (code, status) == ("InvalidName", 400)
    assert message == f"Invalid Name: '{name}'"
    assert sfn.list_executions(stateMachineArn=state_machine)["executions"] == []


@pytest.mark.parametrize("name", ["order-42_retry.1", "Bestellung-Größe-ü", "a"])
def test_an_ordinary_execution_name_starts_an_execution(
    sfn: Any, state_machine: str, name: str
) -> None:
    # Given a name with none of the forbidden characters (non-ASCII letters are allowed)
    # When an execution is started with it
    arn = sfn.start_execution(stateMachineArn=state_machine, name=name)["executionArn"]

    # Then it is running
    description = sfn.describe_execution(executionArn=arn)
    assert (description["name"], description["status"]) == (name, "RUNNING")


# --- StopExecution: error, cause, stopDate ----------------------------------------------


def running_execution(sfn: Any, state_machine: str, name: str) -> str:
    """An execution inside its 60 s Wait state."""
    arn: str = sfn.start_execution(stateMachineArn=state_machine, name=name)["executionArn"]
    assert eventually(
        lambda: any(
            event["type"] == "WaitStateEntered"
            for event in sfn.get_execution_history(executionArn=arn)["events"]
        )
    )
    return arn


def test_stop_execution_error_and_cause_show_in_describe_execution(
    sfn: Any, state_machine: str
) -> None:
    # Given an execution waiting in its Wait state
    arn = running_execution(sfn, state_machine, "stop-describe")

    # When it is stopped with an error and a cause
    sfn.stop_execution(executionArn=arn, error="Operator.Cancelled", cause="duplicate order")

    # Then DescribeExecution shows it aborted with that error and cause
    description = sfn.describe_execution(executionArn=arn)
    assert description["status"] == "ABORTED"
    assert (description["error"], description["cause"]) == (
        "Operator.Cancelled",
        "duplicate order",
    )


def test_stop_execution_error_and_cause_show_in_the_execution_aborted_event(
    sfn: Any, state_machine: str
) -> None:
    # Given an execution waiting in its Wait state
    arn = running_execution(sfn, state_machine, "stop-history")

    # When it is stopped with an error and a cause
    sfn.stop_execution(executionArn=arn, error="Operator.Cancelled", cause="duplicate order")

    # Then its ExecutionAborted history event carries them
    event = eventually(lambda: aborted_event(sfn, arn))
    assert event is not None
    assert event["executionAbortedEventDetails"] == {
        "error": "Operator.Cancelled",
        "cause": "duplicate order",
    }


def test_stop_execution_answers_with_the_stop_date_describe_execution_shows(
    sfn: Any, state_machine: str
) -> None:
    # Given an execution waiting in its Wait state
    arn = running_execution(sfn, state_machine, "stop-date")

    # When it is stopped
    response = sfn.stop_execution(executionArn=arn, error="E", cause="C")

    # Then the response has stopDate, the same one DescribeExecution shows, after the start
    description = sfn.describe_execution(executionArn=arn)
    assert "stopDate" in response
    assert response["stopDate"] == description["stopDate"]
    assert response["stopDate"] >= description["startDate"]


def test_a_stop_right_after_the_start_still_aborts_with_error_and_cause(
    sfn: Any, state_machine: str
) -> None:
    # Given an execution that has only just been started
    arn = sfn.start_execution(stateMachineArn=state_machine, name="stop-at-once")["executionArn"]

    # When it is stopped at once
    response = sfn.stop_execution(executionArn=arn, error="E", cause="C")

    # Then it is aborted with a stopDate, and the history's ExecutionAborted has the details
    description = sfn.describe_execution(executionArn=arn)
    assert (description["status"], description["error"], description["cause"]) == (
        "ABORTED",
        "E",
        "C",
    )
    assert "stopDate" in response
    event = eventually(lambda: aborted_event(sfn, arn))
    assert event is not None
    assert event["executionAbortedEventDetails"] == {"error": "E", "cause": "C"}


def test_a_stop_without_error_or_cause_reports_neither(sfn: Any, state_machine: str) -> None:
    # Given an execution waiting in its Wait state
    arn = running_execution(sfn, state_machine, "stop-plain")

    # When it is stopped with no error and no cause
    response = sfn.stop_execution(executionArn=arn)

    # Then it is aborted with a stopDate and no error or cause anywhere
    description = sfn.describe_execution(executionArn=arn)
    assert description["status"] == "ABORTED"
    assert "stopDate" in response
    assert "error" not in description
    assert "cause" not in description
    event = eventually(lambda: aborted_event(sfn, arn))
    assert event is not None
    assert event["executionAbortedEventDetails"] == {}


def test_stop_execution_error_and_cause_show_without_the_interpreter(checked: None) -> None:
    # Given moto's mock executions (execute_state_machine off) and a started execution
    with mock_aws():
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(
            name="mock", definition=json.dumps(WAIT_A_MINUTE), roleArn=ROLE_ARN
        )["stateMachineArn"]
        arn = sfn.start_execution(stateMachineArn=machine, name="mock-stop")["executionArn"]

        # When it is stopped with an error and a cause
        response = sfn.stop_execution(executionArn=arn, error="E", cause="C")

        # Then DescribeExecution shows them, and the response has stopDate
        description = sfn.describe_execution(executionArn=arn)
        assert (description["status"], description["error"], description["cause"]) == (
            "ABORTED",
            "E",
            "C",
        )
        assert response["stopDate"] == description["stopDate"]


# --- SQS: message contents --------------------------------------------------------------


@pytest.mark.parametrize(
    "character", ["\u0007", "\u0000", "\u001f", "\ufffe", "\uffff"], ids=lambda c: f"U+{ord(c):04X}"
)
def test_send_message_with_a_character_outside_the_allowed_set_is_invalid_message_contents(
    sqs: Any, queue_url: str, character: str
) -> None:
    # Given a body holding a character outside SQS's allowed set
    body = f"order 42{character}"

    # When it is sent
    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=queue_url, MessageBody=body)

    # Then SQS's InvalidMessageContents comes back, naming the character, and nothing queued
    code, status, message = error_of(raised)
    assert (code, status) == ("InvalidMessageContents", 400)
    assert message == (
        f"Invalid binary character '#x{ord(character):X}' was found in the message body, the "
        "set of allowed characters is #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | "
        "[#x10000-#x10FFFF]."
    )
    assert queue_bodies(sqs, queue_url) == []


def test_send_message_with_tab_newline_carriage_return_and_emoji_is_accepted(
    sqs: Any, queue_url: str
) -> None:
    # Given a body using only allowed characters, some outside the BMP
    body = '{"note": "line one\n\tline two\r\n📦 ✓ \ue000 \ufffd"}'

    # When it is sent
    sqs.send_message(QueueUrl=queue_url, MessageBody=body)

    # Then it is queued unchanged
    assert queue_bodies(sqs, queue_url) == [body]


def test_send_message_with_a_bad_string_attribute_value_is_invalid_message_contents(
    sqs: Any, queue_url: str
) -> None:
    # Given a good body with a String attribute whose value holds U+0007
    attributes = {"source": {"DataType": "String", "StringValue": "ops\u0007"}}

    # When it is sent
    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=queue_url, MessageBody="ok", MessageAttributes=attributes)

    # Then it is refused as the body would be, and nothing queued
    code, status, message = error_of(raised)
    assert (code, status) == ("InvalidMessageContents", 400)
    assert "'#x7'" in message
    assert "'source'" in message
    assert queue_bodies(sqs, queue_url) == []


def test_send_message_batch_reports_only_the_bad_entry_in_failed(sqs: Any, queue_url: str) -> None:
    # Given a batch of one entry with U+0007 in its body and one good entry
    entries = [
        {"Id": "bad", "MessageBody": "order\u0007"},
        {"Id": "good", "MessageBody": "order 42"},
    ]

    # When it is sent
    response = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)

    # Then exactly the bad entry failed, with InvalidMessageContents, and the good one queued
    assert [entry["Id"] for entry in response["Successful"]] == ["good"]
    assert len(response["Failed"]) == 1
    failed = response["Failed"][0]
    assert (failed["Id"], failed["Code"], failed["SenderFault"]) == (
        "bad",
        "InvalidMessageContents",
        True,
    )
    assert "'#x7'" in failed["Message"]
    assert queue_bodies(sqs, queue_url) == ["order 42"]


def test_send_message_batch_reports_a_bad_attribute_value_in_failed(
    sqs: Any, queue_url: str
) -> None:
    # Given a batch whose second entry has a String attribute holding U+0001
    entries = [
        {"Id": "first", "MessageBody": "one"},
        {
            "Id": "second",
            "MessageBody": "two",
            "MessageAttributes": {"tag": {"DataType": "String", "StringValue": "\u0001"}},
        },
    ]

    # When it is sent
    response = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)

    # Then only the second failed, with InvalidMessageContents
    assert [entry["Id"] for entry in response["Successful"]] == ["first"]
    assert [(f["Id"], f["Code"]) for f in response["Failed"]] == [
        ("second", "InvalidMessageContents")
    ]


def test_send_message_batch_of_only_bad_entries_still_checks_the_whole_request(
    sqs: Any, queue_url: str
) -> None:
    # Given a batch whose two bad entries share an Id
    entries = [{"Id": "same", "MessageBody": "\u0007"}, {"Id": "same", "MessageBody": "\u0008"}]

    # When it is sent
    with pytest.raises(ClientError) as raised:
        sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)

    # Then the request-level error wins, as when the bodies are good
    assert error_of(raised)[:2] == ("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400)
