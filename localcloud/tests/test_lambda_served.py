"""Every account, served (``make serve``, ``make lab``, ``make demo``, ``make invoke``,
``python -m localcloud serve --template``) or in-process (a test's), runs its from-source
functions in execution environments of their own, as a zip's (issue 27): only the local
cloud's own unit tests make a function that runs in this process. Its own module: each
test here starts its own accounts, which must not meet another module's account in moto's
memory."""

from __future__ import annotations

import pytest

from localcloud.services.lambda_ import ProcessFunction
from localcloud.tests.support.cloud import started


@pytest.mark.parametrize("server", [True, False], ids=["served", "in-process"])
def test_an_account_runs_its_from_source_functions_in_environments_of_their_own(
    server: bool,
) -> None:
    """A served account (make serve, make lab, python -m localcloud serve --template) or
    an in-process one runs a from-source function like a zip one: a process tree of its
    own, the source folder its task root; the in-process account's functions reach it
    through a server on a loopback port of its own."""
    with started(server=server) as served:
        function = served.function("ConsumerFunction")
        record = {
            "messageId": "m1",
            "receiptHandle": "r1",
            "body": "not an order",
            "attributes": {"ApproximateReceiveCount": "1"},
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:jobs",
        }
        answer = function.invoke({"Records": [record]})
        environments = function.environments() if isinstance(function, ProcessFunction) else 0

    assert isinstance(function, ProcessFunction)
    # the application's own answer: an invalid body is never acknowledged
    assert (answer.error, answer.payload) == (
        False,
        {"batchItemFailures": [{"itemIdentifier": "m1"}]},
    )
    assert environments == 1
    assert function.code_uri.is_dir()  # the source folder: never the local cloud's to remove
