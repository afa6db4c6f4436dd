"""The embedded local cloud: a SAM application deployed into moto, its real handlers run as
the Lambda runtime runs them, no Docker.

A development tool; never deployed (it is outside ``CodeUri: src/``). Packages by concern,
each lower one importing nothing above it (``make lint`` checks it with lint-imports; the
contracts are in ``pyproject.toml``)::

    tools            the command line, scenarios, verify, soak, bench, report
    account          one local AWS account: LocalCloud, in-process or as a server
    server  patches  the loopback server, guard and live view | every moto method replaced
    state   cfn      reading the account | the CloudFormation/SAM engine, one provider per type
    faults sqs logs  fault injection | the SQS event source | CloudWatch Logs
    lambda_runtime   the runtime contract and the account's functions
    text   project   printable strings | where this project's files are

Each package's docstring says what it owns and what it may import.
"""
