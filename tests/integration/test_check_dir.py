"""`check DIR` lints every config under DIR; files that are not training configs are counted
in one info finding, not an exit 2; a file named on the command line that cannot be parsed
is still exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES

CONVERTER = "#!/bin/bash\npython convert_ckpt.py --num-layers 32 --target-tensor-parallel-size 2\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["check", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "configs"
    (root / "scripts").mkdir(parents=True)
    (root / "yaml").mkdir()
    shutil.copy(FIXTURES / "configs" / "ms_qwen25_comment_inside_args.sh", root / "scripts")
    shutil.copy(FIXTURES / "configs" / "seed001_qwen25_7b_tp2_pp2.sh", root / "scripts")
    shutil.copy(FIXTURES / "configs" / "mf_qwen25_7b_finetune_8k.yaml", root / "yaml")
    (root / "scripts" / "convert.sh").write_text(CONVERTER, encoding="utf-8")
    (root / "yaml" / "data.yaml").write_text("dataset: {name: alpaca}\n", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "broken.yaml").write_text("a: [\n", encoding="utf-8")
    return root


def test_every_config_under_the_directory_is_linted(
    capsys: pytest.CaptureFixture[str], tree: Path
) -> None:
    code, report = run(capsys, str(tree))
    assert code == 1  # the comment inside GPT_ARGS is an error
    findings = report["findings"]
    assert isinstance(findings, list)
    files = {Path(o["file"]).name for f in findings for o in f["occurrences"]}
    assert {"ms_qwen25_comment_inside_args.sh", "mf_qwen25_7b_finetune_8k.yaml"} <= files
    assert any(f["rule"] == "config-stray-args" for f in findings)
    (skipped,) = [f for f in findings if f["rule"] == "config-not-linted"]
    assert skipped["message"] == (
        "2 files were not linted: a checkpoint conversion script (1), not a MindFormers config (1)"
    )


def test_a_converter_named_alone_is_an_info_not_exit_2(
    capsys: pytest.CaptureFixture[str], tree: Path
) -> None:
    code, report = run(capsys, str(tree / "scripts" / "convert.sh"))
    assert code == 0
    (finding,) = report["findings"]  # type: ignore[misc]
    assert finding["rule"] == "config-not-linted"


def test_a_named_file_that_cannot_be_parsed_is_still_exit_2(
    capsys: pytest.CaptureFixture[str], tree: Path
) -> None:
    assert main(["check", str(tree / ".hidden" / "broken.yaml")]) == 2


def test_a_directory_of_logs_is_still_triaged(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed"))
    assert report["ranks"], "a log directory is triaged, not linted"
    assert code == 1
