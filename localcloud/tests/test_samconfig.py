"""samconfig.toml is read as SAM CLI reads it: for each variant below, the parameter
overrides the local cloud resolves are the ones SAM CLI's own `sam deploy` command
resolves in the same project (support/sam_cli.py runs its click command, configuration
callback included, and captures what it hands to the deploy step)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.parameters import samconfig_parameter_overrides
from localcloud.cloudformation.template import load
from localcloud.tests.support.paths import JOBS_APP
from localcloud.tests.support.sam_cli import deploy_parameter_overrides

TEMPLATE = JOBS_APP / "template.yaml"
HEADER = 'version = 0.1\n[default.global.parameters]\nstack_name = "variant"\n'

# (label, samconfig.toml after the header, extra files)
VARIANTS: list[tuple[str, str, dict[str, str]]] = [
    (
        "string in the deploy section",
        "[default.deploy.parameters]\n"
        'parameter_overrides = "Verbose=\\"true\\" BatchSize=\\"7\\""\n',
        {},
    ),
    (
        "only in the global section",
        'parameter_overrides = "Verbose=true MaxReceiveCount=6"\n',
        {},
    ),
    (
        "global and deploy: the deploy section's list wins whole",
        'parameter_overrides = "BatchSize=3 MaxReceiveCount=9"\n'
        '[default.deploy.parameters]\nparameter_overrides = "BatchSize=4"\n',
        {},
    ),
    (
        "inline table",
        'parameter_overrides = { Verbose = "true", BatchSize = 7 }\n',
        {},
    ),
    ("list of strings", 'parameter_overrides = ["BatchSize=2", "MaxReceiveCount=8"]\n', {}),
    (
        "backslashes kept",
        "parameter_overrides = 'Path=C:\\dir\\x Other=a\\\\b'\n",
        {},
    ),
    ("quoted value with spaces", "parameter_overrides = 'Name=\"a b c\" BatchSize=1'\n", {}),
    (
        "ParameterKey/ParameterValue form",
        'parameter_overrides = "ParameterKey=BatchSize,ParameterValue=5"\n',
        {},
    ),
    (
        "file:// next to samconfig.toml",
        'parameter_overrides = "file://params.yaml"\n',
        {"params.yaml": "BatchSize: 6\nVerbose: 'true'\n"},
    ),
    ("none at all", "", {}),
]


def project(tmp_path: Path, samconfig: str, files: dict[str, str]) -> Path:
    shutil.copy(JOBS_APP / "template.yaml", tmp_path / "template.yaml")
    (tmp_path / "samconfig.toml").write_text(HEADER + samconfig)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("label", "samconfig", "files"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_the_local_cloud_resolves_samconfig_overrides_as_sam_deploy_does(
    label: str, samconfig: str, files: dict[str, str], tmp_path: Path
) -> None:
    path = project(tmp_path, samconfig, files)
    expected = deploy_parameter_overrides(path)

    ours = samconfig_parameter_overrides(path / "samconfig.toml", "default", ["deploy"])

    assert ours == expected
    declared = {"BatchSize", "Verbose", "MaxReceiveCount"}
    if set(expected) <= declared:  # the variants the template can take are deployed with them
        parameters = load(path / "template.yaml", samconfig=path / "samconfig.toml").parameters
        assert {name: parameters[name] for name in expected} == expected


def test_command_line_overrides_replace_samconfigs_as_in_sam_deploy(tmp_path: Path) -> None:
    path = project(tmp_path, 'parameter_overrides = "Verbose=true BatchSize=3"\n', {})
    expected = deploy_parameter_overrides(path, "--parameter-overrides", "BatchSize=1")
    assert expected == {"BatchSize": "1"}

    template = load(
        path / "template.yaml", samconfig=path / "samconfig.toml", parameter_overrides="BatchSize=1"
    )

    assert template.parameters["BatchSize"] == "1"
    assert template.parameters["Verbose"] == "false"  # the template default again
    assert template.parameter_sources["BatchSize"] == "--parameter-overrides"
    assert template.parameter_sources["Verbose"] == "template default"


def test_the_jobs_apps_samconfig_resolves_as_sam_deploy_does() -> None:
    for env in ("default", "prod"):
        expected = deploy_parameter_overrides(JOBS_APP, "--config-env", env)
        assert (
            samconfig_parameter_overrides(JOBS_APP / "samconfig.toml", env, ["deploy"]) == expected
        )
        parameters = load(TEMPLATE, config_env=env).parameters
        assert {name: parameters[name] for name in expected} == expected


def test_local_invoke_sees_the_deploy_parameters_of_each_environment() -> None:
    for env in ("default", "prod"):
        assert samconfig_parameter_overrides(
            JOBS_APP / "samconfig.toml", env, ["local", "invoke"]
        ) == samconfig_parameter_overrides(JOBS_APP / "samconfig.toml", env, ["deploy"])


def test_an_unknown_config_env_is_refused_naming_the_ones_there_are() -> None:
    with pytest.raises(
        UnsupportedTemplate, match=r"\[staging\]: no such environment.*default, prod"
    ):
        load(TEMPLATE, config_env="staging")


def test_an_override_sam_cli_cannot_parse_is_refused_with_its_message(tmp_path: Path) -> None:
    path = project(tmp_path, 'parameter_overrides = "not a pair"\n', {})
    with pytest.raises(UnsupportedTemplate, match="not a pair is not a valid format"):
        load(path / "template.yaml", samconfig=path / "samconfig.toml")


MALFORMED = [
    (
        "an unterminated string",
        'version = 0.1\n[default.deploy.parameters]\nstack_name = "x"\n'
        'parameter_overrides = "A=1\n',
        "at line 4 col 26",
    ),
    ("an empty key", "version = 0.1\n[default.deploy.parameters]\n= 3\n", "Empty key at line 3"),
    ("no version", '[default.deploy.parameters]\nstack_name = "x"\n', "'version' key"),
]


@pytest.mark.parametrize(("label", "text", "where"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_samconfig_is_one_line_naming_the_file_the_line_and_the_fault(
    label: str, text: str, where: str, tmp_path: Path
) -> None:
    """Issue 18: it crashed make demo and make serve with ``TypeError: __str__ returned
    non-string``."""
    path = tmp_path / "samconfig.toml"
    path.write_text(text)

    with pytest.raises(UnsupportedTemplate) as raised:
        load(TEMPLATE, samconfig=path)

    message = str(raised.value)
    assert message.startswith("samconfig.toml: ")
    assert where in message
    assert "\n" not in message
