"""The embedded local cloud: a SAM application deployed into moto, its real handlers run as
the Lambda runtime runs them, no Docker.

A development tool; never deployed (it is outside ``CodeUri: src/``). Packages by concern,
each lower one importing nothing above it (``make lint`` checks it with lint-imports; the
contracts are in ``pyproject.toml``)::

    tools            the command line, scenarios, verify, soak, bench, report
    account          one local AWS account, LocalCloud: wires the parts below together
    state   faults   Order Guard's reads of the account | fault injection, through hooks
    server  patches  the loopback server, guard and live view | every moto method replaced
    cfn              the CloudFormation/SAM engine, one provider per resource type
    sqs     logs     the SQS event source | CloudWatch Logs
    lambda_runtime   the runtime contract and the account's functions
    text   project   printable strings | where this project's files are

The top four (tools, account, state, faults) are this project's own; the packages below
them run any SAM application of this kind and know nothing of orders: the live view is
given what to show (``server.view.create_app``), and fault injection sets the hooks the
runtime and the patches offer.

Each package's docstring says what it owns and what it may import.
"""
