"""src/Makefile, the functions' `sam build` (Metadata BuildMethod: makefile): the pinned
dependencies and the code, with bytecode Python will use on Lambda's read-only
/var/task instead of compiling every module on each cold start."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.template import Template
from tests.support.wheelhouse import offline

FUNCTIONS = ("QueueWorkerFunction", "WorkflowWorkerFunction")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    artifacts = tmp_path_factory.mktemp("QueueWorkerFunction")
    subprocess.run(  # noqa: S603 - make, the project's own Makefile
        [
            "make",
            "--no-print-directory",
            "-C",
            str(ROOT / "src"),
            "build-QueueWorkerFunction",
            f"ARTIFACTS_DIR={artifacts}",
            f"PYTHON={sys.executable}",
        ],
        check=True,
        capture_output=True,
        env={**os.environ, **offline()},
    )
    return artifacts


def test_both_functions_are_built_by_the_makefile(template: Template) -> None:
    makefile = (ROOT / "src" / "Makefile").read_text()
    for name in FUNCTIONS:
        assert template.resources[name]["Metadata"]["BuildMethod"] == "makefile"
        assert f"build-{name}" in makefile


def test_the_package_holds_the_pinned_requirements_and_the_code(built: Path) -> None:
    pins = [
        line.split("==")
        for line in (ROOT / "src" / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    for name, version in pins:
        assert (built / f"{name.replace('-', '_')}-{version}.dist-info").is_dir(), name
    sources = sorted(p.name for p in (ROOT / "src" / "order_guard").glob("*.py"))
    assert sorted(p.name for p in (built / "order_guard").glob("*.py")) == sources
    assert not (built / "requirements.txt").exists()
    assert not (built / "Makefile").exists()


def test_every_module_has_checked_hash_bytecode_matching_its_source(built: Path) -> None:
    modules = [p for p in built.rglob("*.py") if "__pycache__" not in p.parts]
    assert len(modules) > 100  # Powertools' modules, jmespath, typing_extensions, ours
    tag = sys.implementation.cache_tag  # cpython-313, the python3.13 runtime's
    for module in modules:
        cached = Path(importlib.util.cache_from_source(str(module)))
        assert cached.name.endswith(f".{tag}.pyc"), cached
        header = cached.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER, cached
        # PEP 552: flags 0b11 is a checked hash-based pyc, valid whatever the file times;
        # Python uses it when the 8-byte hash equals the source's.
        assert int.from_bytes(header[4:8], "little") == 0b11, cached
        assert header[8:16] == importlib.util.source_hash(module.read_bytes()), cached
    stray = [
        p
        for p in built.rglob("*.pyc")
        if not (p.parent.parent / f"{p.name.split('.')[0]}.py").exists()
    ]
    assert stray == []  # no bytecode without its source (none copied from src/)
