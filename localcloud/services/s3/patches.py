"""moto's S3, with bucket policies stored and not evaluated, as every IAM policy is
locally.

moto 5 evaluates a bucket policy's statements on object requests and ignores their
``Condition``: the ``Deny s3:*`` when ``aws:SecureTransport`` is false, which SAM CLI's
own managed bucket carries (and many published templates copy), then denies every
upload, though on AWS it denies only plain-HTTP requests and the local endpoint stands
in for AWS's HTTPS one. The local cloud does not enforce IAM (docs/local-cloud.md), so a
bucket's policy is readable (``GetBucketPolicy``) and grants or denies nothing.
"""

from __future__ import annotations

from typing import Any, Final

from moto.iam.access_control import PermissionResult
from moto.s3.models import FakeBucket

from localcloud.patches.registry import Method, Patch


def _not_evaluated(_original: Method) -> Method:
    def get_permission(self: FakeBucket, action: str, resource: str) -> Any:
        return PermissionResult.NEUTRAL

    return get_permission


PATCHES: Final = (
    Patch(
        FakeBucket,
        "get_permission",
        ("self", "action", "resource"),
        _not_evaluated,
        "a bucket policy is stored, not evaluated (IAM is not enforced locally)",
    ),
)
