"""--framework-version and settings' framework-version: parsed into numbers rules compare,
and the Megatron core a MindSpeed-family release runs on."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.core.errors import UsageError
from msrunwatch.drivers.settings import read_file
from msrunwatch.judge.config.derive import derive
from msrunwatch.judge.config.versions import NEWEST, number, parse
from msrunwatch.read.config.model import TrainingConfig, Value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.6.0", 10600),
        ("r1.6.0", 10600),
        ("0.12.1", 1201),
        ("core_v0.12.1", 1201),
        ("core_r0.8.0", 800),
        ("2.3.0_core_r0.12.1", 20300),
        ("master", NEWEST),
        ("main", NEWEST),
        ("2.2", 20200),
        ("1.x", None),
        ("latest-ish", None),
    ],
)
def test_version_numbers(text: str, value: int | None) -> None:
    assert number(text) == value


def test_names_and_the_megatron_core_they_imply() -> None:
    assert parse("mindspeed-llm=2.1.0").megatron == 800
    assert parse("mindspeed-llm=2.2.0").megatron == 1201
    assert parse("mindspeed-llm=master").megatron == 1201
    assert parse("mindspeed=2.3.0_core_r0.12.1").megatron == 1201
    both = parse("mindspeed-llm=2.1.0, megatron=0.12.1")
    assert (both.stack, both.megatron) == ("mindspeed-llm", 1201)
    assert parse("Megatron-LM=main").megatron == NEWEST
    assert parse(None).known == {} and parse("").stack is None


@pytest.mark.parametrize("text", ["1.6.0", "pytorch=2.1", "mindformers=one"])
def test_bad_versions_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--framework-version"):
        parse(text)


def test_derive_gives_rules_the_versions_and_a_lower_bound_from_the_file() -> None:
    cfg = TrainingConfig("a.yaml", "mindformers", {"framework": Value("mindformers")})
    assert derive(cfg)["mindformers_version"] is None
    mcore = TrainingConfig("a.yaml", "mindformers", {"use_legacy": Value(False)})
    env = derive(mcore)
    assert (env["mindformers_version"], env["mindformers_version_given"]) == (10600, None)
    env = derive(mcore, versions=parse("mindformers=1.8.0"))
    assert (env["mindformers_version"], env["mindformers_version_given"]) == (10800, 10800)


def test_settings_file_gives_the_versions(tmp_path: Path) -> None:
    path = tmp_path / "msrunwatch.yaml"
    path.write_text("framework-version: {mindformers: 1.6.0, megatron: 0.12.1}\n")
    versions = parse(read_file(path).framework_version)
    assert (versions.of("mindformers"), versions.megatron) == (10600, 1201)
