"""Every replaced method is in one registry: each fits the library as installed (a moto
upgrade that moves or changes one fails the test named after it), all install and
uninstall together, and a misfit installs nothing."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from airspeed import operators
from moto.logs.models import LogStream
from moto.sqs.models import SQSBackend
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from localcloud import services
from localcloud.patches.registry import Patch, PatchMismatch, Registry

REGISTRY = services.patch_registry()


@pytest.fixture
def none_installed() -> Iterator[None]:
    """No local cloud's patches in force for the test; put back as found."""
    users = services._USERS
    if users:
        REGISTRY.uninstall()
    yield
    if users:
        REGISTRY.install()


@pytest.mark.parametrize("patch", REGISTRY.patches, ids=lambda patch: patch.where)
def test_the_replaced_method_is_where_and_as_its_patch_expects(patch: Patch) -> None:
    assert patch.problem() is None, patch.where


def test_the_registry_lists_every_replaced_method_once() -> None:
    wheres = [patch.where for patch in REGISTRY.patches]
    assert len(wheres) == len(set(wheres))
    assert len(wheres) >= 25  # invoke, control plane, mappings, SQS, Step Functions, …


def test_install_replaces_all_and_uninstall_puts_every_original_back(
    none_installed: None,
) -> None:
    originals = {patch.where: vars(patch.owner)[patch.name] for patch in REGISTRY.patches}
    REGISTRY.install()
    try:
        REGISTRY.install()  # idempotent
        assert REGISTRY.installed()
        replaced = {p.where: vars(p.owner)[p.name] for p in REGISTRY.patches}
        assert all(replaced[where] is not originals[where] for where in originals)
        assert (
            REGISTRY.original(SQSBackend, "send_message")
            is originals["moto.sqs.models.SQSBackend.send_message"]
        )
    finally:
        REGISTRY.uninstall()
    assert {p.where: vars(p.owner)[p.name] for p in REGISTRY.patches} == originals
    assert not REGISTRY.installed()


def test_a_method_moto_no_longer_has_fails_by_name_and_nothing_is_installed(
    none_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = SQSBackend.send_message
    monkeypatch.delattr(SQSBackend, "send_message_batch")
    with pytest.raises(PatchMismatch, match=r"moto\.sqs\.models\.SQSBackend\.send_message_batch"):
        REGISTRY.install()
    assert SQSBackend.send_message is own
    assert not REGISTRY.installed()


def test_a_method_that_takes_other_parameters_fails_by_name(
    none_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def filter_log_events(self: Any, start_time: int, end_time: int) -> list[Any]:
        return []

    monkeypatch.setattr(LogStream, "filter_log_events", filter_log_events)
    with pytest.raises(PatchMismatch, match=r"LogStream\.filter_log_events takes"):
        REGISTRY.install()
    assert not REGISTRY.installed()


def test_a_subclass_that_defines_its_own_method_fails_by_name(
    none_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        StepFunctionsParserBackend, "stop_execution", lambda *a: None, raising=False
    )
    with pytest.raises(PatchMismatch, match="StepFunctionsParserBackend.stop_execution"):
        REGISTRY.install()
    assert not REGISTRY.installed()


def test_an_airspeed_element_the_sandbox_has_not_reviewed_fails_start_up_by_name(
    none_installed: None,
) -> None:
    """An airspeed upgrade that adds an element evaluating templates its own way could
    reach past the mapping template sandbox: nothing is installed, the element named."""

    class Unreviewed(operators.Text):
        def evaluate_raw(self, stream: Any, namespace: Any, loader: Any) -> None:
            stream.write("ran outside the sandbox")

    try:
        with pytest.raises(PatchMismatch, match=r"test_patches\..*Unreviewed \(evaluate_raw\)"):
            REGISTRY.install()
        assert not REGISTRY.installed()
    finally:
        del Unreviewed
        gc.collect()  # airspeed's _Element.__subclasses__() forgets it


def test_two_patches_of_one_method_are_refused() -> None:
    patch = Patch(SQSBackend, "send_message", ("self",), lambda original: original, "twice")
    with pytest.raises(ValueError, match="same method"):
        Registry([patch, patch])


class _Library:
    def method(self, a: int, b: int) -> int:
        return a + b


def test_a_parameter_added_after_the_expected_ones_fails_when_the_replacement_is_fixed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fixed(original: Any) -> Any:
        def method(self: Any, a: int, b: int) -> int:
            return int(original(self, a, b))

        return method

    patch = Patch(_Library, "method", ("self", "a", "b"), fixed, "test")
    assert patch.problem() is None

    def method(self: Any, a: int, b: int, c: int = 0) -> int:
        return a + b + c

    monkeypatch.setattr(_Library, "method", method)
    assert patch.problem() == (
        f"{patch.where} takes ('self', 'a', 'b', 'c'), the patch expects ('self', 'a', 'b')"
    )
    passing_through = Patch(
        _Library, "method", ("self", "a", "b"), lambda original: lambda *a, **k: 0, "test"
    )
    assert passing_through.problem() is None


def test_a_replacement_that_fails_to_build_leaves_every_original_in_place() -> None:
    built = []

    def broken(original: Any) -> Any:  # builds for the check, fails when installed
        built.append(original)
        if len(built) > 1:
            raise RuntimeError("cannot build")
        return lambda *args, **kwargs: original(*args, **kwargs)

    own = _Library.method
    first = Patch(_Library, "method", ("self", "a", "b"), lambda original: original, "ok")
    second = Patch(SQSBackend, "send_message", ("self",), broken, "broken")
    registry = Registry([first, second])
    with pytest.raises(RuntimeError, match="cannot build"):
        registry.install()
    assert len(built) == 2  # the check passed; installing the second patch failed
    assert _Library.method is own
    assert not registry.installed()
