"""``GetFunction``'s ``Code.Location``: a link that downloads the function's package.

On AWS, ``Code.Location`` is a presigned S3 URL, valid for 10 minutes, that ``curl`` or a
browser downloads the deployment package from (Lambda API reference, GetFunction,
``FunctionCodeLocation``). moto answers a real S3 host
(``https://awslambda-<region>-tasks.s3.<region>.amazonaws.com/…``) that holds nothing, so a
learner cannot download the worker a lab provides. The patch answers a link to the local
cloud's live view, ``<endpoint>/_localcloud/code/<function>/<sha256>.zip``, which the view
serves unsigned (``GET`` only, as the rest of the view); the digest is of the package the
function runs now, so a link to a replaced package answers 404, as an expired one does.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final
from urllib.parse import quote

from moto.awslambda.models import LambdaFunction
from moto.awslambda.utils import get_backend
from moto.core.exceptions import JsonRESTError

from localcloud.patches.registry import Method, Patch
from localcloud.server.view import PATH as VIEW_PATH
from localcloud.services.lambda_.runtime import platform

CODE_PATH: Final = f"{VIEW_PATH}/code"
"""Where the view serves packages: ``CODE_PATH/<function>/<sha256 hex>.zip``."""


def digest(package: bytes) -> str:
    """The package's SHA-256, hexadecimal (the link's last part)."""
    return hashlib.sha256(package).hexdigest()


def package(account_id: str, region: str, name: str, wanted: str) -> bytes | None:
    """The package of function ``name`` in ``account_id``'s ``region``, if its SHA-256
    (hexadecimal) is ``wanted``; ``None`` for an unknown function or another package."""
    try:
        # the backend moto's API uses (its Docker-less one, with the local cloud's config)
        function = get_backend(account_id, region).get_function(name)
    except JsonRESTError:  # moto's UnknownFunctionException
        return None
    code: bytes = getattr(function, "code_bytes", b"") or b""
    return code if code and digest(code) == wanted else None


def _located(original: Method) -> Method:
    def get_code(self: LambdaFunction) -> dict[str, Any]:
        answer: dict[str, Any] = original(self)
        endpoint = platform().environment.get("AWS_ENDPOINT_URL")
        code = answer.get("Code", {})
        if endpoint and "Location" in code and self.code_bytes:
            name = quote(self.function_name, safe="")
            code["Location"] = f"{endpoint}{CODE_PATH}/{name}/{digest(self.code_bytes)}.zip"
        return answer

    return get_code


PATCHES: Final = (
    Patch(
        LambdaFunction,
        "get_code",
        ("self",),
        _located,
        "Code.Location must download the package (moto names a real S3 host)",
    ),
)
