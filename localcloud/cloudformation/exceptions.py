"""The errors of the CloudFormation engine."""

from __future__ import annotations


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
