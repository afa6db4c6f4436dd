"""The local cloud holds no special case for the SAM CLI's sample applications (issue 29):
none of their identifiers (logical ids, event names, output keys, state names) appears
in its source. They are the inputs it is judged by (``make samples``, from
``../shared/sam-samples`` or ``SAMPLES``), kept outside the repository; their identifiers
are kept in it, in :data:`LIST` (issue 48), so that the check runs on every clone, and
where the samples are, a test checks the list holds exactly what they name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from localcloud import services
from localcloud.cloudformation.template import parse_body
from tests.support.outside import INPUTS
from tests.support.paths import ROOT

SAMPLES = INPUTS["sam-samples"]
SOURCE = ROOT / "localcloud"
LIST = ROOT / "tests" / "fixtures" / "sam_sample_identifiers.json"
"""``{"samples": {folder: {"identifiers": [...], "event_types": [...]}}}``: what
:func:`read_samples` reads from the samples, as of the last ``python -m
tests.package.test_no_sample_names`` (which rewrites it)."""


def state_names(definition: Any) -> set[str]:
    """Every state name of an ASL definition, nested ones included."""
    found: set[str] = set()
    if isinstance(definition, dict):
        states = definition.get("States")
        if isinstance(states, dict):
            found |= set(states)
        for value in definition.values():
            found |= state_names(value)
    elif isinstance(definition, list):
        for value in definition:
            found |= state_names(value)
    return found


def read_samples(folder: Path) -> dict[str, dict[str, list[str]]]:
    """Each sample's identifiers and the types of its functions' events, by sample folder,
    read from the SAM applications in ``folder``."""
    found: dict[str, dict[str, list[str]]] = {}
    for template in sorted(folder.glob("*/template.y*ml")):
        body = parse_body(template.read_text())
        names = set(body.get("Resources", {})) | set(body.get("Outputs", {}))
        types: set[str] = set()
        for resource in body.get("Resources", {}).values():
            events = resource.get("Properties", {}).get("Events", {}) or {}
            names |= set(events)
            types |= {str(event.get("Type")) for event in events.values()}
        for definition in template.parent.glob("**/*.asl.json"):
            names |= state_names(json.loads(definition.read_text()))
        found[template.parent.name] = {"identifiers": sorted(names), "event_types": sorted(types)}
    assert found, f"no sample app (a folder with template.yaml) in {folder}"
    return found


def listed() -> dict[str, dict[str, list[str]]]:
    samples: dict[str, dict[str, list[str]]] = json.loads(LIST.read_text())["samples"]
    return samples


def sample_identifiers() -> dict[str, set[str]]:
    """Each listed sample's identifiers, by sample folder."""
    return {name: set(sample["identifiers"]) for name, sample in listed().items()}


def hits(source: Path, identifiers: set[str]) -> list[str]:
    """``path:line: identifier`` for every line of ``source``'s text files naming one of
    ``identifiers`` as a whole word."""
    pattern = re.compile(
        "|".join(rf"(?<![\w]){re.escape(name)}(?![\w])" for name in sorted(identifiers))
    )
    suffixes = {".py", ".html", ".js", ".css", ".md", ".toml", ".json", ".yaml", ".txt"}
    return [
        f"{path.relative_to(source)}:{number}: {match.group(0)}"
        for path in sorted(source.rglob("*"))
        if path.is_file() and path.suffix in suffixes
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        for match in [pattern.search(line)]
        if match
    ]


def aws_vocabulary() -> set[str]:
    """The words of AWS's own type names the local cloud deploys (``AWS::ApiGatewayV2::
    Api`` gives ``Api``) and of SAM's event types: a sample that names an event ``Api``
    uses AWS's word, which the local cloud must write too."""
    words = {part for kind in services.providers() for part in kind.split("::")}
    for sample in listed().values():
        words |= set(sample["event_types"])
    return words


@pytest.mark.outside("sam-samples")
def test_the_list_holds_exactly_what_the_samples_name() -> None:
    assert read_samples(SAMPLES.folder) == listed(), (
        f"{LIST.relative_to(ROOT)} is out of date with {SAMPLES.folder}: "
        "python -m tests.package.test_no_sample_names rewrites it"
    )


def test_no_sample_identifier_appears_in_the_local_cloud() -> None:
    identifiers = {name for names in sample_identifiers().values() for name in names}
    assert len(identifiers) > 10  # the samples were read
    vocabulary = aws_vocabulary()
    assert "Api" in vocabulary  # an event name that is also AWS's word
    assert "HelloWorldFunction" not in vocabulary
    assert hits(SOURCE, identifiers - vocabulary) == []


def test_the_check_finds_a_sample_identifier_where_one_is_written(tmp_path: Path) -> None:
    """The check can fail: a planted special case is found, a longer name is not."""
    some = sorted(next(iter(sample_identifiers().values())))[0]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "special.py").write_text(f'ok = 1\nif logical_id == "{some}":\n')
    (tmp_path / "pkg" / "other.py").write_text(f"{some}Extra = 1\n")
    assert hits(tmp_path, {some}) == [f"pkg/special.py:2: {some}"]


if __name__ == "__main__":
    LIST.write_text(
        json.dumps({"samples": read_samples(SAMPLES.folder)}, indent=1, sort_keys=True) + "\n"
    )
    print(f"{LIST.relative_to(ROOT)}: the identifiers of {SAMPLES.folder}'s samples")
