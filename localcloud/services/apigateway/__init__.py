"""API Gateway: REST APIs (:mod:`.providers`) and HTTP APIs (:mod:`.http_providers`) with
Lambda proxy and AWS service integrations, invoked at a path-style local URL
(:mod:`.invoke`).

May import: the engine's provider contract, :mod:`localcloud.services.lambda_`.
"""

from typing import Final

from localcloud.services.apigateway import http_providers, providers
from localcloud.services.service import Service

SERVICE: Final = Service("apigateway", providers=(*providers.PROVIDERS, *http_providers.PROVIDERS))

__all__ = ["SERVICE"]
