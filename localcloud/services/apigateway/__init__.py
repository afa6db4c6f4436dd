"""API Gateway: REST APIs (:mod:`.providers`) and HTTP APIs (:mod:`.http_providers`) with
Lambda proxy and AWS service integrations, invoked at a path-style local URL
or on the API's own origin (:mod:`.invoke`); mapping templates rendered by a sandboxed
Velocity (:mod:`.mapping`, :mod:`.velocity_patches`).

May import: the engine's provider contract, :mod:`localcloud.services.lambda_`.
"""

from typing import Final

from localcloud.services.apigateway import (
    http_providers,
    imports,
    providers,
    velocity_elements,
    velocity_patches,
)
from localcloud.services.apigateway.aws_integration import SERVICES, SUBTYPES
from localcloud.services.service import Service

SURFACES: Final = (
    "REST API routes at /restapis/{api-id}/{stage}/_user_request_/{path} (unsigned, as on "
    "AWS; a browser's navigation sent on to the API's own origin) and at "
    "http://{api-id}.execute-api.localhost:{port}/{stage}/{path}; bodies up to API Gateway's "
    "10 MB; integrations: Lambda proxy (aws_proxy, payload format 1.0), AWS service (aws) to "
    + ", ".join(sorted(SERVICES))
    + " with mapping templates, SAM's static CORS mocks",
    "HTTP API routes at /restapis/{api-id}/{stage or $default}/_user_request_/{path} and "
    "http://{api-id}.execute-api.localhost:{port}/[{stage}/]{path}; "
    "integrations: Lambda proxy (payload format 1.0 and 2.0), first-class "
    + ", ".join(sorted(SUBTYPES))
    + "; CorsConfiguration",
)

SERVICE: Final = Service(
    "apigateway",
    providers=(*providers.PROVIDERS, *http_providers.PROVIDERS),
    patches=(*velocity_patches.PATCHES, *imports.PATCHES),
    checks=(velocity_elements.check_elements,),
    surfaces=SURFACES,
)

__all__ = ["SERVICE"]
