"""API Gateway's HTTP API types (SAM's ``HttpApi`` events and ``AWS::Serverless::HttpApi``,
or written by hand), each made through the ``apigatewayv2`` API of the local account:

- ``AWS::ApiGatewayV2::Api`` of protocol ``HTTP``, with an OpenAPI ``Body`` (its
  operations become routes and integrations) and a CORS configuration (:mod:`.cors`);
- ``AWS::ApiGatewayV2::Integration`` (a Lambda proxy integration, or a first-class AWS
  service one by ``IntegrationSubtype``) and ``AWS::ApiGatewayV2::Route``;
- ``AWS::ApiGatewayV2::Stage`` (``$default`` is reached with no stage in the path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import (
    Deployment,
    Provider,
    physical_name,
    refuse_unknown,
)
from localcloud.services.apigateway.aws_integration import refused_subtype
from localcloud.services.apigateway.cors import KEYS as CORS_KEYS
from localcloud.services.apigateway.cors import configuration
from localcloud.services.apigateway.cors import refused as refused_cors
from localcloud.services.apigateway.definition import (
    INTEGRATION,
    import_routes,
    operations,
    refused_integration,
)
from localcloud.services.apigateway.providers import definition, gone_is_deleted

__all__ = ["PROVIDERS"]

CORS_EXTENSION: Final = "x-amazon-apigateway-cors"


class HttpApiProvider(Provider):
    """``AWS::ApiGatewayV2::Api`` of protocol ``HTTP``: its OpenAPI ``Body``'s operations
    become routes and integrations; ``CorsConfiguration`` (or the body's
    ``x-amazon-apigateway-cors``) is answered by the API (:mod:`.cors`). ``Ref``: the
    API's id; ``ApiEndpoint``: its AWS URL."""

    TYPE = "AWS::ApiGatewayV2::Api"
    PROPERTIES = frozenset(
        {
            "Body",
            "BodyS3Location",
            "Name",
            "Description",
            "ProtocolType",
            "Tags",
            "CorsConfiguration",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        protocol = str(properties.get("ProtocolType", "HTTP"))
        if protocol != "HTTP":
            raise UnsupportedTemplate(
                f"{logical_id}.ProtocolType", f"{protocol} APIs are not run locally (HTTP is)"
            )
        body = definition(stack, logical_id, properties)
        for path, method, operation in operations(body):
            integration = operation.get(INTEGRATION) or {}
            refused = refused_integration(integration)
            if str(integration.get("type", "")).lower() in ("mock", "aws"):
                refused = f"an HTTP API has no {integration['type']} integrations"
            if refused is not None:
                raise UnsupportedTemplate(
                    f"{logical_id}.Body.paths.{path}.{method.lower()}", refused
                )
        raw_cors = properties.get("CorsConfiguration") or body.get(CORS_EXTENSION)
        cors = configuration(raw_cors)
        if cors is not None:
            refuse_unknown(
                cors, set(CORS_KEYS), f"{logical_id}.CorsConfiguration", "CorsConfiguration"
            )
            reason = refused_cors(cors)
            if reason is not None:
                raise UnsupportedTemplate(f"{logical_id}.CorsConfiguration", reason)
        title = (body.get("info") or {}).get("title")
        name = str(properties.get("Name") or title or physical_name(stack, logical_id, 128))
        client = stack.client("apigatewayv2")
        kwargs: dict[str, Any] = {"Name": name, "ProtocolType": "HTTP"}
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        if cors is not None:
            kwargs["CorsConfiguration"] = cors
        api = client.create_api(**kwargs)
        stack.refs[logical_id] = api["ApiId"]
        import_routes(client, api["ApiId"], body)
        stack.attributes[(logical_id, "ApiEndpoint")] = (
            f"https://{api['ApiId']}.execute-api.{stack.region}.amazonaws.com"
        )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(stack.client("apigatewayv2").delete_api, ApiId=stack.refs[logical_id])


class HttpIntegrationProvider(Provider):
    """``AWS::ApiGatewayV2::Integration`` written by hand: ``AWS_PROXY`` to a Lambda
    function, or with an ``IntegrationSubtype`` (``SQS-SendMessage``,
    ``StepFunctions-StartExecution``) and its ``RequestParameters``. ``Ref``: its id."""

    TYPE = "AWS::ApiGatewayV2::Integration"
    PROPERTIES = frozenset(
        {
            "ApiId",
            "IntegrationType",
            "IntegrationSubtype",
            "IntegrationUri",
            "IntegrationMethod",
            "PayloadFormatVersion",
            "CredentialsArn",
            "RequestParameters",
            "ConnectionType",
            "Description",
            "TimeoutInMillis",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kind = str(properties.get("IntegrationType", ""))
        if kind != "AWS_PROXY":
            raise UnsupportedTemplate(
                f"{logical_id}.IntegrationType", f"{kind} is not run locally (AWS_PROXY is)"
            )
        api = str(properties["ApiId"])
        kwargs: dict[str, Any] = {
            "ApiId": api,
            "IntegrationType": kind,
            "PayloadFormatVersion": str(properties.get("PayloadFormatVersion", "2.0")),
        }
        subtype = properties.get("IntegrationSubtype")
        parameters = {k: str(v) for k, v in (properties.get("RequestParameters") or {}).items()}
        if subtype is not None:
            refused = refused_subtype(str(subtype), parameters)
            if refused is not None:
                raise UnsupportedTemplate(f"{logical_id}.IntegrationSubtype", refused)
            kwargs.update(IntegrationSubtype=str(subtype), RequestParameters=parameters)
            if "CredentialsArn" in properties:
                kwargs["CredentialsArn"] = str(properties["CredentialsArn"])
        else:
            uri = str(properties.get("IntegrationUri", ""))
            refused = refused_integration({"type": "aws_proxy", "uri": uri})
            if refused is not None:
                raise UnsupportedTemplate(f"{logical_id}.IntegrationUri", refused)
            kwargs.update(
                IntegrationUri=uri,
                IntegrationMethod=str(properties.get("IntegrationMethod", "POST")),
            )
        created = stack.client("apigatewayv2").create_integration(**kwargs)
        stack.refs[logical_id] = created["IntegrationId"]
        stack.attributes[(logical_id, "ApiId")] = api

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(
            stack.client("apigatewayv2").delete_integration,
            ApiId=stack.attributes[(logical_id, "ApiId")],
            IntegrationId=stack.refs[logical_id],
        )


class HttpRouteProvider(Provider):
    """``AWS::ApiGatewayV2::Route`` written by hand (``RouteKey``: ``GET /items/{id}`` or
    ``$default``; ``Target``: ``integrations/{id}``). ``Ref``: its id."""

    TYPE = "AWS::ApiGatewayV2::Route"
    PROPERTIES = frozenset({"ApiId", "RouteKey", "Target", "AuthorizationType", "OperationName"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        authorization = str(properties.get("AuthorizationType", "NONE"))
        if authorization != "NONE":
            raise UnsupportedTemplate(
                f"{logical_id}.AuthorizationType", f"{authorization} is not run locally (NONE is)"
            )
        api = str(properties["ApiId"])
        kwargs = {"ApiId": api, "RouteKey": str(properties["RouteKey"])}
        if "Target" in properties:
            kwargs["Target"] = str(properties["Target"])
        created = stack.client("apigatewayv2").create_route(**kwargs)
        stack.refs[logical_id] = created["RouteId"]
        stack.attributes[(logical_id, "ApiId")] = api

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(
            stack.client("apigatewayv2").delete_route,
            ApiId=stack.attributes[(logical_id, "ApiId")],
            RouteId=stack.refs[logical_id],
        )


class HttpStageProvider(Provider):
    """``AWS::ApiGatewayV2::Stage`` (``$default`` is reached with no stage in the path, as
    on AWS). ``AutoDeploy`` is how every local stage behaves: it serves the routes as
    they are. ``Ref``: its name."""

    TYPE = "AWS::ApiGatewayV2::Stage"
    PROPERTIES = frozenset(
        {"ApiId", "StageName", "AutoDeploy", "Tags", "StageVariables", "Description"}
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kwargs: dict[str, Any] = {
            "ApiId": str(properties["ApiId"]),
            "StageName": str(properties["StageName"]),
            "AutoDeploy": True,
        }
        if "StageVariables" in properties:
            kwargs["StageVariables"] = {k: str(v) for k, v in properties["StageVariables"].items()}
        if "Description" in properties:
            kwargs["Description"] = str(properties["Description"])
        stack.client("apigatewayv2").create_stage(**kwargs)
        stack.refs[logical_id] = kwargs["StageName"]
        stack.attributes[(logical_id, "ApiId")] = kwargs["ApiId"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(
            stack.client("apigatewayv2").delete_stage,
            ApiId=stack.attributes[(logical_id, "ApiId")],
            StageName=stack.refs[logical_id],
        )


PROVIDERS: Final = (
    HttpApiProvider(),
    HttpIntegrationProvider(),
    HttpRouteProvider(),
    HttpStageProvider(),
)
