"""Lambda's CloudFormation types, one provider each, all made through the Lambda API like
any other (the account runs whatever the API holds: :mod:`.patches`):

- ``AWS::Lambda::Function``: a function the account runs. Its code is the package
  ``sam deploy`` uploaded to S3, or, for a from-source deploy, a package that says "run
  me from source" (:func:`.runtime.packages.source_package`), which the SAM transform
  step leaves as an S3 location in :data:`~localcloud.cloudformation.transform.LOCAL_PATHS`;
- ``AWS::Lambda::LayerVersion`` (SAM's ``AWS::Serverless::LayerVersion``): a layer the
  functions that list it import from;
- ``AWS::Lambda::Version`` and ``AWS::Lambda::Alias`` (SAM's ``AutoPublishAlias``): a
  published version runs the code it was published with; an alias runs its version;
- ``AWS::Lambda::EventSourceMapping``: a mapping the account polls, kept by an update
  (:mod:`.mapping_providers`);
- ``AWS::Lambda::EventInvokeConfig`` (SAM's ``EventInvokeConfig``): the retries, the
  maximum event age and the destinations of asynchronous invocations
  (:mod:`.asynchronous`); a function's ``DeadLetterConfig`` is its dead-letter queue;
- ``AWS::Lambda::Permission``: a statement of a function's resource policy (the SAM
  transform makes one per event source that invokes a function asynchronously, such as a
  ``Schedule``), recorded with ``AddPermission``; IAM is not enforced locally.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import HandlerFailed, UnsupportedTemplate
from localcloud.cloudformation.provider import (
    Deployment,
    Provider,
    physical_name,
    read_s3_object,
    refuse_unknown,
)
from localcloud.cloudformation.transform import LOCAL_PATHS, local_path
from localcloud.services.lambda_ import asynchronous
from localcloud.services.lambda_.limits import check_configuration, check_runtime
from localcloud.services.lambda_.mapping_providers import EventSourceMappingProvider
from localcloud.services.lambda_.runtime.environment import reserved_in
from localcloud.services.lambda_.runtime.packages import source_package


class FunctionProvider(Provider):
    TYPE = "AWS::Lambda::Function"
    PROPERTIES = frozenset(
        {
            "Code",
            "Handler",
            "Runtime",
            "Role",
            "Timeout",
            "MemorySize",
            "Architectures",
            "TracingConfig",
            "Environment",
            "LoggingConfig",
            "Description",
            "Tags",
            "ReservedConcurrentExecutions",
            "FunctionName",
            "Layers",
            "DeadLetterConfig",
            "EphemeralStorage",
        }
    )
    NAME_PROPERTY = "FunctionName"
    NAME_LIMIT = 64

    def exists(self, stack: Deployment, name: str) -> bool:
        try:
            stack.client("lambda").get_function(FunctionName=name)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ResourceNotFoundException":
                return False
            raise
        return True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = self.name(stack, logical_id, properties)
        refused = check_runtime(properties.get("Runtime"), properties.get("PackageType"))
        if refused is not None:
            raise UnsupportedTemplate(f"{logical_id}.Runtime", refused)
        variables = {
            k: str(v) for k, v in properties.get("Environment", {}).get("Variables", {}).items()
        }
        reserved = reserved_in(variables)
        if reserved:
            raise UnsupportedTemplate(
                f"{logical_id}.Environment.Variables.{reserved[0]}",
                f"{', '.join(reserved)} reserved by Lambda: the deploy would fail",
            )
        logging_config = dict(properties.get("LoggingConfig", {}))
        refuse_unknown(
            logging_config,
            {"LogGroup", "LogFormat"},
            f"{logical_id}.LoggingConfig",
            "LoggingConfig",
        )
        if logging_config.get("LogFormat", "Text") != "Text":
            raise UnsupportedTemplate(
                f"{logical_id}.LoggingConfig.LogFormat", "only Text is emulated locally"
            )
        # Lambda creates the log group at the first invocation when the role allows
        # logs:CreateLogGroup (:mod:`.permissions`); the deploy creates none, so a
        # function never invoked has no log group, as on AWS.
        log_group = str(logging_config.get("LogGroup") or f"/aws/lambda/{name}")
        kwargs: dict[str, Any] = {
            "FunctionName": name,
            "Runtime": properties["Runtime"],
            "Role": properties["Role"],
            "Handler": properties["Handler"],
            "Code": {"ZipFile": _package(stack, logical_id, properties["Code"])},
            "Timeout": int(properties.get("Timeout", 3)),
            "MemorySize": int(properties.get("MemorySize", 128)),
            "Architectures": list(properties.get("Architectures", ["x86_64"])),
            "Environment": {"Variables": variables},
            "LoggingConfig": {"LogFormat": "Text", "LogGroup": log_group},
        }
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        if properties.get("Layers"):
            kwargs["Layers"] = [str(layer) for layer in properties["Layers"]]
        if "EphemeralStorage" in properties:
            storage = dict(properties["EphemeralStorage"] or {})
            refuse_unknown(storage, {"Size"}, f"{logical_id}.EphemeralStorage", "EphemeralStorage")
            kwargs["EphemeralStorage"] = {"Size": int(storage["Size"])}
        past_quota = check_configuration(kwargs)
        if past_quota is not None:  # Lambda's own refusal (botocore would not send some)
            raise HandlerFailed(logical_id, "Lambda", *past_quota)
        try:
            arn = stack.client("lambda").create_function(**kwargs)["FunctionArn"]
        except ClientError as error:  # Lambda refused it: the stack is rolled back
            raise HandlerFailed.of(logical_id, "Lambda", error) from error
        if "ReservedConcurrentExecutions" in properties:
            stack.client("lambda").put_function_concurrency(
                FunctionName=name,
                ReservedConcurrentExecutions=int(properties["ReservedConcurrentExecutions"]),
            )
        dead_letter = dict(properties.get("DeadLetterConfig") or {})
        refuse_unknown(
            dead_letter, {"TargetArn"}, f"{logical_id}.DeadLetterConfig", "DeadLetterConfig"
        )
        asynchronous.set_dead_letter(name, str(dead_letter.get("TargetArn") or "") or None)
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn

    def delete(self, stack: Deployment, logical_id: str) -> None:
        asynchronous.set_dead_letter(stack.refs[logical_id], None)
        stack.client("lambda").delete_function(FunctionName=stack.refs[logical_id])


INLINE_FILE: Final = "index.py"
"""Where CloudFormation writes a Python function's inline ``Code.ZipFile`` (SAM's
``InlineCode``): the handler is ``index.<function>`` (AWS::Lambda::Function Code,
"ZipFile": "the source code is written to a file named index")."""


def inline_package(source: str) -> bytes:
    """A deployment package holding ``source`` as :data:`INLINE_FILE`."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        info = zipfile.ZipInfo(INLINE_FILE)
        info.external_attr = 0o644 << 16
        zipped.writestr(info, source)
    return archive.getvalue()


def _package(
    stack: Deployment, logical_id: str, code: Mapping[str, Any], property_name: str = "Code"
) -> bytes:
    """The deployment package ``Code`` names: inline source (``ZipFile``), a source folder
    (a from-source deploy), or the object ``sam deploy`` uploaded.

    Raises:
        UnsupportedTemplate: the folder or the object is missing, or is not a zip archive.
    """
    where = f"{logical_id}.{property_name}"
    inline = {"ZipFile"} if property_name == "Code" else set()
    refuse_unknown(code, {"S3Bucket", "S3Key", "S3ObjectVersion", *inline}, where, property_name)
    if "ZipFile" in code:
        return inline_package(str(code["ZipFile"]))
    if code.get("S3Bucket") == LOCAL_PATHS:
        folder = local_path(str(code["S3Key"]))
        if not folder.is_dir():
            written = "CodeUri" if property_name == "Code" else "ContentUri"
            raise UnsupportedTemplate(f"{logical_id}.{written}", f"{folder} is not a directory")
        return source_package(folder)
    package = read_s3_object(
        stack, where, code["S3Bucket"], code["S3Key"], code.get("S3ObjectVersion")
    )
    if not zipfile.is_zipfile(io.BytesIO(package)):
        raise UnsupportedTemplate(where, "the S3 object is not a zip archive")
    return package


class EventInvokeConfigProvider(Provider):
    TYPE = "AWS::Lambda::EventInvokeConfig"
    PROPERTIES = frozenset(
        {
            "FunctionName",
            "Qualifier",
            "MaximumRetryAttempts",
            "MaximumEventAgeInSeconds",
            "DestinationConfig",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kwargs: dict[str, Any] = {"FunctionName": str(properties["FunctionName"])}
        for key in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds"):
            if key in properties:
                kwargs[key] = int(properties[key])
        destinations = dict(properties.get("DestinationConfig") or {})
        refuse_unknown(
            destinations,
            {"OnSuccess", "OnFailure"},
            f"{logical_id}.DestinationConfig",
            "DestinationConfig",
        )
        if destinations:
            kwargs["DestinationConfig"] = {
                key: {"Destination": str(value["Destination"])}
                for key, value in destinations.items()
            }
        stack.client("lambda").put_function_event_invoke_config(**kwargs)
        stack.refs[logical_id] = str(properties["FunctionName"])

    def delete(self, stack: Deployment, logical_id: str) -> None:
        try:
            stack.client("lambda").delete_function_event_invoke_config(
                FunctionName=stack.refs[logical_id]
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise


class PermissionProvider(Provider):
    TYPE = "AWS::Lambda::Permission"
    PROPERTIES = frozenset({"Action", "FunctionName", "Principal", "SourceArn", "SourceAccount"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        statement = (
            f"{stack.stack_name}-{logical_id}-"
            + hashlib.sha256(f"{stack.stack_name}/{logical_id}".encode()).hexdigest()[:12]
        )
        kwargs = {
            "FunctionName": str(properties["FunctionName"]),
            "StatementId": statement,
            "Action": str(properties["Action"]),
            "Principal": str(properties["Principal"]),
        }
        for key in ("SourceArn", "SourceAccount"):
            if key in properties:
                kwargs[key] = str(properties[key])
        stack.client("lambda").add_permission(**kwargs)
        stack.refs[logical_id] = statement
        stack.attributes[(logical_id, "FunctionName")] = kwargs["FunctionName"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("lambda").remove_permission(
            FunctionName=stack.attributes[(logical_id, "FunctionName")],
            StatementId=stack.refs[logical_id],
        )


class LayerVersionProvider(Provider):
    """``AWS::Lambda::LayerVersion`` (SAM's ``AWS::Serverless::LayerVersion``, whose local
    ``ContentUri`` a from-source deploy runs from its folder): ``PublishLayerVersion`` of
    the package ``Content`` names. A function that lists it in ``Layers`` (at most 5)
    imports its ``python/`` and ``python/lib/python3.x/site-packages`` after its own code;
    its unzipped size counts toward the function's 262,144,000 bytes. ``Ref`` and
    ``LayerVersionArn``: the layer version's ARN."""

    TYPE = "AWS::Lambda::LayerVersion"
    PROPERTIES = frozenset(
        {
            "Content",
            "LayerName",
            "CompatibleRuntimes",
            "CompatibleArchitectures",
            "Description",
            "LicenseInfo",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = str(
            properties.get("LayerName") or physical_name(stack, logical_id, 140, lambda _: False)
        )
        kwargs: dict[str, Any] = {
            "LayerName": name,
            "Content": {"ZipFile": _package(stack, logical_id, properties["Content"], "Content")},
        }
        for key in ("CompatibleRuntimes", "CompatibleArchitectures"):
            if key in properties:
                kwargs[key] = [str(value) for value in properties[key]]
        for key in ("Description", "LicenseInfo"):
            if key in properties:
                kwargs[key] = str(properties[key])
        published = stack.client("lambda").publish_layer_version(**kwargs)
        stack.refs[logical_id] = published["LayerVersionArn"]
        stack.attributes[(logical_id, "LayerVersionArn")] = published["LayerVersionArn"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        layer, _, number = str(stack.refs[logical_id]).rpartition(":")
        stack.client("lambda").delete_layer_version(LayerName=layer, VersionNumber=int(number))


class VersionProvider(Provider):
    """``AWS::Lambda::Version`` (SAM's ``AutoPublishAlias`` makes one): ``PublishVersion``
    of the function's code and configuration as they are now; that version keeps running
    them whatever ``$LATEST`` becomes. ``Ref`` and ``FunctionArn``: the version's ARN;
    ``Version``: its number (CloudFormation's AWS::Lambda::Version return values)."""

    TYPE = "AWS::Lambda::Version"
    PROPERTIES = frozenset({"FunctionName", "Description"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kwargs = {"FunctionName": str(properties["FunctionName"])}
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        published = stack.client("lambda").publish_version(**kwargs)
        stack.refs[logical_id] = published["FunctionArn"]
        stack.attributes[(logical_id, "FunctionArn")] = published["FunctionArn"]
        stack.attributes[(logical_id, "Version")] = published["Version"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        """Delete the version; one gone with its function counts as deleted."""
        try:
            stack.client("lambda").delete_function(FunctionName=stack.refs[logical_id])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise


class AliasProvider(Provider):
    """``AWS::Lambda::Alias``: a name for one version of a function (SAM's
    ``AutoPublishAlias``); an invocation, a Step Functions task or an event source mapping
    through the alias's ARN runs that version. ``Ref`` and ``AliasArn``: the alias's ARN.
    ``RoutingConfig`` (weighted traffic) and ``ProvisionedConcurrencyConfig`` are refused
    by name."""

    TYPE = "AWS::Lambda::Alias"
    PROPERTIES = frozenset({"FunctionName", "FunctionVersion", "Name", "Description"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kwargs = {
            "FunctionName": str(properties["FunctionName"]),
            "FunctionVersion": str(properties["FunctionVersion"]),
            "Name": str(properties["Name"]),
        }
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        arn = stack.client("lambda").create_alias(**kwargs)["AliasArn"]
        stack.refs[logical_id] = arn
        stack.attributes[(logical_id, "AliasArn")] = arn

    def delete(self, stack: Deployment, logical_id: str) -> None:
        arn = str(stack.refs[logical_id])
        function, _, alias = arn.rpartition(":")
        try:
            stack.client("lambda").delete_alias(FunctionName=function, Name=alias)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise


PROVIDERS: Final = (
    LayerVersionProvider(),
    FunctionProvider(),
    VersionProvider(),
    AliasProvider(),
    EventSourceMappingProvider(),
    PermissionProvider(),
    EventInvokeConfigProvider(),
)
