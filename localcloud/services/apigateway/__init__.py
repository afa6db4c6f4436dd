"""API Gateway: REST APIs (``AWS::ApiGateway::RestApi``, ``Deployment``, ``Stage``) with
Lambda proxy integrations, invoked at a path-style local URL (:mod:`.invoke`).

May import: the engine's provider contract, :mod:`localcloud.services.lambda_`.
"""

from typing import Final

from localcloud.services.apigateway import providers
from localcloud.services.service import Service

SERVICE: Final = Service("apigateway", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
