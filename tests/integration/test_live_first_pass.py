"""While the live engine first reads a run's logs, it names no verdict that the rest of the
logs contradict (re-trial A15: a finished 512-rank run opened later read `FAILED so far:
rank 37 failed first: node-timeout` for two seconds, because the scheduler's log, which
times rank 37 out, was read before rank 37's own, which says it ran out of memory).

The engine reads a few KB per tick here, so the first pass takes several ticks, as a large
run's does: the scheduler's log (it times out ranks 0 and 1) comes before the OOM in rank
1's log."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from msrunwatch.live.run import NOT_READ, LiveRun, Update
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
BUDGET = 2000
"""Bytes per tick: the three logs (5, 6.6 and 6.3 KB) take nine ticks."""


def _first_pass(target: Path, rules: list[Rule]) -> list[Update]:
    clock = Clock()
    live = LiveRun([str(target)], rules, per_tick=BUDGET, clock=clock)
    updates: list[Update] = []
    try:
        while not updates or not updates[-1].caught_up:
            clock.now += 1.1  # behind, the engine judges once a JUDGE_S
            updates.append(live.tick())
    finally:
        live.close()
    return updates


def test_no_frame_of_the_first_read_names_a_cause_the_whole_read_contradicts(
    tmp_path: Path, rules: list[Rule]
) -> None:
    target = tmp_path / "msrun_log"
    shutil.copytree(OOM, target)
    updates = _first_pass(target, rules)
    reading, last = updates[:-1], updates[-1]
    assert len(reading) >= 3  # the scheduler's log was read whole long before rank 1's
    final = last.report.root_cause
    assert final is not None and (final.category, final.ranks) == ("oom", (1,))
    assert [u.report.root_cause for u in reading] == [None] * len(reading)
    for update in reading:
        report = update.report
        assert report.outcome == "unknown"
        assert not report.findings and not update.new_findings
        assert {r.status.value for r in report.ranks} <= {"unknown"}
        assert {r.status_reason for r in report.ranks} <= {NOT_READ}


def test_the_whole_read_says_every_finding_once_with_its_final_role(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """A hook runs for a cause: the scheduler's timeout, a symptom of the OOM, must not
    come out as the root cause first (the engine said it new as `root-cause`, then again)."""
    target = tmp_path / "msrun_log"
    shutil.copytree(OOM, target)
    said = [(f.rule, f.role) for u in _first_pass(target, rules) for f in u.new_findings]
    assert ("node-timed-out", "symptom") in said
    assert ("oom-memory-not-enough", "root-cause") in said
    assert len(said) == len(set(said)) and ("node-timed-out", "root-cause") not in said


class _TickClock:
    """The host's clock as a tick sees it: the tick starts at `start`; any later reading is
    `later` (a file written while the tick read it has an mtime between the two)."""

    def __init__(self, start: float, later: float) -> None:
        self.readings = [start]
        self.later = later

    def __call__(self) -> float:
        return self.readings.pop(0) if self.readings else self.later


def test_a_file_written_while_the_first_tick_reads_it_is_a_run_being_written(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """The pty test's `1 undone`, one run in eight: msrun wrote rank 0's log (timed out)
    while the view's first tick read it, so its mtime came after the tick's start. Taken as
    a clock that tells nothing (a skewed file server), the run was called settled and given
    triage's verdict on the half written run: `silent-rank on ranks 1-7`."""
    source = FIXTURES / "synth_hccl_ei0006_after_oom_8p" / "msrun_log"
    target = tmp_path / "msrun_log"
    target.mkdir()
    written = 2e9
    for name in ("scheduler.log", "worker_0.log"):
        shutil.copyfile(source / name, target / name)
        os.utime(target / name, (written, written))
    live = LiveRun([str(target)], rules, clock=_TickClock(written - 0.005, written + 0.005))
    try:
        first = live.tick()
    finally:
        live.close()
    assert first.quiet_s == 0.0 and not first.ended
    assert "silent-rank" not in {f.rule for f in first.report.findings}
