"""moto's IAM, in IAM's words for an entity that does not exist.

moto 5 answers ``NoSuchEntity`` for an unknown role or group with "Role <name> not found"
and "Group <name> not found"; IAM says "The role with name <name> cannot be found." and
"The group with name <name> cannot be found." (as moto already says for a user). A learner
who deletes a role twice, or a script that matches the message, sees IAM's. Source: the
messages IAM answers GetRole, DeleteRole and GetGroup with (IAM API reference, Errors:
``NoSuchEntity``, HTTP 404).
"""

from __future__ import annotations

from typing import Any, Final

from moto.iam.exceptions import NotFoundException
from moto.iam.models import IAMBackend

from localcloud.patches.registry import Method, Patch


def _named(kind: str, original: Method) -> Method:
    def get(self: IAMBackend, name: str) -> Any:
        try:
            return original(self, name)
        except NotFoundException:
            raise NotFoundException(f"The {kind} with name {name} cannot be found.") from None

    return get


PATCHES: Final = (
    Patch(
        IAMBackend,
        "get_role",
        ("self", "role_name"),
        lambda original: _named("role", original),
        "an unknown role is answered in IAM's words (GetRole, DeleteRole, PutRolePolicy …)",
    ),
    Patch(
        IAMBackend,
        "get_group",
        ("self", "group_name"),
        lambda original: _named("group", original),
        "an unknown group is answered in IAM's words",
    ),
)
