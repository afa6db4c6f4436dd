"""IAM: ``AWS::IAM::Role`` with its inline and AWS managed policies (created, not
enforced locally).

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.iam import providers
from localcloud.services.service import Service

SERVICE: Final = Service("iam", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
