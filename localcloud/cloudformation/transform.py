"""The SAM transform, applied first, as CloudFormation applies it for ``sam deploy``.

``samtranslator`` turns ``AWS::Serverless::*`` resources into plain CloudFormation exactly
as AWS does (``Globals`` merged, events into event source mappings, rules and
permissions, roles and policy templates into ``AWS::IAM::Role``), so the deployer only
ever sees CloudFormation types. The transform wants S3 locations for ``CodeUri`` and
``DefinitionUri``; a from-source deploy has folders and files instead, so they are carried
through it the way SAM CLI carries them (its ``SamTranslatorWrapper`` and local-URI
plugin): a local path becomes the S3 location ``s3://`` :data:`LOCAL_PATHS` ``/<absolute
path>`` before the transform (resolved against the template's folder, as SAM resolves
it; a function without ``CodeUri`` runs from that folder), and the providers read it back
from ``Code`` and ``DefinitionS3Location``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import boto3
from moto.iam.aws_managed_policies import aws_managed_policies_data
from samtranslator.model.exceptions import InvalidDocumentException  # type: ignore[import-untyped]
from samtranslator.parser.parser import Parser  # type: ignore[import-untyped]
from samtranslator.public.plugins import BasePlugin  # type: ignore[import-untyped]
from samtranslator.translator.translator import Translator  # type: ignore[import-untyped]

from localcloud.cloudformation.exceptions import UnsupportedTemplate

# Without a feature toggle configuration (AWS's own is not public) every toggle is off, as
# the transform means it to be, but each lookup warns once per resource (an HTTP API's
# ``normalized_open_api_version``): the deploy's output would repeat it for every API.
logging.getLogger("samtranslator.feature_toggle.feature_toggle").setLevel(logging.ERROR)

SAM_TRANSFORM: Final = "AWS::Serverless-2016-10-31"
LOCAL_PATHS: Final = "localcloud-local-paths"
"""The bucket name that stands for "a path on this machine" in an S3 location."""
_LOCAL_PROPERTIES: Final = {
    "AWS::Serverless::Function": "CodeUri",
    "AWS::Serverless::StateMachine": "DefinitionUri",
    "AWS::Serverless::LayerVersion": "ContentUri",
    "AWS::Serverless::Api": "DefinitionUri",
    "AWS::Serverless::HttpApi": "DefinitionUri",
}


EMULATED_EVENTS: Final = {
    "AWS::Serverless::Function": frozenset(
        {
            "SQS",
            "Kinesis",
            "DynamoDB",
            "SNS",
            "S3",
            "EventBridgeRule",
            "CloudWatchEvent",
            "Schedule",
            "ScheduleV2",
            "Api",
            "HttpApi",
        }
    ),
    "AWS::Serverless::StateMachine": frozenset(
        {"EventBridgeRule", "CloudWatchEvent", "Schedule", "ScheduleV2", "Api"}
    ),
}
"""The SAM event source types whose events reach a function (or state machine) locally;
every other type SAM offers (``CloudWatchLogs``, ``Cognito``, ``IoTRule``,
``AlexaSkill``, ``MQ``, ``MSK``, ``SelfManagedKafka``, ``DocumentDB`` …) is refused by
name at deploy rather than deployed silent."""


def refuse_unemulated_events(body: Mapping[str, Any]) -> None:
    """Refuse a template whose SAM resource has an event type :data:`EMULATED_EVENTS`
    does not list.

    Raises:
        UnsupportedTemplate: naming the resource, the event and its type.
    """
    resources = body.get("Resources")
    for logical_id, resource in (resources if isinstance(resources, Mapping) else {}).items():
        if not isinstance(resource, Mapping):
            continue
        emulated = EMULATED_EVENTS.get(str(resource.get("Type")))
        properties = resource.get("Properties")
        events = properties.get("Events") if isinstance(properties, Mapping) else None
        if emulated is None or not isinstance(events, Mapping):
            continue
        for name, event in events.items():
            kind = event.get("Type") if isinstance(event, Mapping) else None
            if isinstance(kind, str) and kind not in emulated:
                raise UnsupportedTemplate(
                    f"{logical_id}.Events.{name}",
                    f"Type {kind} is not emulated locally; the local cloud delivers "
                    f"{', '.join(sorted(emulated))} events (docs/local-cloud.md)",
                )


def local_path(key: str) -> Path:
    """The path a :data:`LOCAL_PATHS` location's key stands for (S3 keys drop the root)."""
    return Path("/") / key


def declares_transform(body: Mapping[str, Any]) -> bool:
    """Whether a template asks for the SAM transform."""
    transforms = body.get("Transform", [])
    return SAM_TRANSFORM in ([transforms] if isinstance(transforms, str) else list(transforms))


class _LocalPaths(BasePlugin):  # type: ignore[misc]
    """Local ``CodeUri``/``DefinitionUri`` paths as :data:`LOCAL_PATHS` S3 locations."""

    def __init__(self, folder: Path) -> None:
        super().__init__(_LocalPaths.__name__)
        self.folder = folder

    def on_before_transform_resource(
        self, logical_id: str, resource_type: str, resource_properties: dict[str, Any]
    ) -> None:
        key = _LOCAL_PROPERTIES.get(resource_type)
        if key is None:
            return
        value = resource_properties.get(key)
        if value is None and key == "CodeUri" and "InlineCode" not in resource_properties:
            value = "."  # as SAM CLI's SupportLocalUriPlugin: no CodeUri is the template's folder
        if isinstance(value, str) and not value.startswith("s3://"):
            path = (self.folder / value).resolve()
            resource_properties[key] = f"s3://{LOCAL_PATHS}/{path}"


def transform(
    body: Mapping[str, Any],
    parameters: Mapping[str, str],
    *,
    folder: Path,
    region: str,
    managed_policies: Callable[[], Mapping[str, str]] = dict,
) -> dict[str, Any]:
    """The template as CloudFormation deploys it after the SAM transform.

    Args:
        body: the template as written.
        parameters: the resolved parameter values.
        folder: the template's folder (local paths are relative to it).
        region: the region the transform writes into ARNs.
        managed_policies: the AWS managed policies by name (asked only when a function
            names one in ``Policies``).

    Raises:
        UnsupportedTemplate: the transform refused the template, with its reason.
    """
    refuse_unemulated_events(body)
    document = json.loads(json.dumps(body))
    # The region reaches the transform through a session, as SAM CLI passes it (never
    # through the process environment, which functions running meanwhile share).
    session = boto3.session.Session(region_name=region)
    translator = Translator(None, Parser(), plugins=[_LocalPaths(folder)], boto_session=session)
    try:
        translated: dict[str, Any] = translator.translate(
            document, dict(parameters), get_managed_policy_map=lambda: dict(managed_policies())
        )
    except InvalidDocumentException as exc:
        causes = " ".join(str(cause) for cause in exc.causes)
        raise UnsupportedTemplate(f"Transform {SAM_TRANSFORM}", causes or str(exc)) from exc
    except Exception as exc:  # noqa: BLE001 - samtranslator raises many classes
        raise UnsupportedTemplate(f"Transform {SAM_TRANSFORM}", f"failed with: {exc}") from exc
    finally:
        # The transform times itself into metrics with a publisher that drops them; left
        # unpublished, each warns "There are unpublished metrics" on stderr at exit.
        translator.metrics.publish()
    return translated


@functools.cache
def aws_managed_documents() -> dict[str, dict[str, Any]]:
    """moto's copy of AWS's managed policies, by policy name."""
    documents: dict[str, dict[str, Any]] = json.loads(aws_managed_policies_data)
    return documents


def aws_managed_policy_arns() -> dict[str, str]:
    """Every AWS managed policy's ARN by name, as SAM's transform looks a function's
    ``Policies: [Name]`` up (``get_managed_policy_map``)."""
    return {
        name: f"arn:aws:iam::aws:policy{document.get('Path', '/')}{name}"
        for name, document in aws_managed_documents().items()
    }
