"""Two runs under one directory (a second attempt's msrun_log_1 beside msrun_log, an old job
kept beside the new one) are never merged into one verdict: the trial's N21 read a healthy
run's steps beside another run's OOM, under one FAILED headline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES


def two_attempts(tmp_path: Path) -> Path:
    parent = tmp_path / "job"
    shutil.copytree(FIXTURES / "cpu_dp2_success_glog2" / "msrun_log", parent / "msrun_log")
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log", parent / "msrun_log_1")
    return parent


@pytest.mark.parametrize("command", ["triage", "check"])
def test_a_directory_of_two_runs_is_refused_naming_both(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = two_attempts(tmp_path)
    assert main([command, str(parent)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert f"{parent} holds 2 runs" in line
    assert "(msrun_log, msrun_log_1)" in line and f"{parent}/msrun_log_1" in line


def test_each_run_given_on_its_own_is_judged_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = two_attempts(tmp_path)
    assert main(["triage", str(parent / "msrun_log")]) == 0
    assert capsys.readouterr().out.startswith("OK")
    assert main(["triage", str(parent / "msrun_log_1")]) == 1
    assert capsys.readouterr().out.startswith("FAILED  rank 1 failed first: oom")


def test_nodes_of_one_run_are_one_run() -> None:
    """Only the first node of a job runs its scheduler: node directories side by side are
    one run, judged as one."""
    assert main(["triage", str(FIXTURES / "cpu_2nodes_no_node_rank_ok"), "-q"]) == 0
