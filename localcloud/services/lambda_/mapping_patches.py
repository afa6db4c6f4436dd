"""moto's event source mapping API, answering as Lambda does.

- ``LambdaBackend.create_event_source_mapping``: an SQS batch size over 10 needs a
  batching window; a second mapping of the same event source and function is refused with
  409 ``ResourceConflictException`` naming the existing mapping's UUID (moto accepts it);
  a stream (Kinesis, DynamoDB) needs a ``StartingPosition`` (moto takes ``TRIM_HORIZON``),
  a queue takes none, and the stream-only settings (``MaximumRetryAttempts``,
  ``MaximumRecordAgeInSeconds``, ``BisectBatchOnFunctionError``,
  ``ParallelizationFactor``, ``DestinationConfig``) are refused on a queue and checked
  against their ranges (:func:`check_settings`); moto's own triggers (SQS: one record
  per call, partial batch responses ignored; Kinesis and DynamoDB: every record at once,
  the DynamoDB stream emptied afterwards) never run: the account polls every mapping
  (:mod:`.event_source_mappings`).
- ``update_event_source_mapping`` and ``delete_event_source_mapping``: an unknown UUID is
  404 ``ResourceNotFoundException`` (moto answers a bare ``404 {}`` that the AWS CLI prints
  as success); a deleted mapping stops polling.
- a mapping to an alias keeps the alias ARN as its ``FunctionArn`` (moto stores the
  version the alias points to at creation), so each batch runs the alias's version.
- ``list_event_source_mappings``: ``--function-name`` takes a name, a partial ARN or an
  ARN, as on AWS (moto compares what the mapping stored, an ARN).
- ``EventSourceMapping.get_configuration``: a mapping's ``StartingPositionTimestamp`` is
  returned (moto leaves it out), so a Kinesis ``AT_TIMESTAMP`` mapping starts there.

Sources: the Lambda API reference, CreateEventSourceMapping, UpdateEventSourceMapping and
DeleteEventSourceMapping, Errors; the messages are the ones Lambda answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from moto.awslambda.exceptions import GenericResourcNotFound
from moto.awslambda.models import EventSourceMapping, LambdaBackend
from moto.core.exceptions import JsonRESTError
from moto.dynamodb.models import dynamodb_backends
from moto.kinesis.models import kinesis_backends
from moto.sqs.models import sqs_backends

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_ import event_source_mappings as mappings


class MappingExists(JsonRESTError):
    """409 ``ResourceConflictException``: the event source already feeds the function.

    Lambda's words: for an SQS queue ``An event source mapping with SQS arn (" <arn> ") and
    function (" <name> ") already exists. Please update or delete the existing mapping with
    UUID <uuid>``; for a stream ``The event source arn (" <arn> ") and function (" <name> ")
    provided mapping already exists. Please update or delete the existing mapping with UUID
    <uuid>``.
    """

    code = 409

    def __init__(self, existing: EventSourceMapping, function_name: str) -> None:
        source = existing.event_source_arn
        if source.startswith("arn:aws:sqs:"):
            what = f'An event source mapping with SQS arn (" {source} ") and function'
        else:
            what = f'The event source arn (" {source} ") and function'
        provided = "" if source.startswith("arn:aws:sqs:") else " provided mapping"
        super().__init__(
            "ResourceConflictException",
            f'{what} (" {function_name} "){provided} already exists. Please update or '
            f"delete the existing mapping with UUID {existing.uuid}",
        )


def function_name_of(reference: str) -> str:
    """The function name in a name, a partial ARN (``123456789012:function:name``) or an
    ARN, with or without a qualifier (``:$LATEST``, an alias, a version), as the Lambda
    API accepts each."""
    if ":function:" in reference:
        return reference.split(":function:", 1)[1].split(":", 1)[0]
    return reference.split(":", 1)[0]


def _alias_in(reference: str) -> str | None:
    """The alias a function reference is qualified with (``name:live``, an alias ARN), if
    any: Lambda keeps it as the mapping's ``FunctionArn`` and invokes whatever version
    the alias points to at each batch."""
    qualifier = reference.split(":function:", 1)[1] if ":function:" in reference else reference
    _, _, qualifier = qualifier.partition(":")
    if not qualifier or qualifier == "$LATEST" or qualifier.isdigit():
        return None
    return qualifier


STREAM_SERVICES: Final = ("kinesis", "dynamodb")
"""The services whose event sources are streams (``StartingPosition`` and the rest)."""
STREAM_ONLY: Final = (
    "StartingPosition",
    "StartingPositionTimestamp",
    "MaximumRetryAttempts",
    "MaximumRecordAgeInSeconds",
    "BisectBatchOnFunctionError",
    "ParallelizationFactor",
    "DestinationConfig",
    "TumblingWindowInSeconds",
)
"""Settings Lambda takes for a stream's mapping only (the API reference marks each
"(Kinesis, DynamoDB Streams …)")."""
RANGES: Final = {
    "BatchSize": (1, 10000),
    "MaximumBatchingWindowInSeconds": (0, 300),
    "MaximumRetryAttempts": (-1, 10000),
    "MaximumRecordAgeInSeconds": (-1, 604800),
    "ParallelizationFactor": (1, 10),
}
"""Each number's range in the Lambda API's model (CreateEventSourceMapping)."""
NOT_EMULATED: Final = ("TumblingWindowInSeconds", "FilterCriteria")
"""Settings that change what a function receives and that the local cloud does not
emulate: refused by name rather than ignored."""


def _invalid(message: str) -> JsonRESTError:
    return JsonRESTError("InvalidParameterValueException", message)


def _out_of_range(name: str, value: Any) -> JsonRESTError | None:
    """The Lambda API's own validation error for a number outside its model's range."""
    low, high = RANGES[name]
    member = name[0].lower() + name[1:]
    if int(value) < low:
        bound = f"greater than or equal to {low}"
    elif int(value) > high:
        bound = f"less than or equal to {high}"
    else:
        return None
    return JsonRESTError(
        "ValidationException",
        f"1 validation error detected: Value '{value}' at '{member}' failed to satisfy "
        f"constraint: Member must have value {bound}",
    )


def _in_use(value: Any) -> bool:
    """Whether a setting asks for something: a window over 0 s, a filter list that is not
    empty (``TumblingWindowInSeconds: 0`` and ``FilterCriteria: {}`` ask for nothing)."""
    if isinstance(value, Mapping):
        return bool(value.get("Filters"))
    return bool(value)


def _source_service(arn: str) -> str:
    parts = arn.split(":")
    return parts[2] if len(parts) > 2 else ""


def check_settings(spec: Mapping[str, Any], source_arn: str, current: Any = None) -> None:
    """Refuse the settings Lambda refuses for a mapping of ``source_arn`` (``current``:
    the mapping being updated, whose settings ``spec`` changes).

    Raises:
        JsonRESTError: ``InvalidParameterValueException`` (a setting the source does not
            take, a missing or unknown starting position, an SQS batch over 10 without a
            window, a destination that is not an SQS queue or SNS topic, a setting the
            local cloud does not emulate) or ``ValidationException`` (a number out of
            its range), each naming the setting.
    """
    service = _source_service(source_arn)
    stream = service in STREAM_SERVICES
    for name, value in spec.items():
        if name in RANGES and value is not None:
            error = _out_of_range(name, value)
            if error is not None:
                raise error
        if name in NOT_EMULATED and _in_use(value):
            raise _invalid(
                f"{name} is not emulated locally: the local cloud delivers every record "
                "(docs/local-cloud.md)"
            )
        if not stream and name in STREAM_ONLY and value is not None:
            raise _invalid(
                f"{name} is not valid for {service.upper() or 'this'} event sources: it "
                "applies to Kinesis and DynamoDB Streams mappings only"
            )
    if stream and current is None:
        position = spec.get("StartingPosition")
        if not position:
            raise _invalid(
                "StartingPosition is required for a Kinesis or DynamoDB Streams event "
                "source: TRIM_HORIZON, LATEST (or AT_TIMESTAMP for Kinesis)"
            )
        allowed = ("TRIM_HORIZON", "LATEST", "AT_TIMESTAMP")
        if position not in allowed or (position == "AT_TIMESTAMP" and service != "kinesis"):
            raise _invalid(f"Unsupported starting position {position} for {service} streams")
        if (position == "AT_TIMESTAMP") != (spec.get("StartingPositionTimestamp") is not None):
            raise _invalid(
                "StartingPositionTimestamp is required with StartingPosition AT_TIMESTAMP, "
                "and only with it"
            )
    age = spec.get("MaximumRecordAgeInSeconds")
    if age is not None and int(age) != -1 and int(age) < 60:
        raise _invalid(
            f"MaximumRecordAgeInSeconds {age} is out of range: -1 (infinite) or 60 to 604800"
        )
    destination = ((spec.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
    if destination and _source_service(str(destination)) not in ("sqs", "sns"):
        raise _invalid(
            f"On-failure destination {destination} is not emulated locally: an SQS queue or "
            "an SNS topic (an S3 bucket or a Kafka topic is not)"
        )
    if service == "sqs":
        batch_size = spec.get("BatchSize", getattr(current, "batch_size", None))
        window = spec.get(
            "MaximumBatchingWindowInSeconds", getattr(current, "max_batch_window", None)
        )
        if batch_size is not None and int(batch_size) > 10 and not (window and int(window) >= 1):
            raise _invalid(
                "Maximum batch window in seconds must be greater than 0 if maximum batch size "
                "is greater than 10"
            )


def _existing(backend: LambdaBackend, spec: Mapping[str, Any]) -> EventSourceMapping | None:
    """The mapping of ``spec``'s event source to the same function (the same qualifier
    too), however the function is named; ``None`` also when the function does not exist
    (moto's create then answers that)."""
    source, reference = spec.get("EventSourceArn"), spec.get("FunctionName")
    if not source or not reference:
        return None
    try:
        function_arn = backend._lambdas.get_function_by_name_or_arn_with_qualifier(
            str(reference)
        ).function_arn
    except JsonRESTError:
        return None
    alias = _alias_in(str(reference))
    if alias is not None:
        function_arn = f"{function_arn.rsplit(':', 1)[0]}:{alias}"
    return next(
        (
            esm
            for esm in backend._event_source_mappings.values()
            if esm.event_source_arn == source and esm.function_arn == function_arn
        ),
        None,
    )


def _create_mapping(original: Method) -> Method:
    def create_event_source_mapping(self: LambdaBackend, spec: dict[str, Any]) -> Any:
        check_settings(spec, str(spec.get("EventSourceArn", "")))
        existing = _existing(self, spec)
        if existing is not None:
            raise MappingExists(existing, function_name_of(existing.function_arn))
        esm = original(self, spec)
        _silence_moto_trigger(self, esm)
        alias = _alias_in(str(spec.get("FunctionName", "")))
        if alias is not None:  # moto stored the version the alias points to now
            esm.function_arn = f"{esm.function_arn.rsplit(':', 1)[0]}:{alias}"
        mappings.created(esm.get_configuration())
        return esm

    return create_event_source_mapping


def _silence_moto_trigger(backend: LambdaBackend, esm: EventSourceMapping) -> None:
    """Take the mapping out of moto's own triggers: moto would invoke the function itself
    on every SendMessage, PutRecord or table write (one record at a time for SQS,
    deleting the message whatever the response; every DynamoDB stream record at once,
    emptying the stream): the account polls instead."""
    account, region = backend.account_id, backend.region_name
    for queue in sqs_backends[account][region].queues.values():
        if queue.queue_arn == esm.event_source_arn:
            queue.lambda_event_source_mappings.pop(esm.function_arn, None)
    for table in dynamodb_backends[account][region].tables.values():
        if esm.event_source_arn.startswith(f"{table.table_arn}/stream/"):
            table.lambda_event_source_mappings.pop(esm.function_arn, None)
    for stream in kinesis_backends[account][region].streams.values():
        if stream.arn == esm.event_source_arn:
            stream.lambda_event_source_mappings.pop(esm.event_source_arn, None)


def _configuration(original: Method) -> Method:
    def get_configuration(self: EventSourceMapping) -> dict[str, Any]:
        """moto's answer, with the ``StartingPositionTimestamp`` it was given (moto keeps
        it and leaves it out; Lambda returns it, and the Kinesis poller starts there)."""
        config: dict[str, Any] = original(self)
        if self.starting_position_timestamp is not None:
            config["StartingPositionTimestamp"] = self.starting_position_timestamp
        return config

    return get_configuration


def _known(backend: LambdaBackend, uuid: str) -> EventSourceMapping:
    esm = backend.get_event_source_mapping(uuid)
    if esm is None:
        raise GenericResourcNotFound()
    return esm


def _update_mapping(original: Method) -> Method:
    def update_event_source_mapping(self: LambdaBackend, uuid: str, spec: dict[str, Any]) -> Any:
        current = _known(self, uuid)
        check_settings(spec, current.event_source_arn, current)
        return original(self, uuid, spec)

    return update_event_source_mapping


def _delete_mapping(original: Method) -> Method:
    def delete_event_source_mapping(self: LambdaBackend, uuid: str) -> Any:
        _known(self, uuid)
        deleted = original(self, uuid)
        mappings.deleted(uuid)
        return deleted

    return delete_event_source_mapping


def _list_mappings(original: Method) -> Method:
    def list_event_source_mappings(
        self: LambdaBackend, event_source_arn: str, function_name: str
    ) -> Any:
        listed = original(self, event_source_arn, None)
        if not function_name:
            return listed
        wanted = function_name_of(function_name)
        return [esm for esm in listed if function_name_of(esm.function_arn) == wanted]

    return list_event_source_mappings


PATCHES: Final = (
    Patch(
        EventSourceMapping,
        "get_configuration",
        ("self",),
        _configuration,
        "a mapping's StartingPositionTimestamp is returned, and read by its poller",
    ),
    Patch(
        LambdaBackend,
        "create_event_source_mapping",
        ("self", "spec"),
        _create_mapping,
        "one mapping per source and function, as on AWS; the settings Lambda refuses are "
        "refused; the local cloud polls, moto's own triggers must not run",
    ),
    Patch(
        LambdaBackend,
        "update_event_source_mapping",
        ("self", "uuid", "spec"),
        _update_mapping,
        "an unknown UUID is ResourceNotFoundException; the settings Lambda refuses are refused",
    ),
    Patch(
        LambdaBackend,
        "list_event_source_mappings",
        ("self", "event_source_arn", "function_name"),
        _list_mappings,
        "--function-name filters by name, partial ARN or ARN (moto compares the ARN only)",
    ),
    Patch(
        LambdaBackend,
        "delete_event_source_mapping",
        ("self", "uuid"),
        _delete_mapping,
        "an unknown UUID is ResourceNotFoundException; a deleted mapping stops polling",
    ),
)
