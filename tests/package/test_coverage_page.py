"""The coverage page (docs/local-cloud-coverage.md) is what the code generates now
(issue 31): every type, accepted property, replaced method and event source is on it,
and nothing that is not."""

from __future__ import annotations

from localcloud import coverage, services
from tests.support.paths import ROOT

PAGE = ROOT / coverage.PAGE
REGENERATE = f"python -m localcloud coverage --write {coverage.PAGE}"


def test_the_coverage_page_is_what_the_code_generates() -> None:
    assert PAGE.is_file(), f"{PAGE} is missing: {REGENERATE}"
    assert PAGE.read_text(encoding="utf-8") == coverage.render(), (
        f"{coverage.PAGE} is stale: {REGENERATE}"
    )


def test_the_page_names_every_type_property_patch_and_event_source() -> None:
    page = coverage.render()
    for provider in services.providers().values():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{provider.TYPE}` |"))
        for name in provider.PROPERTIES:
            assert f"`{name}`" in row, (provider.TYPE, name)
    for patch in services.patch_registry().patches:
        assert f"| `{patch.where}` |" in page, patch.where
    for source in services.event_sources():
        assert f"`{source}`" in page
