"""The first seconds of a live run: a rank that has started is `starting`, not `unknown`.

The trial's N4: for the first second the header read `UNKNOWN no verdict yet` above rows
`unknown`. Two real states lead there, both from real MindSpore runs:

* msrun opens each worker's log as it starts the process; MindSpore's import takes
  seconds before the first line, so every log is empty at first
  (fixtures/cpu_dp4_hang_rank2_allreduce_timeout, written from before its first line);
* at GLOG_v=3 a rank's first lines are its script's prints, with no GLOG timestamp
  (fixtures/cpu_healthy_glog3: none until the process exits), for as long as the graph
  compiles.

Such a rank is `starting` in the live rows, the header (`RUNNING no faults so far`), the
JSON and, for a log with lines, in triage too. An empty log after the run is `unknown`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report, Status
from msrunwatch.judge.statuses import EMPTY_LIVE
from msrunwatch.live.run import LiveRun
from msrunwatch.report import jsonout
from msrunwatch.rules.model import Rule
from msrunwatch.tui.widgets.run_header import verdict
from tests.integration.test_live_honesty import HANG
from tests.support import FIXTURES, Clock, judged, log_time, statuses, watching

GLOG3 = FIXTURES / "cpu_healthy_glog3" / "msrun_log"


def _json_statuses(report: Report) -> dict[int, str]:
    return {r["rank"]: r["status"] for r in json.loads(jsonout.render(report))["ranks"]}


def test_a_rank_whose_first_lines_are_prints_is_starting(tmp_path: Path, rules: list[Rule]) -> None:
    target = tmp_path / "msrun_log"
    target.mkdir()
    shutil.copy(GLOG3 / "scheduler.log", target)  # empty at GLOG_v=3, as msrun left it
    for name in ("worker_0.log", "worker_1.log"):
        first = (GLOG3 / name).read_bytes().splitlines(keepends=True)[0]
        assert first.startswith(b"[train] rank=")  # the script's print, no GLOG time
        (target / name).write_bytes(first)
    clock = Clock()
    clock.now = (target / "worker_0.log").stat().st_mtime + 1
    live = LiveRun([str(target)], rules, clock=clock)
    report = judged(live, clock, clock.now)
    assert statuses(report) == {0: Status.STARTING, 1: Status.STARTING}
    assert report.outcome == "running" and verdict(report) == "no faults so far"
    assert _json_statuses(report) == {0: "starting", 1: "starting"}
    assert statuses(triage([str(target)], rules)) == statuses(report)  # post mortem too
    for name in ("worker_0.log", "worker_1.log"):  # its first step
        second = (GLOG3 / name).read_bytes().splitlines(keepends=True)[1]
        with (target / name).open("ab") as fh:
            fh.write(second)
    assert set(statuses(judged(live, clock, clock.now + 1)).values()) == {Status.TRAINING}
    live.close()


def test_logs_still_empty_are_starting_while_watched(tmp_path: Path, rules: list[Rule]) -> None:
    first = log_time(b"):2026-11-25-19:16:53.432 ")  # worker_1's first line, the run's first
    assert first is not None
    with watching(HANG, tmp_path / "msrun_log", rules, 10.0) as (replay, live, clock):
        replay.until(first - 1)  # every log there, every log empty: as msrun opens them
        assert {p.stat().st_size for p in replay.target.iterdir()} == {0}
        report = judged(live, clock, first)
        assert statuses(report) == dict.fromkeys(range(4), Status.STARTING)
        assert {r.status_reason for r in report.ranks} == {EMPTY_LIVE}
        assert report.outcome == "running" and verdict(report) == "no faults so far"
        assert set(_json_statuses(report).values()) == {"starting"}
        later = judged(live, clock, first + 11)  # past --stall-after, still nothing written
        assert set(statuses(later).values()) == {Status.UNKNOWN}


def test_an_empty_log_after_the_run_is_unknown(tmp_path: Path, rules: list[Rule]) -> None:
    """Post mortem an empty log is a rank that never wrote (synth_rank_silent_empty_log's
    rank 2, named by the silent-rank rule): triage does not call it starting."""
    target = tmp_path / "msrun_log"
    shutil.copytree(GLOG3, target)
    (target / "worker_1.log").write_bytes(b"")
    report = triage([str(target)], rules)
    assert statuses(report)[1] is Status.UNKNOWN
