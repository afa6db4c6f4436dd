"""Order Guard on the local cloud: a :class:`~localcloud.account.LocalCloud` with
``template.yaml`` deployed as ``sam deploy`` would deploy it (samconfig's parameters for
an environment, or the command line's overrides) and the workers' write decisions in the
live view (:mod:`.decisions`), handed in through the local cloud's extension interface.

Also an empty account for a seed lab's machine (``template=None``, ``lab="q05"``), which
the lab's own commands then fill (:mod:`.labs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import Template, load
from order_guard_tools.decisions import Decisions
from order_guard_tools.project import SAMCONFIG_PATH, STACK_NAME, TEMPLATE_PATH

_DEFAULT: Any = object()


def order_guard_template(
    config_env: str = "default",
    parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
) -> Template:
    """``template.yaml`` with the parameters ``sam deploy --config-env <config_env>
    [--parameter-overrides …]`` would give it (:func:`localcloud.cloudformation.template.load`)."""
    return load(
        TEMPLATE_PATH,
        samconfig=SAMCONFIG_PATH,
        config_env=config_env,
        parameter_overrides=parameter_overrides,
    )


class OrderGuardCloud(LocalCloud):
    """A local account with Order Guard's stack and its write decisions.

    Args:
        template: the template to deploy (default: :func:`order_guard_template` of
            ``config_env`` and ``parameter_overrides``); ``None`` for an empty account
            (a lab's machine).
        config_env, parameter_overrides: as for ``sam deploy``.
        lab: the seed lab this account is the machine of (its title in the view, and
            what ``make lab-check`` asks).
        options: :class:`~localcloud.account.LocalCloud`'s other keyword arguments
            (``server_port``, ``visibility_timeout``, ``stack_name`` …).
    """

    def __init__(
        self,
        *,
        template: Template | None = _DEFAULT,
        config_env: str = "default",
        parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
        lab: str | None = None,
        stack_name: str = STACK_NAME,
        **options: Any,
    ) -> None:
        if template is _DEFAULT:
            template = order_guard_template(config_env, parameter_overrides)
        self.lab = lab
        """The seed lab this account is the machine of (``make lab``), if any."""
        self.decisions = Decisions()
        """Every write decision of the workers (the live view's section)."""
        super().__init__(
            template=template,
            stack_name=stack_name if template is not None else None,
            title=f"lab {lab.upper()}" if lab else None,
            extensions=[self.decisions.extension(lab)],
            **options,
        )
