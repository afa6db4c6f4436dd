"""``AWS::Lambda::Function``: a function the account runs.

Created through the Lambda API like any other function (the account runs whatever the
API holds: :mod:`localcloud.patches.lambda_`). Its code is the package ``sam deploy``
uploaded to S3, or, for a from-source deploy, a package that says "run me from source"
(:func:`localcloud.lambda_runtime.source_package`), which the SAM transform step leaves as
an S3 location in :data:`~localcloud.cfn.transform.LOCAL_PATHS`.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.resources.base import Provider, physical_name, read_s3_object, refuse_unknown
from localcloud.cfn.transform import LOCAL_PATHS, local_path
from localcloud.lambda_runtime import lookup, source_package
from localcloud.lambda_runtime.environment import reserved_in

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


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
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = physical_name(stack, logical_id, 64)
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
        log_group = str(logging_config.get("LogGroup") or f"/aws/lambda/{name}")
        logs = stack.client("logs")
        if not logs.describe_log_groups(logGroupNamePrefix=log_group).get("logGroups"):
            logs.create_log_group(logGroupName=log_group)
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
        arn = stack.client("lambda").create_function(**kwargs)["FunctionArn"]
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn
        stack.functions[logical_id] = lookup(name)

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("lambda").delete_function(FunctionName=stack.refs[logical_id])


def _package(stack: Deployment, logical_id: str, code: Mapping[str, Any]) -> bytes:
    """The deployment package ``Code`` names: a source folder (a from-source deploy), or
    the object ``sam deploy`` uploaded.

    Raises:
        UnsupportedTemplate: the folder or the object is missing, or is not a zip archive.
    """
    where = f"{logical_id}.Code"
    refuse_unknown(code, {"S3Bucket", "S3Key", "S3ObjectVersion"}, where, "Code")
    if code.get("S3Bucket") == LOCAL_PATHS:
        folder = local_path(str(code["S3Key"]))
        if not folder.is_dir():
            raise UnsupportedTemplate(f"{logical_id}.CodeUri", f"{folder} is not a directory")
        return source_package(folder)
    package = read_s3_object(
        stack, where, code["S3Bucket"], code["S3Key"], code.get("S3ObjectVersion")
    )
    if not zipfile.is_zipfile(io.BytesIO(package)):
        raise UnsupportedTemplate(where, "the S3 object is not a zip archive")
    return package


PROVIDER: Final = FunctionProvider()
