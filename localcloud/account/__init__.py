"""One local AWS account: moto with the local cloud's patches, the account's functions
and event source mappings, a stack deployed from a template if one is given, and, in
server mode, the server with the live view; in-process (for tests) or as a server on
127.0.0.1:PORT.

Everything lives in one account, whoever made it: a resource made by the template, by
``sam deploy`` or by a plain API call runs the same way (a function created or updated
through the Lambda API runs its code; a mapping created through it is polled).

In-process (the test's own clients in this process; the functions, in processes of their
own, reach the account through a server on a free loopback port only they are told of)::

    with LocalCloud(template=load(Path("template.yaml")), stack_name="app") as cloud:
        cloud.client("sqs").send_message(QueueUrl=cloud.outputs["QueueUrl"], MessageBody=...)
        cloud.drain()  # run the event source mappings until their queues are empty

Server (``python -m localcloud serve``): moto's ``ThreadedMotoServer`` in this process,
the functions run behind it, and every event source mapping polls in a thread, so the
stock AWS CLI and ``sam deploy`` work with ``--endpoint-url http://127.0.0.1:PORT``.

A project adds to an account through :class:`Extension` (:mod:`.extension`): listeners of
its functions' invocations, sections of the live view and their data.

May import: every package of the local cloud but :mod:`localcloud.cli`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import boto3
from flask import Flask
from moto import mock_aws
from moto.core.config import DefaultConfig, default_user_config
from moto.moto_api._internal.models import moto_api_backend

from localcloud import services
from localcloud.account import pollers
from localcloud.account.environ import SavedEnviron
from localcloud.account.extension import Extension
from localcloud.account.view import Watcher, view_reader
from localcloud.cloudformation import changesets
from localcloud.cloudformation import stacks as stack
from localcloud.cloudformation.deployer import deploy
from localcloud.cloudformation.provider import ACCOUNT_ID, Deployment
from localcloud.cloudformation.template import Template
from localcloud.patches import activity
from localcloud.server import view as view_module
from localcloud.server.app import LocalServer, free_port
from localcloud.server.guard import PublicRoutes
from localcloud.server.policy import Policy
from localcloud.services import lambda_ as lambda_runtime
from localcloud.services.apigateway import endpoint as api_endpoint
from localcloud.services.apigateway import invoke as api_invoke
from localcloud.services.dynamodb import patches as dynamodb_writes
from localcloud.services.events import delivery as events_delivery
from localcloud.services.events import schedules
from localcloud.services.lambda_ import Function
from localcloud.services.lambda_ import asynchronous as lambda_async
from localcloud.services.lambda_ import event_source_mappings as mappings
from localcloud.services.lambda_.permissions import log_group_creator
from localcloud.services.lambda_.stream_mappings import PollOutcome
from localcloud.services.logs import Delivery
from localcloud.services.sqs import BatchOutcome, SqsEventSourceMapping
from localcloud.state import Seen, remember
from localcloud.state.history import History
from localcloud.text import say

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "localcloud",
    "AWS_SECRET_ACCESS_KEY": "localcloud",
    "AWS_SESSION_TOKEN": "localcloud",
}
SAM_CLI_SETTINGS = {"SAM_CLI_POLL_DELAY": "0.2"}
"""What the SAM CLI is given when it deploys to a local cloud. ``SAM_CLI_POLL_DELAY``
(seconds, SAM CLI's documented setting; default 5 for ``sam deploy``) is how long ``sam
deploy`` sleeps between its checks of a change set and of the stack's events. Against
AWS it spares CloudFormation's API quota; here ``ExecuteChangeSet`` returns once the stack
is complete, so each deploy would sleep 5 s for nothing."""


_SESSION: list[boto3.Session] = []
_SESSION_LOCK = threading.Lock()


def _session() -> boto3.Session:
    """The boto3 session every account of this process makes its clients from, made on
    first use. One session loads each service's model once; boto3's default session,
    which ``mock_aws`` replaces at each start, loaded them again for every in-process
    account. Only use under ``_SESSION_LOCK``: a session is not thread-safe."""
    if not _SESSION:
        _SESSION.append(boto3.Session())
    return _SESSION[0]


API_ROUTES = PublicRoutes(
    origin=api_endpoint.is_origin,
    route=api_endpoint.is_route,
    app=api_endpoint.answer,
    body_limit=api_endpoint.PAYLOAD_LIMIT,
    copies=api_endpoint.BODY_COPIES,
    too_large=api_endpoint.too_large,
    throttled=api_endpoint.throttled,
)
"""An API's stages, public and unsigned as on AWS, on the API's own origin and at the
path-style URL (:mod:`localcloud.services.apigateway.endpoint`)."""


class LocalCloud:
    """One local account, and a stack deployed into it from ``template`` if one is given.

    Args:
        template: the template to deploy at start (:func:`localcloud.cloudformation.template.load`:
            parameters resolved as ``sam deploy`` resolves them); ``None`` for an empty
            account, which ``sam deploy`` and the AWS APIs fill.
        stack_name: the stack's name (needed with a template).
        server_port: ``None`` for in-process (``mock_aws``; the functions reach the
            account on a free loopback port); a port for server mode.
        visibility_timeout: seconds; overrides every queue's visibility timeout so that
            redelivery and redrive take seconds (the template's value stays in Outputs
            and ``deployment.notes`` says what changed).
        title: what the live view calls this account (default: the stack, or "account").
        extensions: what a project adds (:class:`Extension`), from start to stop.

    Raises:
        ValueError: a template without a stack name; an ``allow_origins`` entry that is
            not an origin.
    """

    def __init__(
        self,
        *,
        template: Template | None = None,
        stack_name: str | None = None,
        region: str = "us-east-1",
        server_port: int | None = None,
        host: str = "127.0.0.1",
        allow_hosts: Sequence[str] = (),
        allow_origins: Sequence[str] = (),
        visibility_timeout: int | None = None,
        title: str | None = None,
        extensions: Sequence[Extension] = (),
    ) -> None:
        if template is not None and not stack_name:
            raise ValueError("a template is deployed as a stack: give its stack_name")
        self.template = template
        self.stack_name = stack_name or ""
        self.extensions = tuple(extensions)
        self.region = region
        self.server_port = server_port
        self.host = host
        self.policy: Policy | None = (
            None
            if server_port is None
            else Policy.for_server(
                host, server_port, allow_hosts=allow_hosts, allow_origins=allow_origins
            )
        )
        """Who the server answers (server mode): see :mod:`localcloud.server.guard`."""
        self.visibility_timeout = visibility_timeout
        self._mock: Any = None
        self._patched = False
        self._server: LocalServer | None = None
        self.history = History()
        """Every invocation and DynamoDB write of this cloud (the live view's history)."""
        self._environ = SavedEnviron()
        self._deployment: Deployment | None = None
        self.stacks: list[Deployment] = []
        """Deployments made by change sets (``sam deploy`` to the server), in order."""
        self._served_deleted = False
        self._seen = Seen()
        self._watcher: Watcher | None = None
        self.clock: schedules.Clock | None = None
        self._clients: dict[tuple[str, str | None], Any] = {}
        shown = title or (f"stack {stack_name}" if template is not None else "account")
        self._reader = view_reader(self, self.history, shown, self._seen, extensions=extensions)

    # --- lifecycle -------------------------------------------------------------------

    @property
    def view_url(self) -> str | None:
        """The live view's address (server mode only)."""
        return None if self.endpoint_url is None else f"{self.endpoint_url}{view_module.PATH}/"

    @property
    def endpoint_url(self) -> str | None:
        """The server as this machine reaches it (``None`` in-process); a server bound to
        every interface (``0.0.0.0``) is reached on 127.0.0.1."""
        if self.server_port is None:
            return None
        host = "127.0.0.1" if self.host == "0.0.0.0" else self.host  # noqa: S104 - a comparison
        return f"http://{host}:{self.server_port}"

    def start(self) -> Deployment | None:
        self._clients.clear()  # made before start: not through this account's mock
        services.install()
        self._patched = True
        services.start()  # a new account: nothing of an earlier one runs
        lambda_runtime.add_listener(self.history.record)
        for extension in self.extensions:
            for listener in extension.listeners:
                lambda_runtime.add_listener(listener)
        dynamodb_writes.WRITE_LISTENERS.append(self.history.record_write)
        # The host's own AWS_* variables hidden while the cloud runs; stop() restores them.
        self._environ.only_ours({**FAKE_CREDENTIALS, "AWS_DEFAULT_REGION": self.region})
        if self.server_port is None:
            self._mock = mock_aws(config=MOTO_CONFIG)
            self._mock.start()
            # The functions run in processes of their own, as in server mode: they reach
            # the account through a server on a free loopback port that only they are
            # told of (the test's own clients stay in this process).
            port = free_port()
            self._server = LocalServer(
                "127.0.0.1",
                port,
                self.view_app(),
                Policy.for_server("127.0.0.1", port),
                public=API_ROUTES,
            )
            self._server.start()
            api_invoke.set_endpoint(f"http://127.0.0.1:{port}")
            platform_environment: dict[str, str] = {
                **FAKE_CREDENTIALS,
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            }
        else:
            # moto's interpreter reaches the server at localhost:$MOTO_PORT.
            self._environ.set({"MOTO_PORT": str(self.server_port)})
            assert self.policy is not None
            # moto's backends are process-wide: a server started after another one in
            # this process starts empty, as a new emulator does (names are deterministic).
            # In-process: the server does not serve moto's control API (server.guard).
            # moto's config first (the backends read it when reset makes them anew);
            # ``default_user_config`` is what mock_aws(config=...) updates in-process.
            default_user_config.update(MOTO_CONFIG)
            moto_api_backend.reset()
            self._server = LocalServer(
                self.host,
                self.server_port,
                self.view_app(),
                self.policy,
                public=API_ROUTES,
            )
            self._server.start()
            assert self.endpoint_url is not None
            api_invoke.set_endpoint(self.endpoint_url)
            platform_environment = {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint_url}
        lambda_runtime.set_platform(
            lambda_runtime.Platform(
                platform_environment, Delivery(self.client, log_group_creator(self.client))
            )
        )
        mappings.serve(mappings.Account(self.client, self.region, services.event_sources()))
        self.clock = schedules.Clock(ACCOUNT_ID)
        """Fires the account's schedule rules and Scheduler schedules while it runs."""
        self.clock.start()
        if self.template is not None:
            self._deployment = deploy(
                self.template,
                self.client,
                providers=services.providers(),
                stack_name=self.stack_name,
                region=self.region,
                visibility_timeout=self.visibility_timeout,
            )
            stack.register(self._deployment, self.client)
            self.remember_resources()
        if self.server_port is not None:
            changesets.serve(
                changesets.Host(
                    client=self.client,
                    region=self.region,
                    providers=services.providers(),
                    adopt=self._adopt,
                    served=self._served,
                    forget=self._forget,
                    visibility_timeout=self.visibility_timeout,
                )
            )
        return self._deployment

    def view_data(self, args: Mapping[str, str]) -> Mapping[str, Any]:
        """What the live view shows (:func:`view_reader` of this cloud)."""
        return self._reader(args)

    def view_app(self) -> Flask:
        """The live view's WSGI app (what server mode mounts at
        :data:`~localcloud.server.view.PATH`), with the extensions' sections."""
        parts = [extension.view for extension in self.extensions if extension.view is not None]

        def packages(name: str, wanted: str) -> bytes | None:
            return lambda_runtime.code_links.package(ACCOUNT_ID, self.region, name, wanted)

        return view_module.create_app(self.view_data, parts, packages=packages)

    def watch(self, interval_s: float = 1.0) -> None:
        """Server mode: read the account in the background (every ``interval_s`` seconds
        while requests change it, every 10 s when idle: :class:`Watcher`), as an open live
        view would, so that what is created and deleted between two looks
        (a state machine a cleanup deleted, its executions) is still shown, as gone, afterwards."""
        if self._watcher is None:
            self._watcher = Watcher(self._reader, interval_s, changed=activity.generation)

    def remember_resources(self) -> None:
        """Note every queue, table and state machine the account holds now, so the live
        view lists one deleted before it first looked as gone (the stack's, or one made
        through the API)."""
        remember(self, self._seen)

    def _adopt(self, deployment: Deployment, previous: Deployment | None) -> None:
        """A change set deployed a stack, or updated ``previous`` (its mappings are polled
        as every mapping of the account is). An update of the server's own stack makes it
        :attr:`deployment`."""
        if previous is not None and previous is self._deployment:
            self._deployment = deployment
        else:
            if previous in self.stacks:
                self.stacks.remove(previous)
            self.stacks.append(deployment)

    def _served(self, stack_name: str) -> Deployment | None:
        """The server's own deployment, by its stack name, unless its stack was deleted."""
        if stack_name == self.stack_name and not self._served_deleted:
            return self._deployment
        return None

    def _forget(self, deployment: Deployment) -> None:
        """A stack was deleted (``sam delete``): its deployment is no longer listed."""
        if deployment is self._deployment:
            self._served_deleted = True
        elif deployment in self.stacks:
            self.stacks.remove(deployment)

    def stop(self) -> None:
        if self.clock is not None:
            self.clock.stop()
            self.clock = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        lambda_runtime.remove_listener(self.history.record)
        for extension in self.extensions:
            for listener in extension.listeners:
                lambda_runtime.remove_listener(listener)
        if self.history.record_write in dynamodb_writes.WRITE_LISTENERS:
            dynamodb_writes.WRITE_LISTENERS.remove(self.history.record_write)
        changesets.serve(None)
        api_invoke.set_endpoint(None)
        # every service stops what runs, in the reverse of their order: Step Functions'
        # executions first (a Task state waiting for a function ends with it, and starts
        # nothing after), Lambda's execution environments last, their processes too,
        # invocations in progress included; then every poller stops
        for line in services.stop():
            say(line)
        mappings.serve(None)
        self.stacks.clear()
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        if self._patched:
            self._patched = False
            services.uninstall()
        self._environ.restore()
        self._clients.clear()

    def __enter__(self) -> LocalCloud:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- access ----------------------------------------------------------------------

    @property
    def deployment(self) -> Deployment:
        if self._deployment is None:
            raise RuntimeError("the local cloud is not started")
        return self._deployment

    @property
    def outputs(self) -> dict[str, str]:
        return self.deployment.outputs

    def client(self, service: str, *, tag: str | None = None) -> Any:
        """A boto3 client for this cloud (fake credentials; the endpoint in server mode).
        With ``tag``, the writes it makes are recorded as ``tag`` and shown apart from
        the decisions of the code under test (a lab's setup: ``tag="setup"``).

        One client per service and tag, made on first use and shared by every caller
        until :meth:`stop`, from one session per process (:func:`_session`; boto3's
        clients are thread-safe, its sessions are not: they are made one at a time). The
        deployer, the pollers and each function's log lines made a client per call, and
        each in-process account loaded every model again: a fifth of the CPU of the
        suite's in-process tests (a profile of five of its files). A handler
        registered on a client's events reaches every caller of it: register one on a
        client of your own (``boto3.client(service, endpoint_url=cloud.endpoint_url)``).
        """
        with _SESSION_LOCK:
            made = self._clients.get((service, tag))
            if made is None:
                made = self._clients[service, tag] = _session().client(
                    service,  # type: ignore[call-overload]
                    region_name=self.region,
                    endpoint_url=self.endpoint_url,
                    aws_access_key_id=(
                        FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]
                        if tag is None
                        else self.history.tag(tag)
                    ),
                    aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                    aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
                )
            return made

    def function(self, name: str, deployment: Deployment | None = None) -> Function:
        """A function of the account by a logical id of ``deployment`` (default: the
        stack this cloud deployed) or by its name or ARN, as the Lambda API finds it now.

        Raises:
            KeyError: no such function.
        """
        deployment = deployment or self._deployment
        if deployment is not None and name in deployment.template.resources:
            resource = deployment.template.resources[name]
            if resource.get("Type") == "AWS::Lambda::Function" and name in deployment.refs:
                return lambda_runtime.lookup(str(deployment.refs[name]))
        return lambda_runtime.lookup(name)

    def event_sources(self, deployment: Deployment | None = None) -> list[SqsEventSourceMapping]:
        """The pollers of the SQS event source mappings of ``deployment`` (default: the
        stack this cloud deployed), in template order (:func:`.pollers.of`)."""
        return pollers.of(deployment or self.deployment)

    @property
    def event_source(self) -> SqsEventSourceMapping:
        """The one SQS event source mapping of the stack (``ValueError`` if not one)."""
        (source,) = self.event_sources()
        return source

    def deploy(self, template: Template, *, stack_name: str) -> Deployment:
        """Deploy ``template`` into the account as the stack ``stack_name``, with every
        service's providers (not a stack this cloud lists: a test's or a tool's own).

        Raises:
            UnsupportedTemplate: naming the resource and property the local cloud cannot
                honour.
        """
        return deploy(
            template,
            self.client,
            providers=services.providers(),
            stack_name=stack_name,
            region=self.region,
            visibility_timeout=self.visibility_timeout,
        )

    def settle(self, timeout_s: float) -> None:
        """The scenarios' hook: run the event source mapping until the queue is empty."""
        self.drain(timeout_s=timeout_s)

    # --- event source mappings ----------------------------------------------------------

    def start_event_sources(self, idle_wait_seconds: float = 0.2) -> None:
        """Server mode: poll every mapping of the account in the background, those made
        from now on too."""
        mappings.start(idle_wait_seconds)

    def drain(self, *, timeout_s: float = 120.0, idle_sleep_s: float = 0.1) -> list[BatchOutcome]:
        """Run every enabled SQS event source mapping of the account until its queue holds
        nothing, visible or in flight (:func:`.pollers.drain`; the one kind of source the
        account polls today).

        Raises:
            TimeoutError: a queue is not empty after ``timeout_s`` seconds.
        """
        return pollers.drain(self, timeout_s=timeout_s, idle_sleep_s=idle_sleep_s)

    def settle_streams(
        self, *, timeout_s: float = 60.0, idle_sleep_s: float = 0.05
    ) -> list[PollOutcome]:
        """Run every enabled Kinesis and DynamoDB stream mapping of the account until it
        has processed (or discarded, with its retries) every record of its stream
        (:func:`.pollers.settle_streams`); the polls that invoked or discarded.

        Raises:
            TimeoutError: a mapping has not caught up after ``timeout_s`` seconds.
        """
        return pollers.settle_streams(timeout_s=timeout_s, idle_sleep_s=idle_sleep_s)

    def fire_schedule(self, name: str, *, group: str | None = None) -> str:
        """Fire the schedule rule or Scheduler schedule ``name`` now, as its schedule
        would (:func:`localcloud.services.events.schedules.fire`); its ARN.

        Raises:
            KeyError: no enabled schedule of that name.
        """
        return schedules.fire(ACCOUNT_ID, name, group=group)

    def settle_events(self, timeout_s: float = 60.0) -> None:
        """Wait until every event put on a bus reached its targets and every asynchronous
        invocation (with its retries) finished.

        Raises:
            TimeoutError: that took longer than ``timeout_s`` seconds.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            delivered = events_delivery.wait_delivered(max(left, 0.0))
            idle = lambda_async.wait_idle(max(deadline - time.monotonic(), 0.0))
            if not (delivered and idle):
                raise TimeoutError(f"events still in delivery after {timeout_s} s")
            if events_delivery.wait_delivered(0) and lambda_async.wait_idle(0):
                return


__all__ = ["FAKE_CREDENTIALS", "MOTO_CONFIG", "Extension", "LocalCloud"]
