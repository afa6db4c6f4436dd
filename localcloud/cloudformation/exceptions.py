"""The errors of the CloudFormation engine."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError


class UnsupportedTemplate(Exception):
    """The local cloud cannot honour part of the template; the message names where."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where


class NotCreated(KeyError):
    """A ``Ref`` or ``GetAtt`` of a resource whose ``Condition`` is false: it is not part
    of the stack, and CloudFormation refuses such a reference outside an ``Fn::If`` on
    that condition. A ``KeyError``, so resolvers raise it where they raise for unknown
    names; :func:`resolve` reports its reason."""

    def __init__(self, logical_id: str, condition: str) -> None:
        super().__init__(logical_id)
        self.reason = (
            f"{logical_id} is not created (its Condition {condition} is false with these "
            f"parameters); reference it only inside Fn::If [{condition}, ...]"
        )


class AlreadyExists(Exception):  # noqa: N818 - CloudFormation's handler error code
    """A resource's explicit physical name (``TableName``, ``FunctionName`` …) is taken by
    a resource outside the stack: CloudFormation's ``AlreadyExists`` handler error, which
    fails the resource and rolls the stack back. ``where`` is ``<LogicalId>.<Property>``."""

    def __init__(self, resource_type: str, name: str, where: str) -> None:
        super().__init__(
            f"Resource of type '{resource_type}' with identifier '{name}' already exists. "
            "(HandlerErrorCode: AlreadyExists)"
        )
        self.where = where


class HandlerFailed(Exception):  # noqa: N818 - CloudFormation's "Resource handler" failure
    """A resource's service refused the request that creates or updates it: the reason
    CloudFormation gives (``Resource handler returned message: "<the service's message>
    (Service: Lambda, Status Code: 400, Request ID: <id>)" (RequestToken: <token>,
    HandlerErrorCode: InvalidRequest)``), which fails the resource and rolls the stack
    back. ``where`` is ``<LogicalId>``."""

    HANDLER_ERROR_CODES: Final = {
        "ValidationException": "InvalidRequest",
        "InvalidParameterValueException": "InvalidRequest",
        "InvalidRequestException": "InvalidRequest",
        "ResourceNotFoundException": "NotFound",
        "ResourceConflictException": "ResourceConflict",
        "TooManyRequestsException": "Throttling",
        "ServiceQuotaExceededException": "ServiceLimitExceeded",
    }
    """A service's error code → the handler error code CloudFormation reports
    (CloudFormation CLI, "Handler error codes"); any other is ``GeneralServiceException``."""

    def __init__(
        self,
        where: str,
        service: str,
        code: str,
        message: str,
        *,
        status: int = 400,
        request_id: str | None = None,
    ) -> None:
        handler_code = self.HANDLER_ERROR_CODES.get(code, "GeneralServiceException")
        super().__init__(
            f'Resource handler returned message: "{message} (Service: {service}, Status '
            f'Code: {status}, Request ID: {request_id or uuid.uuid4()})" (RequestToken: '
            f"{uuid.uuid4()}, HandlerErrorCode: {handler_code})"
        )
        self.where = where
        self.code = code

    @classmethod
    def of(cls, where: str, service: str, error: ClientError) -> HandlerFailed:
        """The failure a botocore ``ClientError`` of ``service``'s API stands for."""
        response: Mapping[str, Any] = error.response
        details: Mapping[str, Any] = response.get("Error", {})
        metadata: Mapping[str, Any] = response.get("ResponseMetadata", {})
        return cls(
            where,
            service,
            str(details.get("Code", "InternalFailure")),
            str(details.get("Message", "")),
            status=int(metadata.get("HTTPStatusCode", 400)),
            request_id=metadata.get("RequestId"),
        )
