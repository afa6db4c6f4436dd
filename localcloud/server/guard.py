"""The local server's front door: what a request must show before moto or the view sees it.

A server on 127.0.0.1 is reachable from every web page the developer has open. Without
this module a page on another origin could read the tables through moto's permissive
CORS, wipe the account with a no-preflight ``POST /moto-api/reset``, or create a change
set whose uploaded zip the deployer then runs as the developer's user; DNS rebinding
could turn a public name into this server. Local emulators have shipped that class of
hole before (LocalStack's 2021 dashboard CSRF-to-code-execution reports); the answer,
here as there, is an origin allow-list, a ``Host`` check and refusing unsigned calls.
:class:`Guard` is the server's whole WSGI app. It decides once, on the path every app
behind it reads (:mod:`~localcloud.server.request_path`), where a request goes (an API's
route, the live view, an AWS API), hands it to that app itself (no router behind it
decides again), and refuses, in this order:

=====================  =================================================================
``Host``               not a name the server answers for (default ``127.0.0.1``,
                       ``localhost`` and its subdomains, the bound address, each with the
                       server's port; more with ``--allow-host``): HTTP 403. DNS
                       rebinding sends the attacker's name, which is never on the list.
two lengths            a request with both ``Content-Length`` and ``Transfer-Encoding``:
                       HTTP 400 (RFC 9112, section 6.1).
ambiguous path         a path that two servers would route differently (an encoded
                       slash, ``//``, a dot segment …), when the guard would serve it
                       without a signature (an API's route, the view, a presigned
                       link): HTTP 400.
``Origin``             an origin other than the server's own or one named with
                       ``--allow-origin``: HTTP 403, preflights included, and no response
                       ever carries ``Access-Control-Allow-Origin`` for it. A request
                       without ``Origin`` that the browser marks ``Sec-Fetch-Site:
                       cross-site`` or ``same-site`` (a no-cors fetch, an ``<img>``, a
                       form post, a link) is refused the same way.
``/moto-api/``         moto's control API (reset, config, seed, its dashboard) is not
                       served: HTTP 404. The local cloud resets and configures moto
                       in-process.
unsigned AWS call      any other path is an AWS API call and needs a SigV4
                       ``Authorization`` header (``AWS4-HMAC-SHA256``, or SigV4a):
                       otherwise HTTP 403 with the error AWS gives an unsigned call
                       (:func:`~localcloud.server.signature.unsigned_refusal`). The one
                       exception is a presigned S3 ``GET`` or ``HEAD`` of an object. The
                       AWS CLI, boto3, the SAM CLI, the AWS SDK for JavaScript and the
                       functions all sign, so they are unaffected; a form post or a
                       no-cors fetch cannot add the header.
malformed signature    a header missing a part, or scoped to a region that does not
                       exist: AWS's error for it, in the caller's protocol
                       (:func:`~localcloud.server.signature.signature_refusal`).
the view               ``/_localcloud/`` answers ``GET`` and ``HEAD`` only (405
                       otherwise) and is never framed (``frame-ancestors 'none'``).
=====================  =================================================================

Every response but an API's leaves with ``Cross-Origin-Resource-Policy: same-origin`` and
``X-Content-Type-Options: nosniff``, so even an allowed no-cors embed cannot read it, and
every answer of the AWS APIs with ``Content-Security-Policy: sandbox``: an S3 object
served as HTML (a ``response-content-type`` override on a forged "presigned" link: moto
checks no signature) never runs as this origin. Refusals are reported once per kind on
the server's terminal, escaped.

An API's routes (:class:`PublicRoutes`) are public on AWS: after the ``Host`` check and the
path check they reach the API unsigned and from any origin, whose CORS configuration the
browser then applies. Served on an origin of their own (``http://{api-id}.execute-api.
localhost:{port}``, a name browsers resolve to loopback themselves), a page a function
serves runs its scripts as it does on AWS, and its calls to the control plane, the view or
a bucket are another origin's, refused above. Served on the control plane's origin (the
path-style ``/restapis/{api-id}/{stage}/_user_request_/…`` that every HTTP client reaches),
they are sandboxed as the AWS answers are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from werkzeug.wrappers import Request, Response
from werkzeug.wsgi import ClosingIterator

from localcloud.server.bodies import InFlight, body_limit, read_bounded
from localcloud.server.policy import Policy
from localcloud.server.request_path import ambiguity, decided_path
from localcloud.server.signature import (
    SIGNATURE_SCHEMES,
    aws_error,
    signature_refusal,
    signed,
    signing_service,
    unsigned_refusal,
)
from localcloud.text import printable

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

VIEW_PREFIX: Final = "/_localcloud"
MOTO_API_PREFIX: Final = "/moto-api"
CORS_METHODS: Final = "GET, HEAD, POST, PUT, DELETE, PATCH"
FOREIGN_SITES: Final = ("cross-site", "same-site")
"""``Sec-Fetch-Site`` values of a request another origin's page made (another port of
localhost is ``same-site``)."""


SANDBOX: Final = "sandbox; default-src 'none'"
"""The ``Content-Security-Policy`` of an answer that must never run as the server's
origin: an opaque origin, no scripts, nothing loaded."""


class Destination(Enum):
    """Where the guard sends a request (:meth:`Guard.destination`)."""

    API_ORIGIN = "an API on its own origin"
    API_ROUTE = "an API's route on the control plane's origin"
    VIEW = "the live view"
    MOTO_API = "moto's control API"
    AWS = "an AWS API"


@dataclass(frozen=True)
class PublicRoutes:
    """What is public on AWS: an API's routes, answered unsigned by ``app`` (a WSGI app,
    which answers every request it is given: nothing falls through to the AWS APIs).

    ``origin(host)`` says whether a ``Host`` is an API's own origin (every path of it is
    that API's); ``route(path)`` whether a path is an API's route on the control plane's
    origin; ``body_limit`` is the most a request's body may hold (bytes), ``too_large``
    and ``throttled`` the APIs' answers to one over it and to one past what the server
    holds at once (:mod:`~localcloud.server.bodies`); ``copies`` how many times answering
    a route holds its body (an event, its base64, its JSON …), which the server counts it
    at.
    """

    origin: Callable[[str], bool]
    route: Callable[[str], bool]
    app: WSGIApp
    body_limit: int = 10 * 1024 * 1024
    copies: int = 1
    too_large: Callable[[], Response] = lambda: Response("Request Too Long\n", 413)
    throttled: Callable[[], Response] = lambda: Response("Too Many Requests\n", 429)


class Guard:
    """The server's WSGI app: applies a :class:`Policy`, then hands each request to the one
    app its :class:`Destination` names: ``app`` (the AWS APIs), ``view`` (mounted at
    :data:`VIEW_PREFIX`; ``app`` when not given) or ``public``'s."""

    def __init__(
        self,
        app: WSGIApp,
        policy: Policy,
        *,
        report: Callable[[str], None],
        view: WSGIApp | None = None,
        public: PublicRoutes | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.report = report
        self.view = view
        self.public = public
        self.in_flight = InFlight()
        """The bodies the server holds now (:mod:`~localcloud.server.bodies`)."""

    def destination(self, host: str, path: str) -> Destination:
        """Where a request for ``path`` (the decided path, :func:`~localcloud.server.
        request_path.decided_path`) on ``host`` goes."""
        if self.public is not None and self.public.origin(host.strip().lower()):
            return Destination.API_ORIGIN
        if self.public is not None and self.public.route(path):
            return Destination.API_ROUTE
        if path == VIEW_PREFIX or path.startswith(f"{VIEW_PREFIX}/"):
            return Destination.VIEW
        if path == MOTO_API_PREFIX or path.startswith(f"{MOTO_API_PREFIX}/"):
            return Destination.MOTO_API
        return Destination.AWS

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ, populate_request=False, shallow=True)
        host = request.headers.get("Host")
        refusal = self._host_refusal(host)
        if refusal is not None:
            return refusal(environ, start_response)
        if request.headers.get("Transfer-Encoding") and request.headers.get("Content-Length"):
            # Two lengths for one body: servers disagree on which holds (RFC 9112, section
            # 6.1: "A server MAY reject a request that contains both"), which is how a
            # body bigger than its declared length slipped past the API's quota.
            return self._refuse(
                "framing",
                str(request.headers.get("Content-Length")),
                400,
                "a request with both Content-Length and Transfer-Encoding is refused: send one",
            )(environ, start_response)
        path = decided_path(environ)
        destination = self.destination(str(host), path)
        unsigned = not request.headers.get("Authorization", "").startswith(SIGNATURE_SCHEMES)
        if destination in (Destination.API_ORIGIN, Destination.API_ROUTE, Destination.VIEW) or (
            unsigned and destination is Destination.AWS
        ):
            why = ambiguity(environ)
            if why is not None:
                return self._refuse(
                    "ambiguous",
                    path,
                    400,
                    f"the path {path!r} is ambiguous ({why}): servers route it differently, "
                    "so the local cloud does not; send it without",
                )(environ, start_response)
        public = destination in (Destination.API_ORIGIN, Destination.API_ROUTE)
        refusal, cross_origin = (None, False) if public else self._check(request, destination, path)
        if refusal is not None:
            return refusal(environ, start_response)
        held = self._hold_body(request, destination, environ)
        if isinstance(held, Response):
            return held(environ, start_response)
        try:
            answer = self._answer(request, destination, cross_origin, environ, start_response)
        except BaseException:
            self.in_flight.give(held)
            raise
        return ClosingIterator(answer, [lambda: self.in_flight.give(held)])

    def _hold_body(
        self, request: Request, destination: Destination, environ: dict[str, Any]
    ) -> int | Response:
        """The bytes of the request's body, now held (:mod:`~localcloud.server.bodies`),
        or the answer to a body over its destination's bound (413) or past what the server
        holds at once (429). Read by no one yet, except a chunked one, read here."""
        public = destination in (Destination.API_ORIGIN, Destination.API_ROUTE)
        if public:
            assert self.public is not None
            limit: int | None = self.public.body_limit
        else:
            limit = body_limit(signing_service(str(request.headers.get("Authorization", ""))))
        if limit is None:
            return 0  # S3's objects: what the account stores
        size = read_bounded(environ, limit)
        if size is None:
            self._note("too large", request.method, f"a request body over {limit:,} bytes: 413")
            if public:
                assert self.public is not None
                return self.public.too_large()
            return aws_error(
                request,
                413,
                "RequestEntityTooLargeException",
                "RequestEntityTooLarge",
                f"Request must be smaller than {limit} bytes",
            )
        if public:
            assert self.public is not None
            size *= self.public.copies
        if not self.in_flight.take(size):
            self._note("in flight", request.method, "request bodies past what it holds: 429")
            if public:
                assert self.public is not None
                return self.public.throttled()
            return aws_error(request, 429, "ThrottlingException", "Throttling", "Rate exceeded")
        return size

    def _answer(
        self,
        request: Request,
        destination: Destination,
        cross_origin: bool,
        environ: dict[str, Any],
        start_response: Callable[..., Any],
    ) -> Any:
        """The answer of the app ``destination`` names, its headers as the guard sets them."""
        path = decided_path(environ)
        if destination in (Destination.API_ORIGIN, Destination.API_ROUTE):
            return self._public_route(destination, environ, start_response)
        if cross_origin and request.method == "OPTIONS":
            return self._preflight(request)(environ, start_response)
        view = destination is Destination.VIEW

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(k, v) for k, v in headers if not k.lower().startswith("access-control-")]
            kept += [
                ("Cross-Origin-Resource-Policy", "same-origin"),
                ("X-Content-Type-Options", "nosniff"),
            ]
            if cross_origin:
                kept += _cors_headers(str(request.headers["Origin"]))
            if not view:
                # An AWS answer is never a page: an S3 object served with a text/html type
                # (a response-content-type override, a presigned link opened directly)
                # must not run as this origin.
                kept += [("Content-Security-Policy", SANDBOX)]
            if view:
                kept += [
                    (
                        "Content-Security-Policy",
                        "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                    ),
                    ("X-Frame-Options", "DENY"),
                ]
            return start_response(status, kept, exc_info)

        if view and self.view is not None:
            # Mounted as werkzeug's DispatcherMiddleware mounts an app: the prefix moves
            # from PATH_INFO to SCRIPT_NAME.
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + VIEW_PREFIX
            environ["PATH_INFO"] = path[len(VIEW_PREFIX) :]
            return self.view(environ, start)
        return self.app(environ, start)

    def _public_route(
        self, destination: Destination, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Any:
        """An API's route, public on AWS: the origin is the API's to answer (its own CORS
        headers reach the browser, which decides, as it does for the API on AWS), and no
        signature is asked for. On its own origin it is answered as API Gateway answers;
        on the control plane's, sandboxed."""
        assert self.public is not None
        if destination is Destination.API_ORIGIN:
            return self.public.app(environ, start_response)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [
                *headers,
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", SANDBOX),
            ]
            return start_response(status, kept, exc_info)

        return self.public.app(environ, start)

    def _check(
        self, request: Request, destination: Destination, path: str
    ) -> tuple[Response | None, bool]:
        """``(refusal or None, whether the request is an allowed cross-origin one)`` of a
        request to the view, moto's control API or an AWS API."""
        host = request.headers.get("Host")
        origin = request.headers.get("Origin")
        cross_origin = False
        if origin is not None and not self.policy.own_origin(origin, host):
            if origin.lower() not in self.policy.origins:
                return self._refuse(
                    "origin",
                    origin,
                    403,
                    f"cross-origin request from {origin!r} refused; to allow a page of "
                    "yours, start the local cloud with --allow-origin ORIGIN",
                ), False
            cross_origin = True
        elif origin is None and request.headers.get("Sec-Fetch-Site") in FOREIGN_SITES:
            return self._refuse(
                "origin",
                str(request.headers.get("Referer", "another site")),
                403,
                "request from another site refused (Sec-Fetch-Site: "
                f"{request.headers.get('Sec-Fetch-Site')}); open the page directly",
            ), False
        if cross_origin and request.method == "OPTIONS":
            return None, True  # a preflight of an allowed origin: answered by the guard
        if destination is Destination.VIEW:
            if request.method not in ("GET", "HEAD"):
                refusal = Response("the live view is read-only: GET and HEAD only\n", 405)
                refusal.headers["Allow"] = "GET, HEAD"
                return refusal, False
            return None, cross_origin
        if destination is Destination.MOTO_API:
            return self._refuse(
                "moto-api",
                path,
                404,
                "moto's control API is not served by the local cloud",
            ), False
        if not signed(request):
            self._note("unsigned", f"{request.method} {path}")
            return unsigned_refusal(request), False
        malformed = signature_refusal(request)
        if malformed is not None:
            self._note("signature", f"{request.method} {path}", "malformed Authorization header")
            return malformed, False
        return None, cross_origin

    def _host_refusal(self, host: str | None) -> Response | None:
        """The refusal of a Host this local cloud does not answer for, else ``None``."""
        if self.policy.host_allowed(host):
            return None
        return self._refuse(
            "host",
            str(host),
            403,
            f"Host {host!r} is not a name this local cloud answers for "
            f"(accepted: {', '.join(self.policy.allowed_hosts())}); reach it by one of "
            "those, or start it with --allow-host NAME",
        )

    def _refuse(self, reason: str, subject: str, status: int, message: str) -> Response:
        self._note(reason, subject, message)
        return Response(f"{message}\n", status, mimetype="text/plain")

    def _note(self, reason: str, subject: str, message: str | None = None) -> None:
        if reason in self.policy._reported:
            return
        self.policy._reported.add(reason)
        what = message or f"unsigned AWS call refused: {subject}"
        self.report(
            f"[refused] {printable(what[:400])} (said once: further refusals of this kind "
            "are not printed)"
        )

    @staticmethod
    def _preflight(request: Request) -> Response:
        response = Response(status=204)
        response.headers.extend(_cors_headers(str(request.headers["Origin"])))
        response.headers["Access-Control-Allow-Methods"] = CORS_METHODS
        requested = request.headers.get("Access-Control-Request-Headers")
        if requested:
            response.headers["Access-Control-Allow-Headers"] = requested
        response.headers["Access-Control-Max-Age"] = "600"
        return response


def _cors_headers(origin: str) -> list[tuple[str, str]]:
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Expose-Headers", "*"),
        ("Vary", "Origin"),
    ]
