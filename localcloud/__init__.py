"""The local cloud: one AWS account in this process, run on moto, in which SAM and
CloudFormation applications deploy as ``sam deploy`` deploys them and their Lambda
functions run as the Lambda Python runtime runs them, with no Docker.

A development tool; it knows no application (``make lint`` checks that it imports none,
with lint-imports; the contracts are in ``pyproject.toml``). Its parts, each importing
only what is below it::

    tests            its own suite (carried by the wheel): fixture apps, support
    cli              python -m localcloud serve: an account (and a template's stack) for
                     the AWS CLI, the SDKs and sam deploy; test-app, coverage
    remote           status, invoke and deploy against a running server
    account          LocalCloud: wires the parts below into one account; Extension, what
                     a project hands it (invocation listeners, live-view sections)
    state            the account read through its public APIs: reads, the view's
                     overview, the history of invocations and writes
    services         one folder per service: its CloudFormation providers, its moto
                     patches and its behaviour (lambda_, sqs, dynamodb, stepfunctions,
                     logs, iam, cloudwatch, sns, kms, events); the registry of services
    server  cloudformation
                     the loopback server, its guard and the live view | the engine:
                     template, parameters, intrinsics, the SAM transform, deployer,
                     updates, change sets, and the provider contract services implement
    patches          the one mechanism for replacing a library's methods; the hook
                     around moto's answers
    text             printable strings

Each package's docstring says what it owns and what it may import.
"""
