"""The port a seed lab's own code calls, read from that code, and what ``make lab`` says
about a port.

A lab's code is what its text has the learner write with a here-document (``cat > app.py
<<'PY'`` … ``PY``: Q05's worker creates its DynamoDB client with
``endpoint_url='http://127.0.0.1:5000'``) and the starter the lab machine provides
(:data:`order_guard_tools.labs.STARTERS`, deployed as ``app.py``). A worker that names a
local endpoint reaches that port whatever port the lab is served on, so ``make lab``
serves such a lab only there, unless ``--any-port`` says the code was changed to call the
port asked for. A worker that names none reaches the lab through the environment the
local cloud gives every function, on any port (EV05's, the starters, the suite's own
workers).

The labs' text is not in the repository: :data:`TEXTS` (the Makefile's ``LAB_TEXTS``) is
where it sits on the project's machines. Without it, only the starter is read.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from order_guard_tools.labs.machines import Lab
from order_guard_tools.project import ROOT

DEFAULT_PORT: Final = 5000
"""The port ``make lab``, ``lab-env`` and ``lab-check`` use unless ``PORT`` is given: the
one the labs' text runs against (127.0.0.1:5000)."""
TEXTS: Final = ROOT.parent / "shared" / "labs"
"""The folder holding the labs' text (``q05.zh.txt``, ``q05.de.txt``, ``ev05.zh.txt`` …)
beside the clone, as the Makefile's ``LAB_TEXTS`` defaults to."""

_HERE_DOC: Final = re.compile(r"^cat\s+>\s*(\S+)\s+<<-?\s*(['\"]?)(\w+)\2\s*$")
"""A line opening a here-document that writes a file, as the labs' text has them:
``cat > app.py <<'PY'`` (group 1: the file, group 3: the closing word)."""
_LOCAL_ENDPOINT: Final = re.compile(
    r"(?:https?://)?(?:127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1\]):(\d{1,5})(?!\d)"
)
"""A local endpoint with its port: ``http://127.0.0.1:5000``, ``localhost:5000``."""


@dataclass(frozen=True)
class Call:
    """One place a lab's code names a local endpoint.

    Attributes:
        url: the endpoint as written (``http://127.0.0.1:5000``).
        port: its port.
        path: the file holding it (a lab text, or a starter).
        line: the line of ``path`` holding it (1-based).
        file: the file of the lab's code it is in (``app.py``).
    """

    url: str
    port: int
    path: Path
    line: int
    file: str

    def where(self) -> str:
        """``path:line``, the path relative to the repository when inside it."""
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"


@dataclass(frozen=True)
class LabCode:
    """What a lab's code calls, as read from its text and its starter.

    Attributes:
        lab: the lab.
        calls: every local endpoint its code names, the Chinese text's first (the lab's
            own; the others are its translations), then the other texts', then the
            starter's.
        texts: the lab's texts read (``q05.*.txt`` in the folder).
        folder: the folder the texts were looked for in.
    """

    lab: Lab
    calls: tuple[Call, ...]
    texts: tuple[Path, ...]
    folder: Path

    def conflict(self, port: int) -> Call | None:
        """The first call of a port other than ``port``, if any."""
        return next((call for call in self.calls if call.port != port), None)

    def holders(self, port: int) -> str:
        """Where the code calls ``port``, for a message: the first place with its path,
        the rest by file name and line (``/…/q05.zh.txt:63, also q05.de.txt:44 and
        q05.ko.txt:75``)."""
        calls = [call for call in self.calls if call.port == port]
        first, rest = calls[0].where(), [f"{c.path.name}:{c.line}" for c in calls[1:]]
        if not rest:
            return first
        return f"{first}, also {', '.join(rest[:-1])}{' and ' if len(rest) > 1 else ''}{rest[-1]}"

    def says(self, call: Call) -> str:
        """``lab Q05's app.py calls http://127.0.0.1:5000 itself (where)``."""
        return (
            f"lab {self.lab.name.upper()}'s {call.file} calls {call.url} itself "
            f"({self.holders(call.port)})"
        )


def _here_documents(text: Path) -> Iterator[tuple[str, int, str]]:
    """Each line inside the here-documents of ``text``: (the file it writes, line number,
    line)."""
    closing: str | None = None
    file = ""
    for number, line in enumerate(text.read_text(encoding="utf-8").splitlines(), start=1):
        if closing is None:
            opened = _HERE_DOC.match(line.strip())
            if opened:
                file, closing = opened.group(1), opened.group(3)
        elif line.strip() == closing:
            closing = None
        else:
            yield file, number, line


def _calls(lines: Iterator[tuple[str, int, str]], path: Path) -> Iterator[Call]:
    for file, number, line in lines:
        for found in _LOCAL_ENDPOINT.finditer(line):
            yield Call(found.group(0), int(found.group(1)), path, number, file)


def _own_text_first(text: Path) -> tuple[bool, str]:
    """The Chinese text first (``q05.zh.txt``: the lab's own), then by name."""
    return (not text.name.endswith(".zh.txt"), text.name)


def lab_code(lab: Lab, texts: Path = TEXTS) -> LabCode:
    """Read what ``lab``'s code calls from its texts in ``texts`` (every
    ``<lab>.*.txt``, missing or not) and from its starter."""
    found = sorted(texts.glob(f"{lab.name}.*.txt"), key=_own_text_first)
    calls = [call for text in found for call in _calls(_here_documents(text), text)]
    starter = lab.starter.read_text(encoding="utf-8").splitlines()
    calls += _calls((("app.py", n, line) for n, line in enumerate(starter, start=1)), lab.starter)
    return LabCode(lab, tuple(calls), tuple(found), texts)


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``host:port`` now."""
    try:
        socket.create_server((host, port)).close()
    except OSError:
        return False
    return True


def who_holds(port: int) -> str:
    """How to find what listens on ``port`` (Linux's ``ss``, or ``lsof``)."""
    return f"ss -ltnp 'sport = :{port}' (or lsof -i :{port}) names it"


def refusal(code: LabCode, port: int, *, any_port: bool) -> str | None:
    """Why ``make lab`` must not serve ``code.lab`` on ``port``, or None.

    A lab whose code calls another port is refused unless ``any_port`` (the learner edited
    that line; the suite's workers call none): the message names the port, the line that
    holds it, and the two ways that work.
    """
    call = code.conflict(port)
    if call is None or any_port:
        return None
    name = code.lab.name
    if port_is_free(call.port):
        first = f"make lab LAB={name} (port {call.port} is free)"
    else:
        first = f"free port {call.port} ({who_holds(call.port)}) and run make lab LAB={name}"
    return (
        f"{code.says(call)}, so the lab runs on port {call.port} only, not {port}: {first}; "
        f"or edit that line of your {call.file} to call port {port} and add --any-port "
        f"(make lab LAB={name} PORT={port} ANY_PORT=1)"
    )


def busy_advice(code: LabCode, port: int, *, any_port: bool) -> str:
    """What to do when ``port`` is busy: free it, and another port only where the lab's
    code would follow (it calls none of its own, or ``any_port`` says it was edited)."""
    name = code.lab.name
    free = f"stop what holds it (another make serve or make lab? {who_holds(port)})"
    calls = [call for call in code.calls if call.port == port]
    if any_port and code.calls:
        return (
            f"{free}, or pick another port, with your code edited to call it: "
            f"make lab LAB={name} PORT={port + 1} ANY_PORT=1"
        )
    if calls:
        return f"{code.says(calls[0])}, so the lab needs this port: {free}"
    if not code.texts:
        return (
            f"{free}; another port works only if the worker you deploy names no port of "
            f"its own (no text of lab {name.upper()} in {code.folder} to check): "
            f"make lab LAB={name} PORT={port + 1}"
        )
    return (
        f"{free} or pick another port (lab {name.upper()}'s code calls none of its own): "
        f"make lab LAB={name} PORT={port + 1}"
    )
