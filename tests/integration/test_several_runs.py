"""Two runs under one directory (a second attempt's msrun_log_1 beside msrun_log, an old job
kept beside the new one) are never merged into one verdict: the trial's N21 read a healthy
run's steps beside another run's OOM, under one FAILED headline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.loader import load_rules
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


def watched(target: Path) -> Report:
    """The live engine's verdict once it has read everything under `target`."""
    live = LiveRun([str(target)], load_rules())
    try:
        update = live.tick()
        while not update.caught_up:
            update = live.tick()
        return update.report
    finally:
        live.close()


def test_the_live_view_follows_the_newest_run_and_says_so(tmp_path: Path) -> None:
    """A watcher cannot be refused as triage is (the second attempt may appear while it
    watches): it follows the run with the latest log times alone, and says which."""
    parent = two_attempts(tmp_path)
    report = watched(parent)
    alone = triage([str(parent / "msrun_log_1")], load_rules())  # the OOM, 19 minutes later
    assert [(r.rank, r.status) for r in report.ranks] == [(r.rank, r.status) for r in alone.ranks]
    assert report.root_cause is not None and report.root_cause.category == "oom"
    assert all(r.progress is None for r in report.ranks)  # no step of the healthy run
    assert report.log_dirs == (f"{parent}/msrun_log_1",)  # what triage of it would read
    said = [w for w in report.warnings if "holds 2 runs" in w]
    assert said == [
        f"{parent} holds 2 runs, each with its own scheduler.log (msrun_log, msrun_log_1): "
        f"showing the newest, msrun_log_1, alone (watch {parent}/msrun_log for the other)"
    ]


def test_the_newest_run_is_told_by_its_log_times_not_its_name(tmp_path: Path) -> None:
    parent = tmp_path / "job"
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log", parent / "b_second")
    shutil.copytree(FIXTURES / "cpu_dp2_success_glog2" / "msrun_log", parent / "z_first")
    report = watched(parent)
    assert report.root_cause is not None and report.root_cause.category == "oom"
    assert any("showing the newest, b_second, alone" in w for w in report.warnings)


def test_one_run_is_watched_without_a_word(tmp_path: Path) -> None:
    report = watched(FIXTURES / "cpu_2nodes_no_node_rank_ok")
    assert not any("runs, each with its own" in w for w in report.warnings)
    assert len(report.ranks) == len(
        triage([str(FIXTURES / "cpu_2nodes_no_node_rank_ok")], load_rules()).ranks
    )
