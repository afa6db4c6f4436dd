"""moto's event source mapping API, answering as Lambda does.

- ``LambdaBackend.create_event_source_mapping``: a batch size over 10 needs a batching
  window; a second mapping of the same event source and function is refused with 409
  ``ResourceConflictException`` naming the existing mapping's UUID (moto accepts it); moto's
  own SQS trigger (one record per call, partial batch responses ignored) never runs: the
  account polls every mapping (:mod:`.event_source_mappings`).
- ``update_event_source_mapping`` and ``delete_event_source_mapping``: an unknown UUID is
  404 ``ResourceNotFoundException`` (moto answers a bare ``404 {}`` that the AWS CLI prints
  as success); a deleted mapping stops polling.
- a mapping to an alias keeps the alias ARN as its ``FunctionArn`` (moto stores the
  version the alias points to at creation), so each batch runs the alias's version.
- ``list_event_source_mappings``: ``--function-name`` takes a name, a partial ARN or an
  ARN, as on AWS (moto compares what the mapping stored, an ARN).

Sources: the Lambda API reference, CreateEventSourceMapping, UpdateEventSourceMapping and
DeleteEventSourceMapping, Errors; the messages are the ones Lambda answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from moto.awslambda.exceptions import GenericResourcNotFound
from moto.awslambda.models import EventSourceMapping, LambdaBackend
from moto.core.exceptions import JsonRESTError
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


def _check_batching(spec: Mapping[str, Any], current: Any = None) -> None:
    batch_size = spec.get("BatchSize", getattr(current, "batch_size", None))
    window = spec.get("MaximumBatchingWindowInSeconds", getattr(current, "max_batch_window", None))
    if batch_size is not None and int(batch_size) > 10 and not (window and int(window) >= 1):
        raise JsonRESTError(
            "InvalidParameterValueException",
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is "
            "greater than 10",
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
        _check_batching(spec)
        existing = _existing(self, spec)
        if existing is not None:
            raise MappingExists(existing, function_name_of(existing.function_arn))
        esm = original(self, spec)
        for queue in sqs_backends[self.account_id][self.region_name].queues.values():
            if queue.queue_arn == esm.event_source_arn:
                # moto would invoke the function itself on every SendMessage, one record
                # at a time, and delete the message whatever the response: we poll.
                queue.lambda_event_source_mappings.pop(esm.function_arn, None)
        alias = _alias_in(str(spec.get("FunctionName", "")))
        if alias is not None:  # moto stored the version the alias points to now
            esm.function_arn = f"{esm.function_arn.rsplit(':', 1)[0]}:{alias}"
        mappings.created(esm.get_configuration())
        return esm

    return create_event_source_mapping


def _known(backend: LambdaBackend, uuid: str) -> EventSourceMapping:
    esm = backend.get_event_source_mapping(uuid)
    if esm is None:
        raise GenericResourcNotFound()
    return esm


def _update_mapping(original: Method) -> Method:
    def update_event_source_mapping(self: LambdaBackend, uuid: str, spec: dict[str, Any]) -> Any:
        _check_batching(spec, _known(self, uuid))
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
        LambdaBackend,
        "create_event_source_mapping",
        ("self", "spec"),
        _create_mapping,
        "one mapping per source and function, as on AWS; the local cloud polls, moto's "
        "own trigger must not run",
    ),
    Patch(
        LambdaBackend,
        "update_event_source_mapping",
        ("self", "uuid", "spec"),
        _update_mapping,
        "an unknown UUID is ResourceNotFoundException; a batch size over 10 needs a window",
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
