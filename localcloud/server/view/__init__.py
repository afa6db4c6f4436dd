"""The live view of the local cloud: an "AWS View" of the account, served beside its APIs.

A Flask app (Flask is what moto's server already runs on) mounted on the local server at
``/_localcloud/``, next to the AWS APIs (an S3 bucket name cannot start with ``_``, so
the path never shadows one). The page is server-rendered HTML; htmx (installed from the
npm registry by ``make setup``, served from ``node_modules``) swaps in a fresh copy of
the sections every second. Polling rather than server-sent events: the state is read
from the emulator's own APIs, which push nothing, so a 1 s poll is as fresh as a stream
would be, needs no connection kept per browser tab, and recovers by itself when the
server restarts.

Routes: ``/`` the page, ``/sections`` the part that refreshes, ``/state.json`` the same
data for a ``status`` command, ``/htmx.min.js`` the library, ``/code/<function>/<sha256>.zip``
a function's package (``GetFunction``'s ``Code.Location``). All are ``GET`` and
read-only; the server's guard (:mod:`localcloud.server.guard`) refuses every other method,
foreign origins and framing.

Every refresh reads and sends a bounded amount, whatever the account holds: one page of
writes and invocations (:data:`~localcloud.state.history.PAGE_SIZE`, newest first,
``?writes=N`` / ``?invocations=N`` for older pages), one page of each table (one ``Scan``
with ``Limit``; ``?after.TABLE=KEY`` for the next) with its item count, the newest
executions; and long strings are cut, on the page and in the hover text alike
(:func:`short`, :func:`hover`).

A project adds sections of its own (:class:`ViewPart`: Jinja templates in a folder of its
own, shown before the account's writes, with the filters they use); what they show comes
with the page's data (the reader). Everything on the page goes through Jinja's
autoescaping, the project's sections included, and before it through :func:`shown`:
what ``status`` prints escaped (an ESC, a right-to-left override), the page shows
escaped too, by the same rule (:func:`localcloud.text.printable`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jinja2
from flask import Flask, Response, abort, jsonify, render_template, request, send_file
from markupsafe import Markup

from localcloud.text import printable

PATH: Final = "/_localcloud"
ROOT: Final = Path(__file__).resolve().parents[3]
"""The folder the local cloud lies in; ``npm ci`` installs the view's library there."""
PACKAGED_HTMX: Final = Path(__file__).resolve().parent / "static" / "htmx.min.js"
"""The view's one library as an installed wheel carries it (packaging/localcloud)."""
HTMX: Final = (
    PACKAGED_HTMX
    if PACKAGED_HTMX.is_file()
    else ROOT / "node_modules" / "htmx.org" / "dist" / "htmx.min.js"
)
"""The view's one library: the wheel's copy, or in a checkout where ``npm ci`` installs it
beside the local cloud (``package-lock.json`` pins it)."""


Reader = Callable[[Mapping[str, str]], Mapping[str, Any]]
Packages = Callable[[str, str], bytes | None]
"""``(function name, SHA-256 hex) -> the function's package``, or ``None``."""
"""What the page shows, from the request's query arguments (the paging of the tables
and lists): the account's state as :mod:`localcloud.state` reads it, given by whoever
mounts the view (:mod:`localcloud.account`)."""


@dataclass(frozen=True)
class ViewPart:
    """Sections a project adds to the page, before the account's writes.

    Args:
        templates: the folder of the sections' Jinja templates.
        sections: the templates to include, in order (names in ``templates``); each sees
            the page's data and the view's filters (``short``, ``hover``, ``clock``) and
            macro (``pager(name, info)``).
        filters: the Jinja filters the sections use besides the view's, by name.
    """

    templates: Path
    sections: tuple[str, ...]
    filters: Mapping[str, Callable[..., str]] = field(default_factory=dict)


def create_app(
    read: Reader, parts: Sequence[ViewPart] = (), *, packages: Packages | None = None
) -> Flask:
    """The view's WSGI app (mounted at :data:`PATH`), showing what ``read`` returns, with
    the sections of ``parts``; with ``packages``, ``/code/<function>/<sha256>.zip`` serves
    the package ``packages(function, sha256)`` returns (404 for ``None``): the link
    ``GetFunction`` answers as ``Code.Location``.

    Raises:
        ValueError: two parts give the same template or filter name, or a filter the view
            already has.
    """
    app = Flask(__name__, template_folder=str(Path(__file__).parent / "templates"))
    filters: dict[str, Callable[..., str]] = {
        "short": short,
        "hover": hover,
        "clock": clock,
    }
    extra_sections: list[str] = []
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(app.template_folder or "")]
    for part in parts:
        for name, function in part.filters.items():
            if name in filters:
                raise ValueError(f"the live view already has a filter named {name}")
            filters[name] = function
        for section in part.sections:
            if section in extra_sections or section in ("page.html", "sections.html"):
                raise ValueError(f"the live view already has a template named {section}")
            extra_sections.append(section)
        loaders.append(jinja2.FileSystemLoader(str(part.templates)))
    app.jinja_loader = jinja2.ChoiceLoader(loaders)
    # Every template is escaped, whatever its name: Flask's default escapes only .html,
    # .htm, .xml, .xhtml and .svg, and a project's section may be named otherwise; and
    # every value a template shows is made printable first (``finalize``).
    app.jinja_options = {**app.jinja_options, "autoescape": True, "finalize": shown}
    app.jinja_env.filters.update(filters)

    def data() -> dict[str, Any]:
        return dict(read(request.args))

    @app.get("/")
    def page() -> str:
        return render_template(
            "page.html", htmx=HTMX.is_file(), extra_sections=extra_sections, **data()
        )

    @app.get("/sections")
    def sections() -> str:
        return render_template("sections.html", extra_sections=extra_sections, **data())

    @app.get("/state.json")
    def state() -> Response:
        return jsonify(data())

    @app.get("/code/<name>/<wanted>.zip")
    def code(name: str, wanted: str) -> Response:
        found = packages(name, wanted) if packages is not None else None
        if found is None:
            abort(404)
        return Response(
            found,
            mimetype="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{wanted[:12]}.zip"'},
        )

    @app.get("/htmx.min.js")
    def htmx() -> Response:
        if not HTMX.is_file():
            abort(404)
        return send_file(HTMX, mimetype="text/javascript")

    return app


_MARKUP_TEXT: Final = re.compile(r"[^\t\n\r]+")
"""Markup but the tabs and line breaks a template's own markup is laid out with."""


def shown(value: Any) -> Any:
    """What a template's ``{{ … }}`` puts on the page, before Jinja's autoescaping: the
    value :func:`~localcloud.text.printable`, as ``status`` prints it (``\\x1b``,
    ``\\u202e``), in text, hover text and attributes alike (Jinja's ``finalize``).

    Markup (a macro's output, ``tojson``'s, a filter's that marks its result safe) keeps
    its tags and the tabs and line breaks it is laid out with; every other character of
    it is made printable by the same rule, so a value a filter marked safe (``|e``)
    cannot bring a raw control or bidirectional character either. ``printable`` adds
    only backslashes, letters and digits: what was escaped HTML stays escaped HTML.
    """
    if isinstance(value, Markup):
        # Markup in, markup out: printable adds no character HTML gives a meaning to.
        return Markup(_MARKUP_TEXT.sub(lambda text: printable(text[0]), value))  # noqa: S704
    return printable(value)


def short(value: Any, keep: int = 14) -> str:
    """A long id cut to ``keep`` characters with an ellipsis (the page shows the whole
    id on hover)."""
    text = "" if value is None else str(value)
    return text if len(text) <= keep else f"{text[: keep - 1]}…"


HOVER_LIMIT = 256
"""Characters of a string the page keeps in hover text (a DynamoDB key may be 2048 bytes)."""


def hover(value: Any) -> str:
    """The hover text of a shortened id: the whole id up to :data:`HOVER_LIMIT`
    characters, so a page of long ids stays small."""
    return short(value, HOVER_LIMIT)


def clock(epoch_s: Any) -> str:
    """Local wall-clock time of an epoch instant, to the second."""
    if not isinstance(epoch_s, int | float):
        return ""
    return time.strftime("%H:%M:%S", time.localtime(epoch_s))
