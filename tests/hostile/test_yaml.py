"""YAML that stands for more than it says: alias bombs and recursive aliases are refused,
with `file:line: too many aliases/nodes` and exit 2, before anything walks them, wherever
the YAML is read (rule files, cases, msrunwatch.yaml, MindFormers configs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from msrunwatch.core.errors import YamlError
from msrunwatch.core.yamlload import load
from tests.hostile.support import cli
from tests.support import FIXTURES

OOM = str(FIXTURES / "cpu_dp2_oom_alloc_failed")


def bomb(levels: int = 10, width: int = 9) -> str:
    """The billion laughs: 9 levels of 9 aliases each stand for 9**10 scalars in 478 bytes."""
    first = "a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"
    rest = [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    lines = [first, *rest]
    return "\n".join(lines) + "\n"


RECURSIVE = "a: &a [1, *a]\n"
MERGE_CHAIN = "".join(
    f"m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}\n" if i else "m0: &m0 {k0: 0}\n" for i in range(600)
)
"""Each mapping merges the one before: quadratic in the file, no single alias is large."""


@pytest.mark.parametrize(
    "text", [bomb(), RECURSIVE, MERGE_CHAIN], ids=["bomb", "recursive", "merge"]
)
def test_the_loader_refuses_documents_standing_for_too_many_nodes(text: str) -> None:
    with pytest.raises(YamlError, match="too many aliases/nodes") as exc:
        load(text)
    assert exc.value.line > 1 or text == RECURSIVE


def test_aliases_within_the_budget_still_load_with_positions() -> None:
    data, pos = load("base: &b {x: 1, y: [1, 2]}\nuse: *b\nmore:\n  <<: *b\n  z: 3\n")
    assert data["use"] == {"x": 1, "y": [1, 2]}
    assert data["more"] == {"x": 1, "y": [1, 2], "z": 3}
    assert pos.of(("use", "y", 1)) == (2, 6)  # inside an alias: the alias itself
    assert pos.of(("more", "z"), key=True) == (5, 3)


def test_a_duplicate_anchor_is_refused_as_pyyaml_refuses_it() -> None:
    """The bounded composer took the second `&x` silently; PyYAML (what MindFormers reads
    configs with) refuses the file, so the config never starts."""
    with pytest.raises(YamlError, match="duplicate anchor 'x' \\(first on line 1\\)"):
        load("a: &x 1\nb: &x 2\nc: *x\n")


def test_a_rule_file_bomb_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = tmp_path / "oom-x.yaml"
    rule.write_text("id: oom-x\n" + bomb(), encoding="utf-8")
    code, _, err = cli(capsys, "triage", OOM, "--rules", str(rule))
    assert code == 2
    assert err.count("\n") == 1
    assert f"{rule}:7:" in err and "too many aliases/nodes" in err


@pytest.mark.parametrize("text", [bomb(), RECURSIVE], ids=["bomb", "recursive"])
def test_a_settings_file_bomb_in_the_working_directory_is_exit_2(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "msrunwatch.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "check", OOM)
    assert code == 2
    assert "msrunwatch.yaml:" in err and "too many aliases/nodes" in err


def test_a_config_bomb_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(bomb(), encoding="utf-8")
    for args in (["check", str(config), "--devices", "8"], ["estimate", str(config)]):
        code, _, err = cli(capsys, *args)
        assert code == 2
        assert "train.yaml:" in err and "too many aliases/nodes" in err


def test_a_cases_file_bomb_is_an_invalid_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = FIXTURES.parent / "rules" / "log" / "memory"
    (tmp_path / "oom-memory-not-enough.yaml").write_bytes(
        (rules / "oom-memory-not-enough.yaml").read_bytes()
    )
    (tmp_path / "oom-memory-not-enough.cases.yaml").write_text(
        "rule: oom-memory-not-enough\n" + bomb(), encoding="utf-8"
    )
    code, out, err = cli(capsys, "rules", "check", str(tmp_path))
    assert code == 2
    assert "too many aliases/nodes" in out + err


@pytest.mark.parametrize("where", ["rules", "settings", "config"])
def test_a_fifo_where_yaml_is_read_is_an_error_not_a_hang(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "rules":
        os.mkfifo(tmp_path / "stuck.yaml")
        args = ["triage", OOM, "--rules", str(tmp_path)]
    elif where == "settings":
        os.mkfifo(tmp_path / "msrunwatch.yaml")
        monkeypatch.chdir(tmp_path)
        args = ["check", OOM, "--settings", str(tmp_path / "msrunwatch.yaml")]
    else:
        os.mkfifo(tmp_path / "train.yaml")
        args = ["estimate", str(tmp_path / "train.yaml")]
    code, _, err = cli(capsys, *args)
    assert code == 2
    assert "FIFO" in err


@pytest.mark.parametrize("where", ["settings", "config"])
def test_a_device_where_yaml_is_read_is_an_error_not_read_forever(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / ("msrunwatch.yaml" if where == "settings" else "train.yaml")
    link.symlink_to("/dev/zero")
    args = (
        ["check", OOM, "--settings", str(link)] if where == "settings" else ["estimate", str(link)]
    )
    code, _, err = cli(capsys, *args)
    assert code == 2
    assert "character device" in err
