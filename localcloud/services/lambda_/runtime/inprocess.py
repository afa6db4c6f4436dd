"""An execution environment in this process: the handler runs in the invoking thread.

Used for from-source deploys into an account that no process could reach (no endpoint:
``make demo``'s embedded account, the in-process clouds of the tests, which inject faults
into the handler's own calls); a served account runs them in execution environments of
their own (:func:`~localcloud.services.lambda_.runtime.registry.runnable`). The handler
module is imported from the function's ``CodeUri`` on the first invocation (the cold
start) with the function's environment applied, as a new module object that no other
environment shares, so module-scope clients and configuration are built once per
environment, as on Lambda. The modules it imports in turn are the process's (they are
stateless in this project). Loading and running go through
:mod:`~localcloud.services.lambda_.runtime.contract` (awslambdaric's own code).

The differences from an execution environment of its own, which runs a deployment package
as Lambda does (:mod:`~localcloud.services.lambda_.runtime.environments`): the process's
packages are importable (a dependency missing from ``requirements.txt`` is not noticed),
the environment variables are applied to the shared process environment for the length of
the invocation (:func:`~localcloud.services.lambda_.runtime.environment.applied`; a
variable the template forgets but your shell sets is visible), and a timeout is reported
but not enforced (a thread cannot be stopped). Output is attributed by
:mod:`~localcloud.services.lambda_.runtime.output`. Modules a handler imports (not the
handler module itself) are the process's, shared between functions: a thread pool kept at
module scope in a shared module is shared too, and its threads write into the environment
that started them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from localcloud.services.lambda_.runtime import contract, powertools
from localcloud.services.lambda_.runtime.environment import applied
from localcloud.services.lambda_.runtime.functions import Function, Ran
from localcloud.services.lambda_.runtime.output import EnvironmentOutput, captured


@dataclass(eq=False)
class InProcessFunction(Function):
    """A function whose handler runs in this process (see the module docstring)."""

    _handler: contract.Handler | None = field(default=None, repr=False)
    _module: ModuleType | None = field(default=None, repr=False)
    _cold_start_flags: dict[str, bool] = field(default_factory=dict, repr=False)

    @property
    def warm(self) -> bool:
        return self._handler is not None

    @property
    def module_globals(self) -> dict[str, Any]:
        """The handler module's namespace in this execution environment (empty when
        cold): module-scope state, as the tests read it."""
        return vars(self._module) if self._module is not None and self.warm else {}

    def sibling(self) -> InProcessFunction:
        return replace(
            self,
            output=EnvironmentOutput(),
            invoking=False,
            invocations=0,
            _handler=None,
            _module=None,
            _cold_start_flags={},
        )

    def _discard(self) -> None:
        self._handler = None
        self._module = None
        self._cold_start_flags.clear()

    def _run(self, event_body: bytes, request_id: str, deadline_ms: int) -> Ran:
        with (
            applied(self.runtime_variables(traced=True)),
            captured(self),
            powertools.cold_start(self._cold_start_flags),
        ):
            step = contract.run(
                self._handler,
                self._load,
                event_body,
                request_id=request_id,
                function_arn=self.arn,
                deadline_ms=deadline_ms,
            )
            self._handler = step.handler  # kept only once init succeeded
            output = self.output.take()
        return Ran(step.outcome, output, init_ms=step.init_ms, gone=step.exiting)

    def _load(self) -> contract.Handler:
        """The handler, imported by the runtime's own rule from a new module object.

        The task root goes first on ``sys.path`` (``LAMBDA_TASK_ROOT`` is on the runtime's
        path) and stays there, for imports the handler makes later; the handler module is
        taken out of ``sys.modules`` around the import, so this environment gets a module
        of its own and the one the process had comes back afterwards.

        Raises:
            FaultException, Exception: as :func:`~localcloud.services.lambda_.runtime.contract.
                load_handler`.
        """
        root = str(self.code_uri)
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
        module_name = self.handler.rpartition(".")[0].replace("/", ".")
        previous = sys.modules.pop(module_name, None) if module_name else None
        try:
            handler = contract.load_handler(self.handler)
            self._module = sys.modules.get(module_name)
            return handler
        finally:
            if module_name:
                sys.modules.pop(module_name, None)
                if previous is not None:
                    sys.modules[module_name] = previous
