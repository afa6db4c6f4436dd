"""The bad-input catalogue: malformed and hostile jobs with their expected outcome.

Each case is an SQS message body (the queue worker's input) and, where the body is JSON,
the decoded value (the workflow worker's input). ``rule`` is a fragment the error must
contain: it names the field and the rule broken. Shared by ``tests/unit/test_bad_input.py``
and the local-cloud DLQ test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_NO_VALUE = object()
SQS_MAX_BODY_BYTES = 262_144  # 256 KiB, the SQS message size limit


@dataclass(frozen=True)
class Case:
    name: str
    body: str
    expected: str  # "invalid" or "accepted"
    rule: str = ""  # fragment of the error message (invalid cases)
    stored_id: str | None = None  # accepted cases: the id stored, exactly
    workflow: str | None = None  # the workflow worker's outcome when it differs

    @property
    def value(self) -> Any:
        """The decoded JSON (``_NO_VALUE`` when the body is not JSON)."""
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return _NO_VALUE

    @property
    def json_value(self) -> bool:
        return self.value is not _NO_VALUE


def job(**fields: Any) -> str:
    return json.dumps(fields)


def _invalid(name: str, body: str, rule: str) -> Case:
    return Case(name, body, "invalid", rule)


def _accepted(name: str, body: str, stored_id: str) -> Case:
    return Case(name, body, "accepted", stored_id=stored_id)


ASCII_2048 = "a" * 2048
MULTIBYTE_2048 = "é" * 1024  # 2 bytes each in UTF-8: 1024 characters, 2048 bytes
EMOJI_2048 = "\U0001f9fe" * 512  # 4 bytes each: 512 characters, 2048 bytes
PADDED_BODY = '{"id": "near-limit-padded", "quantity": 2}' + " " * (
    SQS_MAX_BODY_BYTES - 200 - len('{"id": "near-limit-padded", "quantity": 2}')
)

CASES: list[Case] = [
    # --- bodies that are not JSON
    _invalid("empty body", "", "body is not valid JSON"),
    _invalid("whitespace body", "   ", "body is not valid JSON"),
    _invalid("plain text", "dedup-order x4", "body is not valid JSON"),
    _invalid("truncated object", '{"id": "a", "quantity": 1', "body is not valid JSON"),
    _invalid("single-quoted pseudo JSON", "{'id': 'a', 'quantity': 1}", "body is not valid JSON"),
    _invalid("trailing garbage", '{"id": "a", "quantity": 1} x', "body is not valid JSON"),
    _invalid(
        "integer past 4300 digits",
        '{"id": "a", "quantity": ' + "9" * 5000 + "}",
        "not a usable JSON document",
    ),
    _invalid("nesting too deep", "[" * 100_000 + "]" * 100_000, "too deeply"),
    # --- JSON that is not an object
    _invalid("JSON array", '["dedup-order", 4]', "job must be a JSON object, got an array"),
    _invalid("empty array", "[]", "job must be a JSON object, got an array"),
    _invalid("JSON string", '"dedup-order"', "job must be a JSON object, got a string"),
    _invalid("JSON number", "4", "job must be a JSON object, got an integer"),
    _invalid("JSON null", "null", "job must be a JSON object, got null"),
    _invalid("JSON true", "true", "job must be a JSON object, got a boolean"),
    # --- keys
    _invalid("empty object", "{}", "missing the key(s) id, quantity"),
    _invalid("id only", job(id="a"), "missing the key(s) quantity"),
    _invalid("quantity only", job(quantity=1), "missing the key(s) id"),
    _invalid("extra key", job(id="a", quantity=1, price=100), "unexpected key(s) price"),
    _invalid("key in another case", job(ID="a", quantity=1), "missing the key(s) id"),
    Case(
        "mode is not a queue key",
        job(id="mode-order", quantity=1, mode="normal"),
        "invalid",
        "unexpected key(s) mode",
        workflow="accepted",  # the workflow input may carry mode
    ),
    Case(
        "duplicated key",
        '{"id": "a", "id": "b", "quantity": 1}',
        "invalid",
        "key 'id' more than once",
        workflow="not applicable",  # a decoded workflow input cannot repeat a key
    ),
    # --- id
    _invalid("id null", job(id=None, quantity=1), "id must be a string, got null"),
    _invalid("id empty", job(id="", quantity=1), "id must not be empty"),
    _invalid("id a number", job(id=7, quantity=1), "id must be a string, got an integer"),
    _invalid("id an object", job(id={"n": 1}, quantity=1), "id must be a string, got an object"),
    _invalid("id an array", job(id=["a"], quantity=1), "id must be a string, got an array"),
    _invalid("id a boolean", job(id=True, quantity=1), "id must be a string, got a boolean"),
    _invalid(
        "id 2049 ASCII bytes",
        job(id=ASCII_2048 + "a", quantity=1),
        "id is 2049 bytes in UTF-8; the limit is 2048",
    ),
    _invalid(
        "id 2049 bytes, 1025 characters",
        job(id=MULTIBYTE_2048 + "a", quantity=1),
        "id is 2049 bytes",
    ),
    _invalid("id a lone surrogate", '{"id": "\\ud800", "quantity": 1}', "id is not valid Unicode"),
    _invalid("id near the SQS body limit", job(id="x" * 250_000, quantity=1), "id is 250000 bytes"),
    # --- quantity
    _invalid(
        "quantity true",
        job(id="a", quantity=True),
        "quantity must be a JSON integer, got a boolean",
    ),
    _invalid(
        "quantity false",
        job(id="a", quantity=False),
        "quantity must be a JSON integer, got a boolean",
    ),
    _invalid(
        "quantity 4.0",
        '{"id": "a", "quantity": 4.0}',
        "quantity must be a JSON integer, got a number",
    ),
    _invalid(
        "quantity 1e0",
        '{"id": "a", "quantity": 1e0}',
        "quantity must be a JSON integer, got a number",
    ),
    _invalid(
        "quantity a string",
        job(id="a", quantity="4"),
        "quantity must be a JSON integer, got a string",
    ),
    _invalid("quantity 0", job(id="a", quantity=0), "quantity must be from 1 to 10, got 0"),
    _invalid("quantity 11", job(id="a", quantity=11), "quantity must be from 1 to 10, got 11"),
    _invalid("quantity -1", job(id="a", quantity=-1), "quantity must be from 1 to 10, got -1"),
    _invalid(
        "quantity huge",
        job(id="a", quantity=10**30),
        "quantity must be from 1 to 10, got 10000000000000000000…",
    ),
    _invalid(
        "quantity an object",
        job(id="a", quantity={"n": 4}),
        "quantity must be a JSON integer, got an object",
    ),
    _invalid(
        "quantity 2.5", job(id="a", quantity=2.5), "quantity must be a JSON integer, got a number"
    ),
    _invalid("id a float", job(id=1.5, quantity=1), "id must be a string, got a number"),
    _invalid(
        "quantity null", job(id="a", quantity=None), "quantity must be a JSON integer, got null"
    ),
    _invalid(
        "quantity an array",
        job(id="a", quantity=[4]),
        "quantity must be a JSON integer, got an array",
    ),
    _invalid(
        "quantity NaN",
        '{"id": "a", "quantity": NaN}',
        "quantity must be a JSON integer, got a number",
    ),
    _invalid(
        "quantity Infinity",
        '{"id": "a", "quantity": Infinity}',
        "quantity must be a JSON integer, got a number",
    ),
    # --- accepted edges
    _accepted("id exactly 2048 ASCII bytes", job(id=ASCII_2048, quantity=1), ASCII_2048),
    _accepted(
        "id 2048 bytes of 2-byte characters", job(id=MULTIBYTE_2048, quantity=1), MULTIBYTE_2048
    ),
    _accepted("id 2048 bytes of 4-byte characters", job(id=EMOJI_2048, quantity=1), EMOJI_2048),
    _accepted("multibyte id kept unchanged", job(id="заказ-№1", quantity=3), "заказ-№1"),
    _accepted("composed é", job(id="caf\u00e9", quantity=1), "caf\u00e9"),
    _accepted("decomposed é is another order", job(id="cafe\u0301", quantity=1), "cafe\u0301"),
    _accepted("id with spaces kept", job(id="  spaced id  ", quantity=1), "  spaced id  "),
    _accepted("body padded to near 256 KiB", PADDED_BODY, "near-limit-padded"),
]

INVALID = [case for case in CASES if case.expected == "invalid"]
ACCEPTED = [case for case in CASES if case.expected == "accepted"]

# The same order written differently: each is a duplicate of the first, never a conflict.
SAME_ORDER_SPELLINGS = [
    '{"id": "spelling-order", "quantity": 4}',
    '{"quantity": 4, "id": "spelling-order"}',
    '{"id":"spelling-order","quantity":4}',
    '\n  { "quantity" : 4 ,\n "id" : "spelling-order" }\n',
    '{"id": "spelling\\u002dorder", "quantity": 4}',
]
