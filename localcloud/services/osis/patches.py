"""moto's OpenSearch Ingestion, answering a pipeline configuration that does not parse as
the service does.

moto 5.2.5 parses ``PipelineConfigurationBody`` (``CreatePipeline``, ``UpdatePipeline``)
with ``yaml.safe_load`` and lets its ``YAMLError`` out: the server answered 500 with a
traceback, botocore retried four times. After the patch: ``400 ValidationException``
naming what is wrong (the service's code for a request it refuses: "ValidationException"
in the CreatePipeline API reference,
https://docs.aws.amazon.com/opensearch-service/latest/APIReference/API_osis_CreatePipeline.html),
an alias bomb included (:mod:`localcloud.patches.yaml_documents`).
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from moto.osis.exceptions import ValidationException
from moto.osis.models import OpenSearchIngestionBackend

from localcloud.patches.registry import Method, Patch

__all__ = ["PATCHES"]


def _refusing_bad_yaml(original: Method) -> Method:
    def call(self: OpenSearchIngestionBackend, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            raise ValidationException(
                f"The pipeline configuration is not valid YAML: {problem}"
            ) from exc

    return call


PATCHES: Final = tuple(
    Patch(
        OpenSearchIngestionBackend,
        name,
        ("self", "pipeline_name"),
        _refusing_bad_yaml,
        f"{action} of a configuration that is not YAML answers 400 ValidationException",
    )
    for name, action in (
        ("create_pipeline", "CreatePipeline"),
        ("update_pipeline", "UpdatePipeline"),
    )
)
