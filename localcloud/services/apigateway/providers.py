"""API Gateway's REST API types, as the SAM transform writes them for a function's API
event or a serverless API resource, each made through the API Gateway API of the local
account:

- ``AWS::ApiGateway::RestApi`` with an OpenAPI ``Body`` (its paths become the API's
  resources, methods and integrations: :mod:`.definition`); ``Ref``: the API's id;
  ``RootResourceId``: its ``/`` resource's;
- ``AWS::ApiGateway::Resource`` and ``Method``, as a template writes them by hand;
- ``AWS::ApiGateway::Deployment`` (``Ref``: its id) and ``AWS::ApiGateway::Stage`` (``Ref``:
  its name), which the API is invoked through (:mod:`.invoke`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import (
    Deployment,
    Provider,
    physical_name,
    read_s3_object,
    refuse_unknown,
)
from localcloud.cloudformation.template_limits import TemplateRefused, parse, read_file
from localcloud.cloudformation.transform import LOCAL_PATHS, local_path
from localcloud.services.apigateway.definition import (
    INTEGRATION,
    import_paths,
    operations,
    put_aws,
    refused_integration,
)
from localcloud.services.apigateway.invoke import local_url

BINARY_MEDIA_TYPES: Final = "x-amazon-apigateway-binary-media-types"
API_TYPES: Final = frozenset({"AWS::ApiGateway::RestApi", "AWS::ApiGatewayV2::Api"})
DEFINITION_BYTES: Final = 6 * 1024 * 1024
"""An OpenAPI definition API Gateway imports: 6 MB ("Maximum API definition file size when
using restapi:import or restapi:put", Quotas for configuring and running a REST API)."""


def gone_is_deleted(call: Any, **kwargs: Any) -> None:
    """Delete something that may have gone with its API: gone counts as deleted."""
    try:
        call(**kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("NotFoundException", "BadRequestException"):
            raise


def definition(stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> Any:
    """The API's OpenAPI definition: ``Body``, or the file ``BodyS3Location`` names (SAM's
    ``DefinitionUri``: the object ``sam deploy`` uploaded, or a from-source deploy's local
    file), YAML or JSON, within :data:`DEFINITION_BYTES` (read no further) and parsed as a
    template is (:func:`localcloud.cloudformation.template_limits.parse`).

    Raises:
        UnsupportedTemplate: the object or file is missing, or is not a definition.
    """
    location = properties.get("BodyS3Location")
    if location is None:
        return properties.get("Body") or {}
    where = f"{logical_id}.BodyS3Location"
    refuse_unknown(location, {"Bucket", "Key", "Version", "ETag"}, where, "BodyS3Location")
    if location.get("Bucket") == LOCAL_PATHS:
        path = local_path(str(location["Key"]))
        if not path.is_file():
            raise UnsupportedTemplate(f"{logical_id}.DefinitionUri", f"{path} is not a file")
        try:
            text = read_file(path, DEFINITION_BYTES, "An OpenAPI definition")
        except TemplateRefused as exc:
            raise UnsupportedTemplate(f"{logical_id}.DefinitionUri", str(exc)) from exc
    else:
        text = read_s3_object(
            stack, where, location["Bucket"], location["Key"], location.get("Version")
        ).decode("utf-8", "replace")
    try:
        return parse(text, DEFINITION_BYTES)
    except UnsupportedTemplate as exc:
        raise UnsupportedTemplate(where, f"not an OpenAPI definition ({exc})") from exc


class RestApiProvider(Provider):
    TYPE = "AWS::ApiGateway::RestApi"
    PROPERTIES = frozenset(
        {
            "Body",
            "BodyS3Location",
            "Name",
            "Description",
            "EndpointConfiguration",
            "BinaryMediaTypes",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        body = definition(stack, logical_id, properties)
        for path, method, operation in operations(body):
            refused = refused_integration(operation.get(INTEGRATION))
            if refused is not None:
                raise UnsupportedTemplate(
                    f"{logical_id}.Body.paths.{path}.{method.lower()}", refused
                )
        title = (body.get("info") or {}).get("title")
        name = str(properties.get("Name") or title or physical_name(stack, logical_id, 128))
        client = stack.client("apigateway")
        kwargs: dict[str, Any] = {"name": name}
        if "Description" in properties:
            kwargs["description"] = str(properties["Description"])
        api = client.create_rest_api(**kwargs)
        binary = properties.get("BinaryMediaTypes") or body.get(BINARY_MEDIA_TYPES) or []
        kinds = [str(item).replace("~1", "/") for item in binary]  # SAM writes image~1png
        if kinds:
            client.update_rest_api(
                restApiId=api["id"],
                patchOperations=[
                    {"op": "add", "path": f"/binaryMediaTypes/{k.replace('/', '~1')}", "value": k}
                    for k in kinds
                ],
            )
        stack.refs[logical_id] = api["id"]
        import_paths(client, api["id"], body)
        stack.attributes[(logical_id, "RootResourceId")] = api["rootResourceId"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        client = stack.client("apigateway")
        gone_is_deleted(client.delete_rest_api, restApiId=stack.refs[logical_id])

    def local_output(self, stack: Deployment, name: str, value: str) -> str:
        """Execute-api URLs of the stack's REST and HTTP APIs alike (this provider speaks
        for both types)."""
        ids = [
            str(stack.refs[logical_id])
            for logical_id, resource in stack.template.resources.items()
            if resource.get("Type") in API_TYPES and logical_id in stack.refs
        ]
        local = local_url(value, ids)
        if local != value:
            stack.notes.append(
                f"Outputs.{name}: the API's execute-api URL is written as its local one, "
                f"{local} (a function variable built the same way still holds the AWS URL)"
            )
        return local


class ResourceProvider(Provider):
    """``AWS::ApiGateway::Resource`` written by hand: a path part under its parent.
    ``Ref``: its id."""

    TYPE = "AWS::ApiGateway::Resource"
    PROPERTIES = frozenset({"RestApiId", "ParentId", "PathPart"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        api = str(properties["RestApiId"])
        created = stack.client("apigateway").create_resource(
            restApiId=api,
            parentId=str(properties["ParentId"]),
            pathPart=str(properties["PathPart"]),
        )
        stack.refs[logical_id] = created["id"]
        stack.attributes[(logical_id, "RestApiId")] = api

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(
            stack.client("apigateway").delete_resource,
            restApiId=stack.attributes[(logical_id, "RestApiId")],
            resourceId=stack.refs[logical_id],
        )


class MethodProvider(Provider):
    """``AWS::ApiGateway::Method`` written by hand, with its ``Integration``: a Lambda
    proxy one, or an ``AWS`` one to a service the local cloud runs, with its templates,
    parameters and ``IntegrationResponses`` (any other type is refused by name, as in a
    definition). ``Ref``: its id."""

    TYPE = "AWS::ApiGateway::Method"
    PROPERTIES = frozenset(
        {
            "RestApiId",
            "ResourceId",
            "HttpMethod",
            "AuthorizationType",
            "Integration",
            "MethodResponses",
            "RequestParameters",
            "OperationName",
        }
    )
    INTEGRATION_PROPERTIES = frozenset(
        {
            "Type",
            "IntegrationHttpMethod",
            "Uri",
            "RequestTemplates",
            "RequestParameters",
            "PassthroughBehavior",
            "Credentials",
            "IntegrationResponses",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        integration = dict(properties.get("Integration") or {})
        where = f"{logical_id}.Integration"
        refuse_unknown(integration, set(self.INTEGRATION_PROPERTIES), where, "Integration")
        refused = refused_integration(
            {"type": integration.get("Type", ""), "uri": integration.get("Uri", "")}
        )
        if refused is not None:
            raise UnsupportedTemplate(where, refused)
        authorization = str(properties.get("AuthorizationType", "NONE"))
        if authorization != "NONE":
            raise UnsupportedTemplate(
                f"{logical_id}.AuthorizationType", f"{authorization} is not run locally (NONE is)"
            )
        api, resource = str(properties["RestApiId"]), str(properties["ResourceId"])
        method = str(properties["HttpMethod"]).upper()
        client = stack.client("apigateway")
        client.put_method(
            restApiId=api, resourceId=resource, httpMethod=method, authorizationType="NONE"
        )
        if str(integration.get("Type", "")).upper() == "AWS":
            put_aws(client, api, resource, method, _as_definition(integration))
        else:
            client.put_integration(
                restApiId=api,
                resourceId=resource,
                httpMethod=method,
                type="AWS_PROXY",
                integrationHttpMethod=str(integration.get("IntegrationHttpMethod", "POST")),
                uri=str(integration["Uri"]),
            )
        stack.refs[logical_id] = f"{api}-{resource}-{method}"
        stack.attributes[(logical_id, "Method")] = (api, resource, method)

    def delete(self, stack: Deployment, logical_id: str) -> None:
        api, resource, method = stack.attributes[(logical_id, "Method")]
        gone_is_deleted(
            stack.client("apigateway").delete_method,
            restApiId=api,
            resourceId=resource,
            httpMethod=method,
        )


def _as_definition(integration: Mapping[str, Any]) -> dict[str, Any]:
    """A hand-written ``AWS`` ``Integration`` in the keys of a definition's
    ``x-amazon-apigateway-integration`` (``IntegrationResponses`` by selection pattern)."""
    responses = {}
    for response in integration.get("IntegrationResponses") or []:
        pattern = str(response.get("SelectionPattern") or "") or "default"
        responses[pattern] = {
            "statusCode": str(response.get("StatusCode", "200")),
            "responseTemplates": response.get("ResponseTemplates") or {},
            "responseParameters": response.get("ResponseParameters") or {},
        }
    return {
        "type": "aws",
        "httpMethod": integration.get("IntegrationHttpMethod", "POST"),
        "uri": integration["Uri"],
        "requestTemplates": integration.get("RequestTemplates") or {},
        "requestParameters": integration.get("RequestParameters") or {},
        "passthroughBehavior": integration.get("PassthroughBehavior"),
        "credentials": integration.get("Credentials"),
        "responses": responses,
    }


class DeploymentProvider(Provider):
    TYPE = "AWS::ApiGateway::Deployment"
    PROPERTIES = frozenset({"RestApiId", "StageName", "Description"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kwargs = {"restApiId": str(properties["RestApiId"])}
        if "StageName" in properties:
            kwargs["stageName"] = str(properties["StageName"])
        if "Description" in properties:
            kwargs["description"] = str(properties["Description"])
        deployment = stack.client("apigateway").create_deployment(**kwargs)
        stack.refs[logical_id] = deployment["id"]
        stack.attributes[(logical_id, "RestApiId")] = kwargs["restApiId"]
        stack.attributes[(logical_id, "StageName")] = kwargs.get("stageName")

    def delete(self, stack: Deployment, logical_id: str) -> None:
        client = stack.client("apigateway")
        api = stack.attributes[(logical_id, "RestApiId")]
        stage = stack.attributes[(logical_id, "StageName")]
        if stage:
            gone_is_deleted(client.delete_stage, restApiId=api, stageName=stage)
        gone_is_deleted(
            client.delete_deployment, restApiId=api, deploymentId=stack.refs[logical_id]
        )


class StageProvider(Provider):
    TYPE = "AWS::ApiGateway::Stage"
    PROPERTIES = frozenset({"RestApiId", "DeploymentId", "StageName", "Description", "Variables"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        api = str(properties["RestApiId"])
        kwargs: dict[str, Any] = {
            "restApiId": api,
            "stageName": str(properties["StageName"]),
            "deploymentId": str(properties["DeploymentId"]),
        }
        if "Description" in properties:
            kwargs["description"] = str(properties["Description"])
        if "Variables" in properties:
            kwargs["variables"] = {k: str(v) for k, v in properties["Variables"].items()}
        stack.client("apigateway").create_stage(**kwargs)
        stack.refs[logical_id] = kwargs["stageName"]
        stack.attributes[(logical_id, "RestApiId")] = api

    def delete(self, stack: Deployment, logical_id: str) -> None:
        gone_is_deleted(
            stack.client("apigateway").delete_stage,
            restApiId=stack.attributes[(logical_id, "RestApiId")],
            stageName=stack.refs[logical_id],
        )


PROVIDERS: Final = (
    RestApiProvider(),
    ResourceProvider(),
    MethodProvider(),
    DeploymentProvider(),
    StageProvider(),
)
