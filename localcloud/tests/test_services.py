"""One folder per service: each built-in service's providers and patches live in its own
folder, and a service of a project's own, from a folder of its own, registers with one
line, deploys, has its patch in force while a cloud runs, and is gone once taken away."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from localcloud import services
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import from_body
from localcloud.services.service import Service
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES

TOY = FIXTURES / "services" / "toy"
NOTES = {
    "Resources": {"Greeting": {"Type": "Toy::Notes::Note", "Properties": {"Text": "hello"}}},
    "Outputs": {
        "GreetingName": {"Value": {"Ref": "Greeting"}},
        "GreetingText": {"Value": {"Fn::GetAtt": ["Greeting", "Text"]}},
    },
}


def folders() -> dict[str, Service]:
    """Each service folder under localcloud/services/ and the SERVICE it defines."""
    found = {}
    for module_info in pkgutil.iter_modules(services.__path__):
        if module_info.ispkg:
            module = importlib.import_module(f"{services.__name__}.{module_info.name}")
            found[module.__name__] = module.SERVICE
    return found


def test_every_service_folder_is_registered_and_every_registered_service_has_a_folder() -> None:
    assert sorted(map(id, folders().values())) == sorted(map(id, services.BUILT_IN))


@pytest.mark.parametrize("folder", sorted(folders()))
def test_a_services_providers_and_patches_are_in_its_own_folder(folder: str) -> None:
    service = folders()[folder]
    for provider in service.providers:
        assert type(provider).__module__.startswith(f"{folder}."), provider.TYPE
    for patch in service.patches:
        assert patch.make.__module__.startswith(f"{folder}."), patch.where
    for check in service.checks:
        assert check.__module__.startswith(f"{folder}."), check.__name__
    assert service.providers or service.patches, "a service brings something"


def test_every_type_has_one_provider() -> None:
    types = [provider.TYPE for service in services.services() for provider in service.providers]
    assert len(types) == len(set(types))
    assert set(services.providers()) == set(types)


def test_a_service_from_a_folder_of_its_own_registers_with_one_line_and_deploys() -> None:
    with services.registered(services.load(TOY)):
        with started(template=from_body(NOTES, {}), stack_name="notes") as cloud:
            ssm = cloud.client("ssm")
            assert cloud.outputs == {"GreetingName": "/notes/Greeting", "GreetingText": "hello"}
            assert ssm.get_parameter(Name="/notes/Greeting")["Parameter"]["Value"] == "hello"
            with pytest.raises(ClientError, match="refuses a forbidden value"):
                ssm.put_parameter(Name="/notes/Other", Value="forbidden", Type="String")
        assert "toy" in [service.name for service in services.services()]
    assert "toy" not in [service.name for service in services.services()]
    assert "Toy::Notes::Note" not in services.providers()
    with (
        pytest.raises(UnsupportedTemplate, match="Toy::Notes::Note is not supported locally"),
        started(template=from_body(NOTES, {}), stack_name="notes"),
    ):
        pass
    with mock_aws():  # the patch went with the cloud: moto stores the value again
        boto3.client("ssm", region_name="us-east-1").put_parameter(
            Name="/plain", Value="forbidden", Type="String"
        )


def test_a_type_that_has_a_provider_cannot_be_given_a_second_one() -> None:
    queue = services.sqs.SERVICE.providers[0]
    with pytest.raises(ValueError, match="AWS::SQS::Queue has a provider already"):
        services.register(Service("copy", providers=(queue,)))
    with pytest.raises(ValueError, match="a service named sqs is registered already"):
        services.register(Service("sqs"))


def test_no_service_is_added_or_taken_away_while_a_cloud_runs() -> None:
    toy = services.load(TOY)
    with started(template=None), pytest.raises(RuntimeError, match="stop every local cloud"):
        services.register(toy)
    assert toy not in services.services()


def test_a_service_that_patches_a_method_patched_already_is_refused() -> None:
    toy = services.load(TOY)
    (patch,) = toy.patches
    with (
        services.registered(toy),
        pytest.raises(ValueError, match=r"SimpleSystemManagerBackend\.put_parameter is patched"),
    ):
        services.register(Service("toy-again", patches=(patch,)))
    send = next(p for p in services.sqs.SERVICE.patches if p.name == "send_message")
    with pytest.raises(ValueError, match=r"SQSBackend\.send_message is patched already"):
        services.register(Service("sqs-again", patches=(send,)))


def test_two_folders_of_one_name_are_two_services_and_a_broken_one_says_why(
    tmp_path: Path,
) -> None:
    for folder, name in ((tmp_path / "a" / "toy", "first"), (tmp_path / "b" / "toy", "second")):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(
            f"from localcloud.services.service import Service\nSERVICE = Service({name!r})\n"
        )
    assert services.load(tmp_path / "a" / "toy").name == "first"
    assert services.load(tmp_path / "b" / "toy").name == "second"

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('the service cannot start')\n")
    for _ in range(2):  # nothing half-imported stays behind to hide the cause
        with pytest.raises(RuntimeError, match="the service cannot start"):
            services.load(broken)
    with pytest.raises(ImportError, match="has no __init__.py"):
        services.load(tmp_path)
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "__init__.py").write_text("")
    with pytest.raises(TypeError, match="defines no SERVICE"):
        services.load(tmp_path / "nothing")


def test_an_account_starts_the_services_in_order_and_stops_them_in_reverse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    happened: list[str] = []

    def hooked(name: str) -> Service:
        def stopped() -> list[str]:
            happened.append(f"{name} stops")
            return [f"[{name}] stopped"]

        return Service(name, on_start=lambda: happened.append(f"{name} starts"), on_stop=stopped)

    monkeypatch.setattr(services, "services", lambda: (hooked("first"), hooked("second")))

    services.start()
    said = services.stop()

    assert happened == ["first starts", "second starts", "second stops", "first stops"]
    assert said == ["[second] stopped", "[first] stopped"]


def test_step_functions_stops_its_executions_before_lambda_ends_its_environments() -> None:
    stopping = [service.name for service in reversed(services.BUILT_IN) if service.on_stop]

    assert stopping == ["states", "lambda"]
