"""Generated histories against the real queue worker on the local cloud (docs/proofs.md,
"Generated histories against the real code"): the state machine is
tests/support/histories.py; its size is ``ORDER_GUARD_HISTORIES`` (default 25,
derandomized) and ``make histories`` runs the nightly size.
"""

from __future__ import annotations

import pytest

from tests.support.histories import Histories


@pytest.mark.usefixtures("cloud")
class TestHistories(Histories.TestCase):  # type: ignore[misc,valid-type]
    """pytest collects the state machine's test case through this class."""
