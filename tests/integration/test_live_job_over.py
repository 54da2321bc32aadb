"""The live view ends a run that did not finish cleanly when its logs say the job is over,
and then says what triage says (the re-trial's F2 and F4).

F2: fixtures/cpu_kill9_rank1/msrun_log without msrun's console (seldom inside --log_dir),
written into a directory as it happened: rank 1 is SIGKILLed after step 4 (its log stops at
19:02:51), rank 0 writes on until 19:02:54 and then waits in its collective. The scheduler
times out node 0 at 19:03:20, and its shutdown at 19:03:22 finds `1 abnormal compute graph
nodes`: it raises and exits, and msrun stops every worker left. Rank 0 read `waiting` for
good, the view never said `run ended`, `--exit-when-done` never exited; triage said
`killed`. A waiting rank stays alive until its own collective timeout or that shutdown.

F4: fixtures/cpu_hang_rank1_stuck_ctrl_c, stopped with Ctrl+C 90 s into a hang: msrun's
console says `msrun process received SIGINT (Ctrl+C), terminating all workers.` at
18:43:52. The header said so above rows `training` for good, and triage within
--stall-after of that line said `job-stopped (2 training)`. msrun's word ends every rank,
live and in triage, whatever the clock.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report, Status
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from tests.integration.test_live_as_triage import said, verdicts
from tests.integration.test_live_waiters import at
from tests.support import FIXTURES, judged, statuses, watching

KILLED = FIXTURES / "cpu_kill9_rank1" / "msrun_log"
CTRL_C = FIXTURES / "cpu_hang_rank1_stuck_ctrl_c"
STALL_AFTER_S = 120.0
"""The default: the end must come from the logs, not from --stall-after."""


def test_the_scheduler_giving_up_ends_the_waiting_without_the_console(
    tmp_path: Path, rules: list[Rule]
) -> None:
    with watching(KILLED, tmp_path / "msrun_log", rules, STALL_AFTER_S) as (written, live, clock):
        written.until(at("19:03:21.000"))  # node 0 timed out; the scheduler not yet shut down
        waiting = judged(live, clock, at("19:03:22.000"))
        assert statuses(waiting)[0] is Status.WAITING
        assert not live.tick().ended

        written.until(at("19:03:23.000"))  # `There are 1 abnormal compute graph nodes.`
        over = judged(live, clock, at("19:03:23.500"))
        assert statuses(over) == {0: Status.KILLED, 1: Status.FAILED}
        assert over.ranks[0].status_reason == "its log stops after another rank failed"
        written.until(at("19:04:00.000"))  # its traceback, then nothing
        clock.now = at("19:03:35.000")
        ended = live.tick()
        assert ended.ended  # `■ run ended`; --exit-when-done exits
    post_mortem = triage([str(tmp_path / "msrun_log")], rules, post=PostMortem())
    assert said(ended.report) == said(post_mortem)
    assert fmt.headline(ended.report) == "rank 1 failed first: node-timeout (1 killed, 1 failed)"


def flat_run(target: Path) -> Path:
    """The Ctrl+C run's logs and msrun's console in one directory (Replay writes files)."""
    target.mkdir()
    for path in (CTRL_C / "msrun_log").iterdir():
        shutil.copyfile(path, target / path.name)
    shutil.copyfile(CTRL_C / "msrun_console.txt", target / "msrun_console.txt")
    return target


def stopped_every_worker(report: Report) -> None:
    cause = report.root_cause
    assert cause is not None and cause.category == "job-stopped", cause
    assert statuses(report) == {0: Status.STOPPED, 1: Status.STOPPED}
    assert fmt.headline(report) == "the job failed: job-stopped (2 stopped)"
    assert report.ranks[0].status_reason.endswith(
        "the run is over: msrun was stopped and terminated every worker"
    ), report.ranks[0].status_reason


def test_msrun_stopped_with_ctrl_c_ends_every_rank_live_at_once(
    tmp_path: Path, rules: list[Rule]
) -> None:
    source = flat_run(tmp_path / "source")
    with watching(source, tmp_path / "run", rules, STALL_AFTER_S) as (written, live, clock):
        written.until(at("18:43:52.000"))  # 90 s into the hang; before Ctrl+C
        hung = judged(live, clock, at("18:43:52.200"))
        assert hung.root_cause is None and set(statuses(hung).values()) == {Status.TRAINING}

        written.until(at("18:43:53.000"))  # msrun: SIGINT, terminating all workers
        stopped_every_worker(judged(live, clock, at("18:43:53.100")))
        written.until(at("18:45:00.000"))
        clock.now = at("18:44:05.000")
        ended = live.tick()
        assert ended.ended
        stopped_every_worker(ended.report)


def test_ctrl_c_after_the_view_named_the_hang_still_ends_every_rank(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """The re-trial's F4': the order it happens in: the view names the hang (here after
    --stall-after 20 s of the 90 s of silence), the user sees it and stops msrun with
    Ctrl+C. The ranks the view held as hung read `stalled` for good under a `job-stopped`
    header, and the view never ended, where triage said `job-stopped (2 stopped)`. Once
    msrun has terminated every worker, no rank is held as hung: the run ends, as triage
    says (the hang shows among the findings undone by later lines)."""
    source = flat_run(tmp_path / "source")
    with watching(source, tmp_path / "run", rules, 20.0) as (written, live, clock):
        written.until(at("18:43:52.000"))
        hung = judged(live, clock, at("18:43:52.200"))
        assert set(statuses(hung).values()) == {Status.STALLED}, statuses(hung)

        written.until(at("18:43:53.000"))  # msrun: SIGINT, terminating all workers
        cause = judged(live, clock, at("18:43:53.100")).root_cause
        assert cause is not None and cause.category == "job-stopped"
        written.until(at("18:45:00.000"))
        clock.now = at("18:44:05.000")
        ended = live.tick()
        assert ended.ended  # `■ run ended`; --exit-when-done exits
        assert statuses(ended.report) == {0: Status.STOPPED, 1: Status.STOPPED}
    post_mortem = triage([str(tmp_path / "run")], rules, post=PostMortem(stall_after_s=20.0))
    assert said(ended.report) == said(post_mortem)


def test_triage_of_a_run_stopped_with_ctrl_c_never_counts_it_training(
    rules: list[Rule],
) -> None:
    """At msrun's line (--now last-line) as long after: the same verdict, no `training`."""
    for clock in (PostMortem(last_line=True), PostMortem()):
        stopped_every_worker(triage([str(CTRL_C)], rules, post=clock))


WRITTEN_AGO_S = 90.0
"""How long before the view opens the copied files were written: past --stall-after (30 s
in `verdicts`), as a run finished minutes ago."""
STOPPED_FROM_OUTSIDE = {
    "cpu_sigterm_whole_job": "every process SIGTERMed at once",
    "synth_megatron_mindspeed_2p": "every rank's log stops mid-run, no word why",
    "cpu_hang_rank1_stuck_ctrl_c": "msrun's SIGINT line is in its console, not read here",
}
"""Runs whose logs alone (no console) do not say the job is over: live, every rank went quiet
at once and none ended, which reads hung (its processes may be stuck in a collective);
triage, reading it afterwards, calls it stopped from outside. The README says so."""


def _log_dirs() -> list[str]:
    return sorted(p.parent.name for p in FIXTURES.glob("*/msrun_log") if p.is_dir())


@pytest.mark.parametrize("name", _log_dirs())
def test_a_log_dir_alone_ends_live_with_triages_verdict(
    name: str, tmp_path: Path, rules: list[Rule]
) -> None:
    """`msrunwatch watch X/msrun_log --headless --exit-when-done` as the re-trial ran it on
    every fixture (files written minutes ago, lines days old): the view ends (what
    --exit-when-done waits for) with triage's verdict on the same directory. 18 of 56 never
    ended: a rank failed, the others stayed `waiting` though the scheduler had given up. (The
    stall threshold is test_live_as_triage's: the files are three of them old.)"""
    target = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / name / "msrun_log", target)
    now = time.time()
    for path in target.rglob("*"):
        os.utime(path, (now - WRITTEN_AGO_S, now - WRITTEN_AGO_S))
    report, ended, post_mortem = verdicts(target, now, rules)
    if name in STOPPED_FROM_OUTSIDE:
        assert not ended, statuses(report)  # hung (or still training) to the view ...
        assert set(statuses(post_mortem).values()) == {Status.STOPPED}  # stopped to triage
        return
    assert ended, statuses(report)
    assert said(report) == said(post_mortem)


def test_every_run_stopped_from_outside_is_a_fixture() -> None:
    assert set(STOPPED_FROM_OUTSIDE) <= set(_log_dirs())
