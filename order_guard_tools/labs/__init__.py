"""The seed labs on the local cloud: each lab's machine (:mod:`.machines`: what the lab
says its machine provides, made through the account's own APIs), ``make lab`` and
``lab-env`` (:mod:`.serve`; the port a lab's own code calls, which ``make lab`` serves
it on: :mod:`.ports`), and ``make lab-check`` (:mod:`.check`: each lab's named checks,
:mod:`.q05_checks` and :mod:`.ev05_checks`, judged by :mod:`.evidence`). The labs' text
is ``../shared/labs/``; the README's "Do the labs locally" says how to run them.
"""

from order_guard_tools.labs.machines import (
    ACCOUNT_ID,
    EV05,
    LABS,
    Q05,
    REGION,
    STARTERS,
    Lab,
    lab_named,
    provision,
)

__all__ = [
    "ACCOUNT_ID",
    "EV05",
    "LABS",
    "Q05",
    "REGION",
    "STARTERS",
    "Lab",
    "lab_named",
    "provision",
]
