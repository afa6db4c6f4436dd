"""The local cloud's own suite, run from its installed wheel (issue 31), in ``make test``'s
pool (issue 48): the suite's modules split into :data:`PARTS` parts of about equal
recorded duration (:func:`tests.support.pool.balanced`), each part a test of its own that
runs its modules with the wheel's interpreter, from a folder outside the repository, in an
environment naming nothing of it (``python -m pytest --pyargs localcloud.tests.<module>
…``). Each part is a work unit of the pool (:data:`tests.support.pool.SPLIT`), so the parts
spread over the workers with every other file.

Every module of the suite is in exactly one part (``balanced``, tests/tools/test_pool.py),
and each part passes only if every one of its modules ran and every test of them passed:
none failed, errored or was skipped. ``test_wheel.py`` checks that the wheel collects the
same modules as the checkout holds.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support import durations
from tests.support.paths import ROOT
from tests.support.pool import balanced
from tests.support.wheel import installed, outside

SUITE = ROOT / "localcloud" / "tests"
MODULES = sorted(path.stem for path in SUITE.glob("test_*.py"))
"""The suite's modules, as the checkout holds them (the wheel carries the same: test_wheel)."""
PARTS = 4
"""Parts of the suite: each about the length of the longest end-to-end file, so that they
and the other files fill the pool's workers evenly (they go out first: the longest units);
each costs one interpreter start and collection (~5 s of CPU)."""
UNKNOWN_S = 5.0
"""The weight of a module no run has recorded yet."""


def weights() -> dict[str, float]:
    """Each module's seconds in the last run that ran it whole (``UNKNOWN_S`` if none)."""
    figures = durations.known()
    return {
        module: figures.get(f"localcloud/tests/{module}.py", {}).get("seconds") or UNKNOWN_S
        for module in MODULES
    }


PLAN = balanced(weights(), PARTS)


def results(report: Path) -> dict[str, dict[str, float]]:
    """Per module of a JUnit XML ``report``: its tests' ``seconds`` and counts of
    ``passed``, ``failed`` (failures and errors) and ``skipped``."""
    found: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for case in ElementTree.parse(report).iter("testcase"):
        # localcloud.tests.<module>[.<class>]: the suite ran with site-packages as rootdir
        module = (case.get("classname", "").split(".") + ["?"] * 3)[2]
        figures = found[module]
        figures["seconds"] += float(case.get("time", 0))
        if case.find("skipped") is not None:
            figures["skipped"] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            figures["failed"] += 1
        else:
            figures["passed"] += 1
    return found


@pytest.mark.parametrize("part", range(len(PLAN)), ids=lambda i: f"part-{i + 1}-of-{len(PLAN)}")
def test_the_package_suite_passes_from_the_installed_wheel(
    part: int, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    wheel = installed()
    modules = PLAN[part]
    report = tmp_path / "suite.xml"
    log = tmp_path / "suite.log"
    with log.open("w") as output:
        done = subprocess.run(  # noqa: S603 - the installed wheel's own suite
            [str(wheel.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
             f"--rootdir={wheel.site_packages}", f"--junitxml={report}",
             "--pyargs", *(f"localcloud.tests.{m}" for m in modules)],
            cwd=tmp_path, env=outside(tmp_path, wheel), stdout=output, stderr=subprocess.STDOUT,
            timeout=1200, check=False,
        )  # fmt: skip
    printed = log.read_text()
    assert done.returncode == 0, printed[-6000:]
    ran = results(report)
    request.node.user_properties.append(
        (
            durations.FILE_DURATIONS,
            {f"localcloud/tests/{m}.py": round(ran[m]["seconds"], 3) for m in modules if m in ran},
        )
    )
    assert sorted(ran) == modules, printed[-2000:]  # every module of the part ran
    for module, figures in ran.items():
        assert figures["passed"] > 0, module
        assert (figures["failed"], figures["skipped"]) == (0, 0), (module, printed[-6000:])
