"""Symlinks are resolved once (issue 21, defects 5 and 13): a second path to a file already
read is a warning, not a second read (15 links to one log had turned 2.5 s into 32.5 s),
and a followed log swapped for a symlink out of the log directory is not read through it
(`watch` had warned that it skipped the link, then read it anyway and failed the run on
what it pointed at, where `triage` said OK)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.hostile.support import cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
HEALTHY = FIXTURES / "cpu_dp2_success_glog2" / "msrun_log"


def copy_of(source: Path, tmp_path: Path) -> Path:
    directory = tmp_path / "msrun_log"
    shutil.copytree(source, directory)
    return directory


def test_fifteen_links_to_one_log_read_it_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_of(OOM, tmp_path)
    for n in range(2, 17):
        (directory / f"worker_{n}.log").symlink_to("worker_1.log")
    code, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    assert code == 1
    report = strict_json(out)
    assert report["files_read"] == 3  # scheduler, worker_0, worker_1: each once
    assert report["root_cause"]["ranks"] == [1]
    assert report["root_cause"]["file"] == "worker_1.log"  # the real file, not a link
    linked = [w for w in report["warnings"] if "another path to" in w]
    assert len(linked) == 15
    assert (
        f"skipped {directory}/worker_9.log: another path to {directory}/worker_1.log" in linked[-1]
    )


def test_a_hard_link_and_a_directory_given_twice_are_read_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_of(OOM, tmp_path)
    os.link(directory / "worker_0.log", directory / "copy_of_rank0.log")
    code, out, _ = cli(capsys, "triage", str(directory), str(directory), "--format", "json")
    assert code == 1
    report = strict_json(out)
    assert report["files_read"] == 3
    assert sum("given twice, already read" in w for w in report["warnings"]) == 3
    assert any("copy_of_rank0.log: another path to" in w for w in report["warnings"])


def test_the_watcher_does_not_read_through_a_link_swapped_in(
    tmp_path: Path, rules: list[Rule], capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_of(HEALTHY, tmp_path)
    outside = tmp_path / "elsewhere.log"
    shutil.copy(OOM / "worker_1.log", outside)
    live = LiveRun([str(directory)], rules)
    try:
        assert live.tick().report.outcome == "ok"
        (directory / "worker_1.log").unlink()
        (directory / "worker_1.log").symlink_to(outside)
        live.dirty.add(directory / "worker_1.log")
        report = live.tick().report
    finally:
        live.close()
    said = f"skipped {directory}/worker_1.log: a symlink to {outside}, outside the log directory"
    assert list(report.warnings) == [said]
    assert report.findings == () and report.outcome == "ok"
    code, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    assert code == 0 and strict_json(out)["warnings"] == [said]  # as triage says it


def test_the_watcher_says_a_second_path_to_a_followed_log(
    tmp_path: Path, rules: list[Rule]
) -> None:
    directory = copy_of(OOM, tmp_path)
    live = LiveRun([str(directory)], rules)
    try:
        live.tick()
        (directory / "worker_7.log").symlink_to("worker_1.log")
        live.dirty.add(directory / "worker_7.log")
        report = live.tick().report
    finally:
        live.close()
    assert list(report.warnings) == [
        f"skipped {directory}/worker_7.log: another path to {directory}/worker_1.log, already read"
    ]
    assert len(live.paths()) == 3
