"""bench/config_precision.py on a small corpus built here: what --strict fails on, and that a
missing corpus is an error (exit 2), never a silent pass. The real corpus lives outside the
repository; only its manifest and the reviewed verdicts are in corpus/."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FIXTURES, ROOT

BENCH = ROOT / "bench" / "config_precision.py"
TREE = "demo@1.0"
BROKEN = "ms_qwen25_comment_inside_args.sh"
"""Gives one error finding (config-stray-args)."""
CLEAN = "seed001_qwen25_7b_tp2_pp2.sh"


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """(index dir with trees/manifest/verdicts, corpus dir with <tree>/<path>)."""
    files, index = tmp_path / "configs", tmp_path / "index"
    index.mkdir()
    rows = []
    for name in (BROKEN, CLEAN):
        target = files / TREE / "examples" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / "configs" / name, target)
        data = target.read_bytes()
        rows.append([TREE, f"examples/{name}", _blob(data), str(len(data)), "sh"])
    _write_csv(
        index / "trees.csv",
        ["tree", "repo", "ref", "commit", "framework_version"],
        [[TREE, "demo/demo", "1.0", "0" * 40, "mindspeed-llm=master"]],
    )
    _write_csv(index / "manifest.csv", ["tree", "path", "blob_sha1", "bytes", "kind"], rows)
    return index, files


def _verdicts(index: Path, verdict: str, rule: str = "config-stray-args") -> None:
    _write_csv(
        index / "verdicts.csv",
        ["file", "rule", "line", "message", "verdict", "reason", "upstream", "seen"],
        [[f"{TREE}/examples/{BROKEN}", rule, "94", "", verdict, "test", "", "current"]],
    )


def run(index: Path, files: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(BENCH), "--index", str(index), "--corpus", str(files)]
    return subprocess.run(
        [*args, "--jobs", "1", *extra], capture_output=True, text=True, check=False, cwd=ROOT
    )


def test_a_reviewed_true_error_passes_strict(corpus: tuple[Path, Path]) -> None:
    index, files = corpus
    _verdicts(index, "true")
    done = run(index, files, "--strict")
    assert done.returncode == 0, done.stderr
    assert "| config-stray-args | 1 | 1 | 0 | 0 |" in done.stdout
    assert "| 2 | 2 | 0 |" in done.stdout  # files, linted, not linted


def test_an_unreviewed_error_fails_strict(corpus: tuple[Path, Path]) -> None:
    index, files = corpus
    done = run(index, files, "--strict")
    assert done.returncode == 1
    assert "no reviewed verdict" in done.stderr and "config-stray-args" in done.stderr


def test_false_errors_above_the_target_fail_strict(corpus: tuple[Path, Path]) -> None:
    index, files = corpus
    _verdicts(index, "false")  # 1 false error in 2 files: 50 per 100
    done = run(index, files, "--strict")
    assert done.returncode == 1
    assert "above the target" in done.stderr


def test_a_true_problem_that_is_no_longer_an_error_fails_strict(
    corpus: tuple[Path, Path],
) -> None:
    index, files = corpus
    _verdicts(index, "true", rule="config-world-not-divisible")
    done = run(index, files, "--strict")
    assert done.returncode == 1
    assert "true problem no longer an error" in done.stderr


def test_a_changed_corpus_file_fails_strict(corpus: tuple[Path, Path]) -> None:
    index, files = corpus
    _verdicts(index, "true")
    target = files / TREE / "examples" / CLEAN
    target.write_text(target.read_text() + "\n# edited\n")
    done = run(index, files, "--strict")
    assert done.returncode == 1
    assert "differs from the manifest" in done.stderr


def test_a_missing_corpus_is_exit_2_not_a_pass(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    index, _ = corpus
    done = run(index, tmp_path / "nowhere", "--strict")
    assert done.returncode == 2
    assert "not found" in done.stderr and "nothing was checked" in done.stderr


def test_a_missing_corpus_file_fails_strict(corpus: tuple[Path, Path]) -> None:
    index, files = corpus
    _verdicts(index, "true")
    (files / TREE / "examples" / CLEAN).unlink()
    done = run(index, files, "--strict")
    assert done.returncode == 1
    assert f"corpus file {TREE}/examples/{CLEAN}: cannot read" in done.stderr


def test_a_relative_corpus_is_found_beside_the_checkout_from_any_directory(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    """CI runs `--corpus ../shared/corpus/configs` from the root; a relative path names the
    same place from elsewhere, relative to the repository root's parent."""
    index, files = corpus
    _verdicts(index, "true")
    relative = os.path.relpath(files, ROOT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = [sys.executable, str(BENCH), "--index", str(index), "--corpus", relative]
    done = subprocess.run(
        [*args, "--jobs", "1", "--strict"], capture_output=True, text=True, cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    assert f"({files.resolve()};" in done.stdout


def test_ci_runs_the_corpus_strictly() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "bench/config_precision.py --corpus" in ci and "--strict" in ci
    assert "../shared/corpus/configs" in ci
