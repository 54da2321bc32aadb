"""The feed: the live engine ticked on a worker thread, its messages, and the app around it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.message import Message

from msrunwatch.judge.model import Status
from msrunwatch.live.run import SETTLED_S, DirtySet, LiveRun, Update, run_ended
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Rule
from msrunwatch.tui import feed as feed_module
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.feed import LiveFeed, Post, messages
from msrunwatch.tui.messages import FilesRestarted, FindingsRaised, LogsFound, SnapshotUpdated
from tests.support import HANG_S
from tests.tui.tui_scenarios import (
    fixture_report,
    healthy_copy,
    oom_line_for,
    running_copy,
    snapshot,
)


async def until(condition: Callable[[], bool], timeout: float = HANG_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_snapshots_fold_and_findings_never_do() -> None:
    update = snapshot(fixture_report("cpu_dp2_oom_alloc_failed"))
    newer = SnapshotUpdated(update)
    assert SnapshotUpdated(update).can_replace(newer)
    assert not SnapshotUpdated(update).can_replace(FindingsRaised((), None))
    assert not FindingsRaised((), None).can_replace(FindingsRaised((), None))


def test_a_tick_gives_restarts_then_findings_then_the_snapshot() -> None:
    report = fixture_report("cpu_dp2_oom_alloc_failed")
    update = snapshot(report)
    restarted = type(update)(report, report.findings, (), {}, 0, 0, ("msrun_log/worker_0.log",), 0)
    kinds = [type(m) for m in messages(restarted)]
    assert kinds == [FilesRestarted, FindingsRaised, SnapshotUpdated]
    quiet = type(update)(report, (), (), {}, 0, 0, (), 0)
    assert [type(m) for m in messages(quiet)] == [SnapshotUpdated]


@pytest.mark.slow
def test_live_feed_ticks_a_real_run_on_a_thread(tmp_path: Path) -> None:
    run = healthy_copy(tmp_path)
    live = LiveRun([str(run)], load_rules())
    feed = LiveFeed(live, tick_s=0.05)
    try:
        seen = run_until(feed, lambda u: len(u.report.ranks) == 2 and u.caught_up, "two ranks")
    finally:
        live.close()
    snapshots = [m for m in seen if isinstance(m, SnapshotUpdated)]
    assert all(r.status is Status.FINISHED for r in snapshots[-1].update.report.ranks)


@pytest.mark.slow
async def test_the_app_follows_a_run_that_fails(tmp_path: Path) -> None:
    run = running_copy(tmp_path)
    # rank 1 is silent from the copy on: no machine is so slow that it reads as stalled
    live = LiveRun([str(run)], load_rules(), stall_after_s=10 * HANG_S)
    feed = LiveFeed(live, tick_s=0.05)
    target = MsrunwatchApp(feed, [str(run)])
    try:
        async with target.run_test(size=(160, 40)) as pilot:
            table = target.table
            await until(lambda: len(table.model.rows) == 2)
            assert target.verdict_code == 0
            log = run / "msrun_log" / "worker_1.log"
            with log.open("a") as fh:
                fh.write(oom_line_for(log))
            live.dirty.add(log)
            await until(lambda: table.model.rows[1].status is Status.FAILED)
            await until(
                lambda: any(f.rule == "oom-memory-not-enough" for f in target.findings.ordered())
            )
            assert "rank 1 failed first: oom" in str(target.header.render())
            await pilot.press("q")
        assert target.return_value == 1
        assert feed.join(HANG_S), "quitting stops the feed thread"
    finally:
        live.close()


class BrokenFeed:
    """A feed whose reading fails at once."""

    def run(self, post: Post) -> None:
        raise OSError("Input/output error")

    def stop(self) -> None:
        pass

    def applied(self) -> None:
        pass


async def test_a_failing_feed_is_shown_not_fatal() -> None:
    target = MsrunwatchApp(BrokenFeed(), ["msrun_log"])
    async with target.run_test(size=(160, 40)) as pilot:
        await until(lambda: target.header.feed_error is not None)
        assert "feed stopped: OSError: Input/output error" in str(target.header.render())
        await pilot.press("down", "q")  # still answers keys
    assert target.return_value == 0


@pytest.fixture
def idle_for_ever(monkeypatch: pytest.MonkeyPatch) -> float:
    """An ended run's heartbeat longer than any wait of the test's: a join that returns shows
    the stop ended the feed's wait (with the real 2 s, waiting it out would pass too)."""
    monkeypatch.setattr(feed_module, "IDLE_TICK_S", 10 * HANG_S)
    return 10 * HANG_S


def run_until(feed: LiveFeed, reached: Callable[[Update], bool], what: str) -> list[Message]:
    """Run the feed on a thread until it posts a snapshot that has `what`; what it posted.
    A stop must end its wait (the idle heartbeat's too)."""
    seen: list[Message] = []
    done = threading.Event()

    def post(message: Message) -> None:
        seen.append(message)
        if isinstance(message, SnapshotUpdated):
            feed.applied()
            if reached(message.update):
                done.set()

    thread = threading.Thread(target=feed.run, args=(post,), daemon=True)
    thread.start()
    try:
        assert done.wait(HANG_S), f"the feed posted no snapshot with {what}"
    finally:
        feed.stop()
        assert feed.join(HANG_S), "a stop ends the feed's wait"
    return seen


def until_ended(feed: LiveFeed) -> list[Message]:
    """What the feed posted up to a snapshot of the run ended."""
    return run_until(feed, lambda u: u.ended, "the run ended")


def test_the_feed_says_what_it_reads_and_idles_once_the_run_ended(
    tmp_path: Path, idle_for_ever: float
) -> None:
    """Before the first read, how many logs (the screen says `reading 3 logs…`, not
    `waiting for rank logs…`); once the run has ended and nothing grows, a slow heartbeat;
    a stop still ends the wait at once."""
    run = healthy_copy(tmp_path)
    live = LiveRun([str(run)], load_rules())
    feed = LiveFeed(live, tick_s=0.05)
    try:
        seen = until_ended(feed)
    finally:
        live.close()
    found = seen[0]
    assert isinstance(found, LogsFound) and found.count == 3  # 2 workers and the scheduler
    last = [m for m in seen if isinstance(m, SnapshotUpdated)][-1].update
    idle = type(last)(last.report, time=last.time)  # ended, and nothing read this tick
    assert feed._period(idle) == idle_for_ever > feed.tick_s
    assert feed._period(type(last)(last.report, bytes_read=1, time=last.time)) == feed.tick_s


class Settling:
    """An engine whose verdict is final and whose files settle: the same report each tick,
    quiet for 1 s, then for SETTLED_S (the header's `■ run ended`, --exit-when-done)."""

    clock = staticmethod(time.time)

    def __init__(self, name: str) -> None:
        self.targets: list[str] = []
        self.consoles: list[str] = []
        self.rules: list[Rule] = []
        report = fixture_report(name)
        self.ticks = [Update(report, quiet_s=1.0), Update(report, quiet_s=SETTLED_S)]
        self.dirty = DirtySet()

    def tick(self) -> Update:
        return self.ticks.pop(0) if len(self.ticks) > 1 else self.ticks[0]

    def paths(self) -> list[Path]:
        return []

    def close(self) -> None:
        pass


def test_the_run_ending_reaches_the_view_though_the_verdict_is_the_same(
    idle_for_ever: float,
) -> None:
    """The engine does not judge a final verdict again: the tick on which its files have
    settled carries the same report, and the view must still hear that the run ended
    (else the header stays `● live` and --exit-when-done never leaves the view)."""
    engine = Settling("cpu_dp4_hang_rank2_allreduce_timeout")
    assert run_ended(engine.ticks[0].report) and not engine.ticks[0].ended
    seen = until_ended(LiveFeed(engine, tick_s=0.01))
    assert [m.update.ended for m in seen if isinstance(m, SnapshotUpdated)] == [False, True]


async def test_the_screen_says_it_is_reading_before_the_first_snapshot() -> None:
    target = MsrunwatchApp(None, ["msrun_log"])
    async with target.run_test(size=(80, 24)) as pilot:
        target.post_message(LogsFound(512))
        await pilot.pause()
        assert "reading 512 logs…" in str(target.header.render())
        assert target.table.empty_text == "reading 512 logs…"


async def test_exit_when_done_leaves_the_verdict_on_the_terminal() -> None:
    """The view closes when the run ends; what it showed is printed after it (launch)."""
    from msrunwatch.tui.launch import verdict_text

    report = fixture_report("cpu_dp2_oom_alloc_failed")
    target = MsrunwatchApp(None, ["msrun_log"], exit_when_done=True)
    async with target.run_test(size=(80, 24)) as pilot:
        target.post_message(SnapshotUpdated(snapshot(report)))
        await pilot.pause()
    assert target.run_ended and target.return_value == 1
    text = verdict_text(report, color=False).splitlines()
    assert text[0] == "FAILED  rank 1 failed first: oom (2 failed)"
    assert (
        text[-1] == "  every rank and finding: msrunwatch triage fixtures/cpu_dp2_oom_alloc_failed"
    )
    assert len(text) < 12  # a screen's worth: the table and findings are triage's
    console = "fixtures/cpu_dp2_oom_alloc_failed/msrun_console.txt"
    said = verdict_text(report, color=False, consoles=[console]).splitlines()[-1]
    assert said.endswith(f"msrunwatch triage fixtures/cpu_dp2_oom_alloc_failed --console {console}")


async def test_q_leaves_the_verdict_on_the_terminal_too() -> None:
    """Quitting a view that showed a failure keeps its verdict, as --exit-when-done does;
    before the first verdict, or after a signal, nothing is printed."""
    from msrunwatch.tui.launch import parting_words, verdict_text

    report = fixture_report("cpu_dp2_oom_alloc_failed")
    target = MsrunwatchApp(None, ["msrun_log"])
    async with target.run_test(size=(80, 24)) as pilot:
        target.post_message(SnapshotUpdated(snapshot(report)))
        await pilot.pause()
        await pilot.press("q")
    assert not target.run_ended and target.return_value == 1
    said = parting_words(target, color=False)
    assert said == verdict_text(report, color=False)
    assert said.startswith("FAILED  rank 1 failed first: oom (2 failed)\n")
    target.stop_signal = 15
    assert parting_words(target, color=False) == ""

    early = MsrunwatchApp(None, ["msrun_log"])
    async with early.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
    assert early.return_value == 0 and parting_words(early, color=False) == ""


async def test_a_run_level_cause_says_why_where_a_line_would_be() -> None:
    report = fixture_report("synth_rank_silent_empty_log")
    assert report.root_cause is not None and report.root_cause.file is None
    target = MsrunwatchApp(None, ["msrun_log"])
    async with target.run_test(size=(80, 24)) as pilot:
        target.post_message(SnapshotUpdated(snapshot(report)))
        await pilot.pause()
        header = str(target.header.render())
    assert "rank 2 hung first: stalled" in header
    assert "why: the ranks that timed out were waiting in a collective" in header  # the rule's
    assert "at -" not in header


async def test_a_second_run_beside_the_one_shown_is_said_once(tmp_path: Path) -> None:
    """The live engine follows the newest of two runs under one directory; the view says
    so in a notice (once, not at every snapshot) and again on the terminal after `q`."""
    from msrunwatch.tui.launch import parting_words
    from tests.integration.test_several_runs import two_attempts, watched

    parent = two_attempts(tmp_path)
    report = watched(parent)
    target = MsrunwatchApp(None, [str(parent)])
    async with target.run_test(size=(80, 24)) as pilot:
        for _ in range(2):  # two snapshots, applied one after the other
            target.post_message(SnapshotUpdated(snapshot(report)))
            await pilot.pause()
        notes = [n.message for n in target._notifications if "holds 2 runs" in n.message]
        assert len(notes) == 1 and "showing the newest, msrun_log_1, alone" in notes[0]
        await pilot.press("q")
    said = parting_words(target, color=False).splitlines()
    assert said[0].startswith("FAILED  rank 1 failed first: oom")
    assert any("holds 2 runs" in line for line in said)
    assert said[-1].endswith(f"msrunwatch triage {parent}/msrun_log_1")  # a command that runs
