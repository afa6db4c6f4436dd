"""A served account (``make serve``, ``make lab``, ``make demo``, ``make invoke``,
``python -m localcloud serve --template``) runs its from-source functions in execution
environments of their own, as a zip's (issue 27); only an account with no endpoint runs
them in-process. Its own module: each test here starts its own accounts, which must not
meet another module's account in moto's memory."""

from __future__ import annotations

from localcloud.services.lambda_ import InProcessFunction, ProcessFunction
from tests.support.cloud import started


def test_a_served_account_runs_its_from_source_functions_in_environments_of_their_own() -> None:
    """A served account (make serve, make lab, python -m localcloud serve --template)
    runs a from-source function like a zip one: a process tree of its own, the source
    folder its task root. Only an account with no endpoint runs it in-process."""
    with started(server=True) as served:
        function = served.function("QueueWorkerFunction")
        record = {
            "messageId": "m1",
            "receiptHandle": "r1",
            "body": "not an order",
            "attributes": {"ApproximateReceiveCount": "1"},
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:jobs",
        }
        answer = function.invoke({"Records": [record]})
        environments = function.environments() if isinstance(function, ProcessFunction) else 0
    with started() as embedded:
        in_process = embedded.function("QueueWorkerFunction")

    assert isinstance(function, ProcessFunction)
    # the application's own answer: an invalid body is never acknowledged
    assert (answer.error, answer.payload) == (
        False,
        {"batchItemFailures": [{"itemIdentifier": "m1"}]},
    )
    assert environments == 1
    assert function.code_uri.is_dir()  # the source folder: never the local cloud's to remove
    assert isinstance(in_process, InProcessFunction)
