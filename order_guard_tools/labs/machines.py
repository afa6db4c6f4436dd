"""The seed labs' machines on the local cloud: what each lab says its machine provides,
made through the account's own APIs, and nothing else.

- Q05 (an SQS-triggered worker that must not store an order twice): the function
  ``labex-q05-worker`` (an unprotected starter), its role, the empty table
  ``labex-q05-orders`` and ``labex-q05-reference`` holding one item.
- EV05 (a Step Functions workflow that retries a worker failing after its write): the
  function ``labex-ev05-worker`` (an unprotected starter), its role, the tables
  ``labex-ev05-orders``, ``labex-ev05-attempts`` and ``labex-ev05-reference``.

The learner creates the rest (queue, mapping, workflow role, state machine) with the
lab's own AWS CLI commands. The labs' text is ``../shared/labs/``; the README's "Do the
labs locally" says how to run them (``make lab LAB=q05``).

May import: :mod:`localcloud.account` and everything below it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ACCOUNT_ID: Final = "123456789012"
"""moto's default account, as every ARN of the local cloud has it."""
REGION: Final = "us-east-1"
"""The labs' region (their ARNs and their AWS CLI calls)."""
STARTERS: Final = Path(__file__).parent / "starters"

_LAMBDA_TRUST: Final = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}


def _logs_statement(function: str) -> dict[str, Any]:
    """Write the function's own logs (``AWSLambdaBasicExecutionRole`` scoped to its
    group): the group is created on the first invocation, as on AWS."""
    group = f"arn:aws:logs:{REGION}:{ACCOUNT_ID}:log-group:/aws/lambda/{function}"
    return {
        "Effect": "Allow",
        "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": [group, f"{group}:*"],
    }


def _table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


@dataclass(frozen=True)
class Lab:
    """One lab machine.

    Attributes:
        name: ``q05`` or ``ev05`` (``make lab LAB=…``).
        title: the lab's title, in English.
        function: the provided function (runtime ``python3.13``, handler ``app.handler``).
        starter: the starter worker's source file, deployed as ``app.py``.
        environment: the function's environment variables.
        role: the function's role name.
        policy: the role's one inline policy (what the lab says the role may do).
        tables: the provided tables (key ``id``, a string), created empty.
        reference: table → the one item the lab says to keep unchanged.
    """

    name: str
    title: str
    function: str
    starter: Path
    environment: dict[str, str]
    role: str
    policy: dict[str, Any]
    tables: tuple[str, ...]
    reference: dict[str, dict[str, Any]] = field(default_factory=dict)

    def package(self) -> bytes:
        """The starter as a deployment package: ``app.py`` at the zip's root, the same
        bytes every time (so ``lab-check`` knows the starter's ``CodeSha256``)."""
        entry = zipfile.ZipInfo("app.py", date_time=(1980, 1, 1, 0, 0, 0))
        entry.external_attr = 0o644 << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(entry, self.starter.read_text(encoding="utf-8"))
        return buffer.getvalue()

    def starter_sha256(self) -> str:
        """The starter package's ``CodeSha256`` (base64 SHA-256, as Lambda reports it)."""
        return base64.b64encode(hashlib.sha256(self.package()).digest()).decode()


_REFERENCE_ITEM: Final = {
    "id": {"S": "reference"},
    "note": {"S": "keep unchanged"},
}

Q05: Final = Lab(
    name="q05",
    title="Process queue jobs without repeating the business effect",
    function="labex-q05-worker",
    starter=STARTERS / "q05.py",
    environment={"TABLE_NAME": "labex-q05-orders"},
    role="labex-q05-worker-role",
    policy={
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessage",
                    "sqs:GetQueueAttributes",
                    "sqs:ChangeMessageVisibility",
                ],
                "Resource": f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:labex-q05-jobs",
            },
            {
                "Effect": "Allow",
                "Action": ["dynamodb:PutItem"],
                "Resource": _table_arn("labex-q05-orders"),
            },
            _logs_statement("labex-q05-worker"),
        ],
    },
    tables=("labex-q05-orders", "labex-q05-reference"),
    reference={"labex-q05-reference": _REFERENCE_ITEM},
)

EV05: Final = Lab(
    name="ev05",
    title="Keep workflow retries from repeating the business effect",
    function="labex-ev05-worker",
    starter=STARTERS / "ev05.py",
    environment={
        "ORDERS_TABLE": "labex-ev05-orders",
        "ATTEMPTS_TABLE": "labex-ev05-attempts",
    },
    role="labex-ev05-worker-role",
    policy={
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["dynamodb:PutItem", "dynamodb:GetItem"],
                "Resource": _table_arn("labex-ev05-orders"),
            },
            {
                "Effect": "Allow",
                "Action": ["dynamodb:UpdateItem"],
                "Resource": _table_arn("labex-ev05-attempts"),
            },
            _logs_statement("labex-ev05-worker"),
        ],
    },
    tables=("labex-ev05-orders", "labex-ev05-attempts", "labex-ev05-reference"),
    reference={"labex-ev05-reference": _REFERENCE_ITEM},
)

LABS: Final = {lab.name: lab for lab in (Q05, EV05)}


def lab_named(name: str) -> Lab:
    """The lab called ``name`` (``q05`` or ``ev05``, any case).

    Raises:
        KeyError: with the names there are.
    """
    try:
        return LABS[name.strip().lower()]
    except KeyError:
        raise KeyError(f"no lab {name!r}: choose one of {', '.join(sorted(LABS))}") from None


SETUP_TAG: Final = "setup"
"""The tag of the writes a lab's own setup makes (the live view shows them apart)."""


def provision(lab: Lab, client: Any) -> None:
    """Make what ``lab``'s machine provides, through the account's APIs (``client`` is
    the account's boto3 client factory, :meth:`~localcloud.account.LocalCloud.client`).
    The items the lab's setup writes are written by a client tagged ``setup``, so the
    view shows them apart from the learner's write decisions (the lab promises none
    before the learner acts)."""
    iam = client("iam")
    role_arn = iam.create_role(
        RoleName=lab.role, AssumeRolePolicyDocument=json.dumps(_LAMBDA_TRUST)
    )["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=lab.role, PolicyName="LabWorker", PolicyDocument=json.dumps(lab.policy)
    )
    dynamodb = client("dynamodb")
    for table in lab.tables:
        dynamodb.create_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
    setup = client("dynamodb", tag=SETUP_TAG)
    for table, item in lab.reference.items():
        setup.put_item(TableName=table, Item=item)
    client("lambda").create_function(
        FunctionName=lab.function,
        Runtime="python3.13",
        Handler="app.handler",
        Role=role_arn,
        Code={"ZipFile": lab.package()},
        Environment={"Variables": dict(lab.environment)},
        Timeout=30,
        MemorySize=128,
    )
