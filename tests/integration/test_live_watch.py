"""The live engine against a directory that changes under it, as msrun's really does.

A writer thread appends real log lines (split mid-line across writes), truncates a log
(msrun restarted in the same directory), rotates one (rename + new file) and deletes one,
while the real file watcher (native inotify, then watchdog's polling observer as `--poll`
uses it) and the headless loop run in this thread. Every check waits until the state is
right or a deadline passes; nothing asserts after a fixed sleep. Afterwards the watched
directory must hold exactly what the writer made: msrunwatch never writes there.

The tests below the integration test pin engine behaviour found while writing it, with a
fake clock and no threads.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.judge.model import RankReport, Report
from msrunwatch.live import observer
from msrunwatch.live.headless import Headless, HeadlessOptions
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, before_shutdown, writer_stall

HEALTHY = FIXTURES / "cpu_dp2_success_glog2" / "msrun_log"
FAILING = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
DEADLINE_S = 120.0
"""Longest wait for one change (the 2 s rescan finds new files without events): only a net
against a hang, far above what a loaded machine takes, so no outcome depends on speed."""
OLD = 1_600_000_000
"""mtime given to the files msrunwatch must leave alone."""


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


class Writer(threading.Thread):
    """Runs file operations on its own thread, one job at a time, as a job writes logs."""

    def __init__(self) -> None:
        super().__init__(name="log-writer", daemon=True)
        self.jobs: queue.Queue[Callable[[], object] | None] = queue.Queue()
        self.error: BaseException | None = None
        self.idle = threading.Event()
        self.idle.set()

    def submit(self, job: Callable[[], object]) -> None:
        self.idle.clear()
        self.jobs.put(job)

    def run(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                writer_stall()
                job()
            except BaseException as exc:  # surfaced by the test thread
                self.error = exc
            finally:
                if self.jobs.empty():
                    self.idle.set()

    def stop(self) -> None:
        self.jobs.put(None)
        self.join(timeout=10)


def dribble(path: Path, data: bytes, chunk: int = 97) -> None:
    """Append in small writes that split lines, flushed one by one, like a busy logger."""
    with path.open("ab", buffering=0) as fh:
        for i in range(0, len(data), chunk):
            fh.write(data[i : i + chunk])
            time.sleep(0.002)
            if i == 0:
                writer_stall()  # mid-line


class Watch:
    """The observer, the LiveRun and the headless loop over one directory."""

    def __init__(self, log_dir: Path, rules: list[Rule], events: Path, poll: bool) -> None:
        self.live = LiveRun([str(log_dir)], rules)
        self.observer = observer.start([str(log_dir)], self.live.dirty, poll=poll)
        self.headless = Headless(self.live, HeadlessOptions(events=str(events), poll=poll))
        self.events_path = events
        self.report: Report | None = None

    def tick(self) -> None:
        self.headless.step()
        self.report = self.headless.report

    def rank(self, n: int) -> RankReport | None:
        if self.report is None:
            return None
        return next((r for r in self.report.ranks if r.rank == n), None)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.events_path.read_text().splitlines()]

    def close(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=10)
        self.headless.close()
        self.live.close()


def until(watch: Watch, writer: Writer, condition: Callable[[], bool], what: str) -> None:
    """Tick (waking early on file events) until the condition holds; fail at the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        if writer.error is not None:
            raise writer.error
        watch.tick()
        if writer.idle.is_set() and condition():
            return
        assert time.monotonic() < deadline, f"not seen within {DEADLINE_S:g} s: {what}"
        watch.live.dirty.wake.wait(0.05)


def snapshot(directory: Path) -> dict[str, tuple[int, float]]:
    return {
        p.relative_to(directory).as_posix(): (p.stat().st_size, p.stat().st_mtime)
        for p in sorted(directory.rglob("*"))
    }


def open_descriptors_to(path: Path) -> list[str]:
    """This process's descriptors that point at path (Linux /proc)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


@pytest.fixture
def writer() -> Iterator[Writer]:
    thread = Writer()
    thread.start()
    yield thread
    thread.stop()


@pytest.mark.slow
@pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])
def test_live_watch_follows_appends_truncation_rotation_and_deletion(
    tmp_path: Path, rules: list[Rule], writer: Writer, poll: bool
) -> None:
    log_dir = tmp_path / "job" / "msrun_log"
    log_dir.mkdir(parents=True)
    healthy = {n: lines(HEALTHY / n) for n in ("scheduler.log", "worker_0.log", "worker_1.log")}
    failing_1 = lines(FAILING / "worker_1.log")
    for name, content in healthy.items():
        if name != "worker_0.log":  # rank 0 starts once the watcher runs
            (log_dir / name).write_bytes(b"".join(content[:10]))
    (log_dir / "notes.md").write_text("not a log; msrunwatch must not touch it\n")
    for untouched in ("scheduler.log", "notes.md"):
        os.utime(log_dir / untouched, (OLD, OLD))
    before = snapshot(log_dir)

    watch = Watch(log_dir, rules, tmp_path / "events.jsonl", poll)
    try:
        watch.tick()
        worker_0 = log_dir / "worker_0.log"
        writer.submit(lambda: dribble(worker_0, b"".join(healthy["worker_0.log"][:11])))
        # the observer itself reports the new file (not only the engine's own rescan)
        deadline = time.monotonic() + DEADLINE_S
        while not watch.live.dirty.wake.is_set():
            assert time.monotonic() < deadline, "the observer reported no new file"
            watch.live.dirty.wake.wait(0.05)
        dirty = watch.live.dirty.drain()
        assert worker_0 in dirty or worker_0.resolve() in dirty
        for path in dirty:
            watch.live.dirty.add(path)

        until(
            watch,
            writer,
            lambda: all(
                (r := watch.rank(n)) is not None and r.lines == (11 if n == 0 else 10)
                for n in (0, 1)
            ),
            "the first lines of both workers",
        )
        assert any(e["event"] == "caught_up" for e in watch.events())

        # 1. appends, lines split across writes: every line once, training to the end
        writer.submit(lambda: dribble(worker_0, b"".join(healthy["worker_0.log"][11:])))
        until(
            watch,
            writer,
            lambda: (
                (r := watch.rank(0)) is not None
                and r.lines == len(healthy["worker_0.log"])
                and r.status.value == "finished"
            ),
            "rank 0 writing to its end",
        )
        rank_0 = watch.rank(0)
        assert rank_0 is not None and rank_0.progress is not None
        assert rank_0.progress.step == 16

        # 2. truncation: msrun restarted rank 1 in the same directory, and it fails this time
        worker_1 = log_dir / "worker_1.log"
        writer.submit(lambda: worker_1.write_bytes(b"".join(failing_1[:5])))
        until(
            watch,
            writer,
            lambda: (
                any(
                    e["event"] == "restarted" and e["file"] == "worker_1.log"
                    for e in watch.events()
                )
                and (r := watch.rank(1)) is not None
                and r.lines == 5
            ),
            "worker_1.log truncated and rewritten",
        )
        writer.submit(lambda: dribble(worker_1, b"".join(failing_1[5:])))
        until(
            watch,
            writer,
            lambda: (
                (r := watch.rank(1)) is not None
                and r.lines == len(failing_1)
                and r.status.value == "failed"
                and watch.report is not None
                and watch.report.root_cause is not None
                and watch.report.root_cause.ranks == (1,)
            ),
            "rank 1's OOM after the restart",
        )
        events = watch.events()
        assert any(
            e["event"] == "finding" and e["rule"] == "oom-memory-not-enough" and e["ranks"] == [1]
            for e in events
        )
        assert any(e["event"] == "root_cause" and e.get("ranks") == [1] for e in events)
        assert any(
            e["event"] == "rank_status" and e["rank"] == 1 and e["status"] == "failed"
            for e in events
        )

        # 3. rotation: worker_0.log renamed away, a new worker_0.log begins
        rotated = log_dir / "worker_0.log.1"
        new_run = healthy["worker_0.log"][:10]

        staging = tmp_path / "staging"
        staging.mkdir()

        def rotate() -> None:
            # rename + new file with no instant where worker_0.log is missing: a tick that
            # saw it missing would hit the delete-then-recreate bug pinned below
            fresh = staging / "worker_0.log"
            fresh.write_bytes(b"".join(new_run[:4]))
            os.link(worker_0, rotated)
            os.replace(fresh, worker_0)
            dribble(worker_0, b"".join(new_run[4:]))

        writer.submit(rotate)
        until(
            watch,
            writer,
            lambda: (
                any(
                    e["event"] == "restarted" and e["file"] == "worker_0.log"
                    for e in watch.events()
                )
                and rotated.resolve() not in watch.live.paths()
                and (r := watch.rank(0)) is not None
                and r.lines == len(new_run)
            ),  # a rotated-away copy is an older run: rank 0 is the new file alone
            "worker_0.log rotated",
        )
        writer.submit(lambda: dribble(worker_0, healthy["worker_0.log"][10]))
        until(
            watch,
            writer,
            lambda: (r := watch.rank(0)) is not None and r.lines == len(new_run) + 1,
            "the new worker_0.log followed, not the rotated one",
        )

        # 4. deletion: what was read stays, and the descriptor is released (disk space)
        writer.submit(worker_1.unlink)
        until(
            watch,
            writer,
            lambda: not open_descriptors_to(worker_1),
            "worker_1.log's descriptor released",
        )
        for _ in range(3):
            watch.tick()
        rank_1 = watch.rank(1)
        assert rank_1 is not None and rank_1.status.value == "failed"
        assert watch.report is not None and watch.report.root_cause is not None
        assert watch.report.root_cause.ranks == (1,)
    finally:
        watch.close()

    # msrunwatch wrote nothing into the watched directory
    after = snapshot(log_dir)
    assert set(after) == {"scheduler.log", "notes.md", "worker_0.log", "worker_0.log.1"}
    for untouched in ("scheduler.log", "notes.md"):
        assert after[untouched] == before[untouched]
    assert (log_dir / "notes.md").read_text().startswith("not a log")
    assert {p.name for p in tmp_path.iterdir()} == {"job", "events.jsonl", "staging"}


# -- engine behaviour, deterministic (fake clock, no threads) -----------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000_000.0

    def __call__(self) -> float:
        self.now += 2.5  # past the rescan and sweep periods on every call to tick
        return self.now


@pytest.fixture
def failing_copy(tmp_path: Path) -> Path:
    target = tmp_path / "msrun_log"
    shutil.copytree(FAILING, target)
    return target


def test_file_recreated_after_deletion_is_a_restart(failing_copy: Path, rules: list[Rule]) -> None:
    live = LiveRun([str(failing_copy)], rules, clock=Clock())
    live.tick()
    worker_1 = failing_copy / "worker_1.log"
    new_run = lines(HEALTHY / "worker_1.log")[:3]
    worker_1.unlink()
    live.tick()
    worker_1.write_bytes(b"".join(new_run))
    update = live.tick()
    live.close()
    rank_1 = next(r for r in update.report.ranks if r.rank == 1)
    assert update.restarted == ("worker_1.log",)
    assert rank_1.lines == 3


def test_a_finding_on_fewer_ranks_is_not_new(failing_copy: Path, rules: list[Rule]) -> None:
    live = LiveRun([str(failing_copy)], rules, clock=Clock())
    live.tick()
    worker_1 = failing_copy / "worker_1.log"
    worker_1.write_bytes(b"".join(lines(FAILING / "worker_1.log")[:3]))
    update = live.tick()
    live.close()
    assert update.restarted == ("worker_1.log",)
    assert "oom-memory-not-enough" not in {f.rule for f in update.new_findings}


def test_a_restarted_run_failing_again_is_announced(failing_copy: Path, rules: list[Rule]) -> None:
    live = LiveRun([str(failing_copy)], rules, clock=Clock())
    live.tick()
    saved = {p: p.read_bytes() for p in failing_copy.iterdir()}
    for path in saved:
        path.write_bytes(b"")
    cleared = live.tick()
    assert cleared.report.root_cause is None
    for path, data in saved.items():
        path.write_bytes(data)
    again = live.tick()
    live.close()
    assert "oom-memory-not-enough" in {f.rule for f in again.new_findings}


class StillClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 2_000_000_000.0

    def __call__(self) -> float:
        return self.now


def test_steps_wait_for_the_judging_budget_but_a_fault_is_judged_at_once(
    tmp_path: Path, rules: list[Rule]
) -> None:
    log_dir = tmp_path / "msrun_log"
    shutil.copytree(HEALTHY, log_dir)
    worker_0 = log_dir / "worker_0.log"
    worker_0.write_bytes(b"".join(lines(HEALTHY / "worker_0.log")[:31]))  # up to step 2
    clock = StillClock()
    live = LiveRun([str(log_dir)], rules, clock=clock)
    first = live.tick()
    step = lambda u: next(r for r in u.report.ranks if r.rank == 0).progress.step  # noqa: E731
    assert step(first) == 2

    with worker_0.open("ab") as fh:
        fh.write(lines(HEALTHY / "worker_0.log")[31])  # step 3, at the same instant
    same = live.tick()
    assert same.report is first.report and same.bytes_read > 0 and same.silence == {}

    clock.now += 1.0  # a verdict is never older than JUDGE_S
    assert step(live.tick()) == 3

    oom = lines(FAILING / "worker_1.log")[19]
    with worker_0.open("ab") as fh:
        fh.write(oom)  # a fault: no waiting for the budget
    urgent = live.tick()
    live.close()
    assert urgent.report.root_cause is not None and urgent.report.root_cause.ranks == (0,)
    assert "oom-memory-not-enough" in {f.rule for f in urgent.new_findings}


def test_a_rank_still_writing_after_another_failed_is_not_killed(
    tmp_path: Path, rules: list[Rule]
) -> None:
    log_dir = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / "cpu_dp2_exception_rank1" / "msrun_log", log_dir)
    scheduler = log_dir / "scheduler.log"
    shutdown = before_shutdown(scheduler)  # the scheduler has not given up yet
    clock = StillClock()
    worker_0 = log_dir / "worker_0.log"
    os.utime(worker_0, (clock.now - 60, clock.now - 60))
    live = LiveRun([str(log_dir)], rules, clock=clock)
    quiet = live.tick()
    rank_0 = next(r for r in quiet.report.ranks if r.rank == 0)
    # live, a quiet rank after another failed is waiting (on the root cause's rank) until msrun
    # says it kills the workers or the scheduler gives up; it was never "killed" on a guess
    assert rank_0.status.value == "waiting" and rank_0.waiting_on == (1,)
    assert "waiting on rank 1" in rank_0.status_reason

    clock.now += 2.0
    with worker_0.open("ab") as fh:
        fh.write(lines(HEALTHY / "worker_0.log")[29])  # it logs on: msrun has not stopped it
    os.utime(worker_0, (clock.now, clock.now))
    with scheduler.open("ab") as fh:
        fh.write(shutdown)  # the scheduler gives up on the job
    writing = live.tick()
    rank_0 = next(r for r in writing.report.ranks if r.rank == 0)
    assert rank_0.status.value == "training"  # still writing: not stopped yet
    assert writing.report.root_cause is not None and writing.report.root_cause.ranks == (1,)

    clock.now += 11.0  # quiet since: msrun stopped it
    stopped = live.tick()
    live.close()
    rank_0 = next(r for r in stopped.report.ranks if r.rank == 0)
    assert rank_0.status.value == "killed"


def test_a_file_that_was_empty_is_followed_once_it_is_a_log(
    tmp_path: Path, rules: list[Rule]
) -> None:
    log_dir = tmp_path / "msrun_log"
    shutil.copytree(HEALTHY, log_dir)
    extra = log_dir / "rank_2" / "glog.txt"  # no worker_N name: known by its content only
    extra.parent.mkdir()
    extra.write_bytes(b"")
    live = LiveRun([str(log_dir)], rules, clock=Clock())
    live.tick()
    assert extra.resolve() not in live.paths()
    extra.write_bytes(
        b"".join(lines(HEALTHY / "worker_1.log")[:12]).replace(b"rank id: 1", b"rank id: 2")
    )
    update = live.tick()
    live.close()
    assert extra.resolve() in live.paths()
    assert 2 in {r.rank for r in update.report.ranks}
