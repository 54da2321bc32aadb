"""A whole job stopped from outside, judged post mortem by the clock (drivers.postmortem):
the real SIGTERMed run is `failed: job-stopped` once its files are older than
--stall-after, and still `running` as a snapshot inside the stall window."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

import pytest

from msrunwatch.commands.triage import clock_time, post_mortem
from msrunwatch.drivers import postmortem
from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.read.discover import discover_target
from msrunwatch.read.timestamps import parse_iso
from msrunwatch.rules.loader import load_rules
from tests.support import FIXTURES

SIGTERMED = FIXTURES / "cpu_sigterm_whole_job"
NEWEST_LINE = "2026-11-25T19:05:35.552"
"""The newest line of the SIGTERMed run's logs (rank 1's)."""
LINE = parse_iso(NEWEST_LINE) or 0.0


RULES = load_rules()


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(SIGTERMED, target)
    return target


def _touch(directory: Path, epoch: float) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            os.utime(path, (epoch, epoch))


def _on_the_logs_clock(
    directory: Path, monkeypatch: pytest.MonkeyPatch, written: float, now: float
) -> None:
    """The files last written at `written` and this host's clock at `now`, both on the
    logs' scale (this host's zone taken to be the logs' own)."""
    _touch(directory, written)
    monkeypatch.setattr(postmortem, "local_seconds", lambda epoch: epoch)
    monkeypatch.setattr(postmortem, "host_clock", lambda: now)


@pytest.mark.parametrize(
    ("quiet_s", "outcome", "category", "statuses"),
    [(600.0, "failed", "job-stopped", {"stopped"}), (30.0, "running", None, {"training"})],
    ids=["older-than-the-stall-threshold", "written-inside-the-window"],
)
def test_the_files_last_write_against_the_clock(
    copy: Path,
    monkeypatch: pytest.MonkeyPatch,
    quiet_s: float,
    outcome: str,
    category: str | None,
    statuses: set[str],
) -> None:
    _on_the_logs_clock(copy, monkeypatch, written=LINE + 1.0, now=LINE + 1.0 + quiet_s)
    report = triage([str(copy)], RULES, post=PostMortem())
    assert report.outcome == outcome
    assert (report.root_cause.category if report.root_cause else None) == category
    assert {r.status for r in report.ranks} == statuses


def test_a_copy_with_reset_mtimes_is_judged_by_its_newest_line(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = LINE
    _touch(copy, time.time())  # a checkout: the files look just written, days after the lines
    monkeypatch.setattr(postmortem, "local_seconds", lambda _epoch: line + 3 * 86400.0)
    report = triage([str(copy)], RULES, post=PostMortem())
    assert report.outcome == "failed"


@pytest.mark.parametrize(
    ("now", "last_line", "outcome"),
    [("2026-11-25T19:06:05", False, "running"), ("2026-11-25T19:08:00", False, "failed")],
)
def test_now_pins_the_clock_on_the_logs_scale(
    now: str,
    last_line: bool,
    outcome: str,
) -> None:
    post = PostMortem(now=parse_iso(now), last_line=last_line)
    assert triage([str(SIGTERMED)], RULES, post=post).outcome == outcome


def test_last_line_and_finished() -> None:
    snapshot = triage([str(SIGTERMED)], RULES, post=PostMortem(last_line=True))
    assert snapshot.outcome == "running"
    over = triage([str(SIGTERMED)], RULES, post=PostMortem(last_line=True, finished=True))
    assert over.outcome == "failed"


def test_newest_write_skips_vanished_files(copy: Path) -> None:
    found = list(copy.rglob("*.log"))
    files = discover_target(str(copy))
    assert found and files
    newest = postmortem.newest_write(files)
    assert newest is not None
    for other in copy.rglob("*"):
        if other.is_file():
            other.unlink()
    assert postmortem.newest_write(files) is None


def test_the_command_line_options() -> None:
    assert clock_time("last-line") == "last-line"
    assert clock_time("2026-11-21T05:20:00") == parse_iso("2026-11-21T05:20:00")
    assert clock_time("2026-11-21 05:20:00.5") == parse_iso("2026-11-21 05:20:00.5")
    for bad in ("yesterday", "2026-11-21", "2026-11-21T05:20"):
        with pytest.raises(argparse.ArgumentTypeError, match="not a time like"):
            clock_time(bad)
    args = argparse.Namespace(now="last-line", finished=False, stall_after=60.0)
    assert post_mortem(args) == PostMortem(last_line=True, stall_after_s=60.0)
    args = argparse.Namespace(now=5.0, finished=True, stall_after=120.0)
    assert post_mortem(args) == PostMortem(now=5.0, finished=True)
    # `watch` without a terminal has no --now nor --finished: the clock, as triage reads it
    assert post_mortem(argparse.Namespace(stall_after=30.0)) == PostMortem(stall_after_s=30.0)
