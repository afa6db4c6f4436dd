"""moto's Lambda versions and aliases, run as Lambda runs them.

- ``LambdaBackend.publish_version`` (``PublishVersion``, and ``Publish`` on create or
  update): a published version runs the package and configuration it was published with,
  whatever ``$LATEST`` becomes (moto keeps a shallow copy; the local cloud registers a
  function of its own for it: :func:`~localcloud.services.lambda_.runtime.register_version`).
- ``create_alias``, ``update_alias`` and ``delete_alias``: an invocation through an alias
  (its ARN, ``name:alias``, Invoke's ``Qualifier``), and an event source mapping on one,
  runs the version it points to now; weighted routing (``RoutingConfig``) is refused.
"""

from __future__ import annotations

from typing import Any, Final

from moto.awslambda.models import LambdaBackend, LambdaFunction

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_.patches import refuse, runnable_of
from localcloud.services.lambda_.runtime import lookup, register_version, set_alias


def _publish_version(original: Method) -> Method:
    def publish_version(
        self: LambdaBackend, function_name: str, description: str = ""
    ) -> LambdaFunction | None:
        published: LambdaFunction | None = original(self, function_name, description)
        if published is None:
            return None
        try:
            lookup(published.function_name, str(published.version))
        except KeyError:  # new: it runs the package and configuration it has now
            try:
                log_group = lookup(published.function_name).log_group
            except KeyError:
                log_group = None
            register_version(runnable_of(self, published, log_group, str(published.version)))
        return published

    return publish_version


def _alias(original: Method) -> Method:
    def put_alias(
        self: LambdaBackend,
        name: str,
        function_name: str,
        function_version: str,
        description: str,
        routing_config: Any,
    ) -> Any:
        if routing_config and (routing_config.get("AdditionalVersionWeights") or {}):
            raise refuse(
                "the local cloud does not split an alias's traffic between versions "
                "(RoutingConfig.AdditionalVersionWeights); point the alias at one version"
            )
        alias = original(self, name, function_name, function_version, description, routing_config)
        set_alias(
            alias.arn.split(":function:")[1].split(":")[0], alias.name, str(alias.function_version)
        )
        return alias

    return put_alias


def _delete_alias(original: Method) -> Method:
    def delete_alias(self: LambdaBackend, name: str, function_name: str) -> None:
        original(self, name, function_name)
        set_alias(function_name.split(":function:")[-1].split(":")[0], name, None)

    return delete_alias


PATCHES: Final = (
    Patch(
        LambdaBackend,
        "publish_version",
        ("self", "function_name", "description"),
        _publish_version,
        "a published version runs the code and configuration it was published with",
    ),
    *(
        Patch(
            LambdaBackend,
            method,
            ("self", "name", "function_name", "function_version", "description", "routing_config"),
            _alias,
            "an invocation through an alias runs the version it points to",
        )
        for method in ("create_alias", "update_alias")
    ),
    Patch(
        LambdaBackend,
        "delete_alias",
        ("self", "name", "function_name"),
        _delete_alias,
        "a deleted alias runs nothing",
    ),
)
