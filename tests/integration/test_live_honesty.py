"""The live view never contradicts itself: the verdict and each rank's status come from
one judgement. A real hang (fixtures/cpu_dp4_hang_rank2_allreduce_timeout: rank 2 stops
after step 3, ranks 0, 1 and 3 time out 30 s later) is written into a directory as it
happened, and the live engine judges it with a clock the test moves:

* every rank quiet: the ranks the verdict names are `stalled` in the table too;
* the others time out naming rank 2: rank 2 is `stalled`, and stays so when its log only
  says a peer closed the connection (the third-party trial saw it flip back to `training`);
* rank 2 logs a step of its own: it is no longer held.

Post mortem, over every fixture: a rank the headline names never reads as still at work.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Status
from msrunwatch.live.run import SETTLED_S, LiveRun, run_ended
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from tests.integration.fastpaths import ACCURACY
from tests.support import FIXTURES, Clock, Replay, judged, log_time, statuses, watching

HANG = FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout" / "msrun_log"
STALL_AFTER_S = 10.0
AT_WORK = {Status.STARTING, Status.COMPILING, Status.TRAINING, Status.WAITING}


@pytest.fixture
def hang(tmp_path: Path, rules: list[Rule]) -> Iterator[tuple[Replay, LiveRun, Clock]]:
    with watching(HANG, tmp_path / "msrun_log", rules, STALL_AFTER_S) as watched:
        yield watched


def test_the_verdict_and_the_rows_agree_through_a_hang(
    hang: tuple[Replay, LiveRun, Clock],
) -> None:
    replay, live, clock = hang
    hung_at = log_time(b"):2026-11-25-19:17:04.883 ")
    assert hung_at is not None
    replay.until(hung_at)
    quiet = judged(live, clock, hung_at + 3 * STALL_AFTER_S)
    cause = quiet.root_cause
    assert cause is not None and cause.category == "stalled"
    assert {statuses(quiet)[r] for r in cause.ranks} == {Status.STALLED}
    assert fmt.cause_verb(quiet) in ("hung", "hung first")

    timed_out = log_time(b"):2026-11-25-19:17:38.100 ")
    assert timed_out is not None
    replay.until(timed_out)
    named = judged(live, clock, timed_out + 1)
    assert named.root_cause is not None and named.root_cause.ranks == (2,)
    assert statuses(named) == {0: Status.TIMED_OUT, 1: Status.TIMED_OUT, 2: Status.STALLED,
                               3: Status.TIMED_OUT}  # fmt: skip
    assert run_ended(named)  # its peers ended: msrun stops it; nothing is still at work

    replay.until(timed_out + 10)  # rank 2's last line: a peer closed the connection
    held = judged(live, clock, timed_out + 12)
    assert statuses(held)[2] is Status.STALLED
    assert held.ranks[2].status_reason.startswith("hung: Ring ReduceScatter waited for rank 2")


def test_a_rank_held_as_hung_is_released_by_its_own_progress(
    hang: tuple[Replay, LiveRun, Clock],
) -> None:
    """Named hung while the others still trained (rank-stalled), it logs a warning only:
    still stalled; it logs a step: training again."""
    replay, live, clock = hang
    hung_at = log_time(b"):2026-11-25-19:17:04.883 ")
    assert hung_at is not None
    replay.until(hung_at)
    for rank in (0, 1, 3):  # the others keep training
        replay.append(f"worker_{rank}.log", b"epoch: 1 step: 4, loss is 1.0\n", hung_at + 20)
    first = judged(live, clock, hung_at + 21)
    assert statuses(first)[2] is Status.STALLED
    warning = (
        b"[WARNING] DISTRIBUTED(18444,7fd7eaffd6c0,python):2026-11-25-19:17:25.733.499 "
        b"[tcp_client.cc:346] EventCallbackInner] Client connected end of file!\n"
    )
    replay.append("worker_2.log", warning, hung_at + 22)
    assert statuses(judged(live, clock, hung_at + 23))[2] is Status.STALLED
    replay.append("worker_2.log", b"epoch: 1 step: 4, loss is 1.5\n", hung_at + 30)
    assert statuses(judged(live, clock, hung_at + 31))[2] is Status.TRAINING


def _scenarios() -> list[Path]:
    """Real runs and the public dev excerpts (the held-out ones are for bench/accuracy.py)."""
    found = FIXTURES.glob("**/expected.yaml")
    return sorted(p.parent for p in found if "heldout" not in p.parts)


@pytest.mark.parametrize("scenario", _scenarios(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_rank_the_headline_names_is_never_at_work(scenario: Path, rules: list[Rule]) -> None:
    logs, consoles = ACCURACY.logs_and_consoles(scenario)  # its run, as bench/accuracy.py reads it
    report = triage(logs, rules, consoles)
    cause = report.root_cause
    if cause is None:
        return
    named = {r.rank: r.status for r in report.ranks if r.rank in cause.ranks}
    assert not set(named.values()) & AT_WORK, (fmt.headline(report), named)
    if fmt.cause_verb(report).startswith("failed"):  # not a row that says otherwise
        quiet = {Status.FINISHED, Status.STALLED, Status.UNKNOWN}
        assert not set(named.values()) & quiet, (fmt.headline(report), named)


def test_the_replay_helper_keeps_the_fixture_whole(tmp_path: Path) -> None:
    replay = Replay(HANG, tmp_path / "copy")
    replay.until(float("inf"))
    for path in HANG.iterdir():
        assert (tmp_path / "copy" / path.name).read_bytes() == path.read_bytes()
    shutil.rmtree(tmp_path / "copy")


def test_an_ended_run_is_not_judged_again_until_a_line_comes(
    tmp_path: Path, rules: list[Rule], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `■ run ended` the engine only stats the files (and the view ticks at a slow
    heartbeat): at 512 ranks a verdict per second had cost 13% of a core."""
    import msrunwatch.live.run as engine

    target = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log", target)
    clock = Clock()
    live = LiveRun([str(target)], rules, clock=clock)
    calls = []
    judge = engine.judge
    monkeypatch.setattr(engine, "judge", lambda *a, **k: calls.append(1) or judge(*a, **k))
    clock.now = 2e9
    assert live.tick().ended
    before = len(calls)
    for step in range(1, 20):
        clock.now = 2e9 + step * 5.0  # far past JUDGE_S each time
        assert live.tick().ended
    assert len(calls) == before
    with (target / "worker_0.log").open("ab") as fh:
        fh.write(b"a late line\n")
    clock.now += 5.0
    live.tick()
    assert len(calls) == before + 1
    live.close()


def test_the_run_is_called_ended_only_once_its_files_settle(
    hang: tuple[Replay, LiveRun, Clock],
) -> None:
    """The trial's N3: `■ run ended` came the moment rank 0 logged its timeout, while rank 0,
    msrun's console and the scheduler went on writing for 40 s. The verdict is final then;
    the run is called ended once no file has grown for SETTLED_S while watched."""
    from msrunwatch.live.run import SETTLED_S

    replay, live, clock = hang
    hung_at = log_time(b"):2026-11-25-19:17:04.883 ")
    timed_out = log_time(b"):2026-11-25-19:17:38.100 ")
    assert hung_at is not None and timed_out is not None
    replay.until(hung_at)
    judged(live, clock, hung_at)  # caught up: what it read first does not count
    replay.until(timed_out)  # written while watched
    clock.now = timed_out
    writing = live.tick()
    assert run_ended(writing.report) and not writing.ended
    clock.now = timed_out + SETTLED_S - 1
    assert not live.tick().ended
    clock.now = timed_out + SETTLED_S
    assert live.tick().ended
    replay.until(timed_out + 10)  # rank 2 logs again: a peer closed the connection
    clock.now = timed_out + 10
    again = live.tick()
    assert run_ended(again.report) and not again.ended
    clock.now = timed_out + 10 + SETTLED_S
    assert live.tick().ended


def test_a_finished_run_opened_later_is_ended_at_once(tmp_path: Path, rules: list[Rule]) -> None:
    target = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log", target)  # new mtimes
    clock = Clock()
    live = LiveRun([str(target)], rules, clock=clock)
    clock.now = 2e9
    update = live.tick()
    assert update.caught_up and update.ended  # its files were written long before 2e9
    live.close()


def test_a_run_whose_first_read_catches_it_being_written_is_not_taken_for_a_finished_one(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """The pty test's `Findings (8, 4 errors, 1 undone)`, one run in two: the view's first
    read came after msrun had written the scheduler's log and rank 0's (timed out), before
    ranks 1-7's. Taken for a finished run opened later, it was handed to triage's verdict at
    once: `silent-rank on ranks 1-7`, undone by the next tick. Files written a moment ago
    are a run being written: no verdict from what is not there yet, not ended."""
    source = FIXTURES / "synth_hccl_ei0006_after_oom_8p" / "msrun_log"
    target = tmp_path / "msrun_log"
    target.mkdir()
    clock = Clock()
    clock.now = 2e9
    for name in ("scheduler.log", "worker_0.log"):
        shutil.copyfile(source / name, target / name)
        os.utime(target / name, (clock.now - 0.2, clock.now - 0.2))  # written just now
    live = LiveRun([str(target)], rules, clock=clock)
    try:
        first = live.tick()
        assert first.caught_up and not first.ended
        assert "silent-rank" not in {f.rule for f in first.report.findings}
        for name in sorted(p.name for p in source.iterdir()):
            if not (target / name).exists():
                shutil.copyfile(source / name, target / name)
                os.utime(target / name, (clock.now, clock.now))
        clock.now += SETTLED_S + 1
        done = judged(live, clock, clock.now)
        assert {f.rule for f in done.findings} >= {"oom-memory-not-enough", "cann-ei0006"}
        assert "silent-rank" not in {f.rule for f in done.findings}
    finally:
        live.close()
