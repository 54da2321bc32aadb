"""A finished run gets one verdict: once the live view has called it ended (`■ run ended`)
and nothing was written for longer than --stall-after (what makes triage call a run over),
the view's verdict is triage's. The re-trial found them apart on a run that never finished
cleanly: rank 1's log cut short, rank 0 ended normally; the view said `FAILED ... hung
(run-stalled)`, triage `ok` (rank 1's log ends with rank 0's). One case stays apart, as the
README says: every rank quiet at once, none ended. The view calls that hung (its processes
may be stuck in a collective); triage, which reads it afterwards, `stopped` from outside.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock, judged, log_time

STALL_AFTER_S = 30.0
HEALTHY = FIXTURES / "cpu_dp2_success_glog1" / "msrun_log"


def cut_short(target: Path, keep: dict[str, float], run: Path = HEALTHY) -> float:
    """The healthy run (or `run`) with some files cut to a share of their lines, each file's
    time its last line's (as if written then); returns the newest."""
    shutil.copytree(run, target)
    newest = 0.0
    for path in target.iterdir():
        lines = path.read_bytes().splitlines(keepends=True)
        lines = lines[: int(len(lines) * keep.get(path.name, 1.0))]
        path.write_bytes(b"".join(lines))
        last = max(t for line in lines if (t := log_time(line)) is not None)
        os.utime(path, (last, last))
        newest = max(newest, last)
    return newest


def said(report: Report) -> tuple[object, ...]:
    cause = report.root_cause
    return (
        report.outcome,
        None if cause is None else (cause.rule, cause.ranks),
        {r.rank: r.status for r in report.ranks},
        sorted(f.rule for f in report.findings),
    )


def verdicts(target: Path, at: float, rules: list[Rule]) -> tuple[Report, bool, Report]:
    """The live view's verdict at `at` (and whether it called the run ended), and triage's."""
    clock = Clock()
    live = LiveRun([str(target)], rules, stall_after_s=STALL_AFTER_S, clock=clock)
    try:
        report = judged(live, clock, at)
        ended = live.tick().ended
    finally:
        live.close()
    post = PostMortem(stall_after_s=STALL_AFTER_S)
    return report, ended, triage([str(target)], rules, post=post)


def test_a_rank_cut_short_beside_one_that_ended_gets_triages_verdict(
    tmp_path: Path, rules: list[Rule]
) -> None:
    target = tmp_path / "msrun_log"
    newest = cut_short(target, {"worker_1.log": 0.6, "scheduler.log": 0.5})
    live, ended, post_mortem = verdicts(target, newest + 3 * STALL_AFTER_S, rules)
    assert ended
    assert said(live) == said(post_mortem)
    assert post_mortem.outcome == "ok"  # rank 1's log ends with rank 0's (judge.clock.stopped)


def test_every_rank_quiet_and_none_ended_is_hung_live_and_stopped_after(
    tmp_path: Path, rules: list[Rule]
) -> None:
    target = tmp_path / "msrun_log"
    newest = cut_short(target, {"worker_0.log": 0.6, "worker_1.log": 0.6, "scheduler.log": 0.5})
    live, ended, post_mortem = verdicts(target, newest + 3 * STALL_AFTER_S, rules)
    assert not ended
    assert live.root_cause is not None and live.root_cause.rule == "run-stalled"
    assert live.root_cause.reason.startswith(  # its rule's why: fits when every rank is quiet
        "a job whose every rank still at work is quiet without a fault is hung"
    ), live.root_cause.reason
    assert {r.status.value for r in live.ranks} == {"stalled"}
    assert post_mortem.root_cause is not None
    assert post_mortem.root_cause.rule == "job-stopped-silently"
    assert {r.status.value for r in post_mortem.ranks} == {"stopped"}


OOM_8P = FIXTURES / "synth_hccl_ei0006_after_oom_8p" / "msrun_log"


def copy_now(names: list[str], target: Path, now: float) -> None:
    """Copy these files of the 8-rank OOM run as a writer would at `now` (their mtime, the
    engine's clock: however long the copy takes on a busy machine); the logs' own times are
    days old, as when a kept run is replayed into a watched directory."""
    for name in names:
        shutil.copyfile(OOM_8P / name, target / name)
        os.utime(target / name, (now, now))


def test_a_pause_in_the_writing_is_not_the_end_of_the_run(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """The CI run that failed: a writer paused after the scheduler's and rank 0's logs (rank 0
    timed out; ranks 1-7 not written yet), and 5 s later the view gave triage's verdict on
    that half (silent-rank on ranks 1-7), because lines days older than the files' mtimes read
    to triage's clock as a copy of a run long over. The view saw those files grow seconds ago:
    the run is not over by any clock, and nothing said then is undone by the rest."""
    target = tmp_path / "msrun_log"
    target.mkdir()
    clock = Clock()
    clock.now = time.time()
    live = LiveRun([str(target)], rules, stall_after_s=STALL_AFTER_S, clock=clock)
    try:
        live.tick()  # the first catch-up: nothing yet
        copy_now(["scheduler.log", "worker_0.log"], target, clock.now)
        paused = judged(live, clock, clock.now + 1.0)
        paused = judged(live, clock, clock.now + 2 * 5.0)  # past SETTLED_S, within --stall-after
        copy_now(sorted(p.name for p in OOM_8P.iterdir()), target, clock.now)
        final = judged(live, clock, clock.now + 1.0)
        final = judged(live, clock, clock.now + 3 * STALL_AFTER_S)
    finally:
        live.close()
    post_mortem = triage([str(target)], rules, post=PostMortem(stall_after_s=STALL_AFTER_S))
    assert {f.rule for f in paused.findings} <= {f.rule for f in final.findings}, "undone later"
    assert said(final) == said(post_mortem)
    assert final.root_cause is not None and final.root_cause.ranks == (3,)


def test_an_ended_run_is_judged_again_slowly_and_still_reaches_triages_verdict(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """Trial N6: a 512-rank run left open cost 6-7% of a core for two minutes after `■ run
    ended`, judged again every second while its files' silences grew past the rules'
    thresholds. Now an ended, quiet run is judged again every eighth of that silence: at the
    default --stall-after an OOM run is judged ~115 times before its files are quiet past
    every threshold where it is now ~25, and still ends with triage's verdict."""
    stall_after_s = 120.0
    target = tmp_path / "msrun_log"
    newest = cut_short(target, {}, FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log")
    clock = Clock()
    live = LiveRun([str(target)], rules, stall_after_s=stall_after_s, clock=clock)
    judgements, seen = 0, None
    try:
        for half_seconds in range(int(3 * stall_after_s * 2)):
            clock.now = newest + 6.0 + half_seconds / 2
            update = live.tick()
            assert update.ended, f"not ended {half_seconds / 2} s after its settling"
            judgements += update.report is not seen
            seen = update.report
    finally:
        live.close()
    post = triage([str(target)], rules, post=PostMortem(stall_after_s=stall_after_s))
    assert said(update.report) == said(post)
    assert judgements <= stall_after_s / 3, f"judged {judgements} times once ended"
