"""The live view of the local cloud: the seed labs' "AWS View", served by ``make serve``.

A Flask app (Flask is what moto's server already runs on) mounted on the local server at
``/_localcloud/``, next to the AWS APIs (an S3 bucket name cannot start with ``_``, so
the path never shadows one). The page is server-rendered HTML; htmx (installed from the
npm registry by ``make setup``, served from ``node_modules``) swaps in a fresh copy of
the sections every second. Polling rather than server-sent events: the state is read
from the emulator's own APIs, which push nothing, so a 1 s poll is as fresh as a stream
would be, needs no connection kept per browser tab, and recovers by itself when the
server restarts.

Routes: ``/`` the page, ``/sections`` the part that refreshes, ``/state.json`` the same
data for ``python -m localcloud status``, ``/htmx.min.js`` the library. All are ``GET``
and read-only; the server's guard (:mod:`localcloud.server.guard`) refuses every other method,
foreign origins and framing.

Every refresh reads and sends a bounded amount, whatever the account holds: one page of
write decisions and invocations (:data:`~localcloud.state.history.PAGE_SIZE`, newest first,
``?decisions=N`` / ``?invocations=N`` for older pages), one page of each table (one
``Scan`` with ``Limit``; ``?after.TABLE=ID`` for the next) with
its item count, the newest executions; and long strings are cut, on the page and in the
hover text alike (:func:`short`, :func:`hover`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, jsonify, render_template, request, send_file

from localcloud.project import HTMX

PATH = "/_localcloud"


Reader = Callable[[Mapping[str, str]], Mapping[str, Any]]
"""What the page shows, from the request's query arguments (the paging of the tables
and lists): the account's state as :mod:`localcloud.state` reads it, given by whoever
mounts the view (:mod:`localcloud.account`)."""


def create_app(read: Reader) -> Flask:
    """The view's WSGI app (mounted at :data:`PATH`), showing what ``read`` returns."""
    app = Flask(__name__, template_folder=str(Path(__file__).parent / "templates"))
    app.jinja_env.filters["short"] = short
    app.jinja_env.filters["hover"] = hover
    app.jinja_env.filters["item"] = item
    app.jinja_env.filters["clock"] = clock

    def data() -> dict[str, Any]:
        return dict(read(request.args))

    @app.get("/")
    def page() -> str:
        return render_template("page.html", htmx=HTMX.is_file(), **data())

    @app.get("/sections")
    def sections() -> str:
        return render_template("sections.html", **data())

    @app.get("/state.json")
    def state() -> Response:
        return jsonify(data())

    @app.get("/htmx.min.js")
    def htmx() -> Response:
        if not HTMX.is_file():
            abort(404)
        return send_file(HTMX, mimetype="text/javascript")

    return app


def short(value: Any, keep: int = 14) -> str:
    """A long id cut to ``keep`` characters with an ellipsis (the page shows the whole
    id on hover)."""
    text = "" if value is None else str(value)
    return text if len(text) <= keep else f"{text[: keep - 1]}…"


HOVER_LIMIT = 256
"""Characters of a string the page keeps in hover text (an order id may be 2048 bytes)."""


def hover(value: Any) -> str:
    """The hover text of a shortened id: the whole id up to :data:`HOVER_LIMIT`
    characters, so a page of long ids stays small."""
    return short(value, HOVER_LIMIT)


def item(value: Any) -> str:
    """An order item's business details as ``qty 4, 1100¢`` (``—`` for none)."""
    if not isinstance(value, dict):
        return "—"
    return f"qty {value.get('quantity')}, {value.get('total_cents')}¢"


def clock(epoch_s: Any) -> str:
    """Local wall-clock time of an epoch instant, to the second."""
    if not isinstance(epoch_s, int | float):
        return ""
    return time.strftime("%H:%M:%S", time.localtime(epoch_s))
