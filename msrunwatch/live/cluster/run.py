"""The central view's engine: polls every node's snapshot and judges them together.

It has the live engine's face (`tick()` gives an `Update`), so the TUI's feed and the
headless loop drive it unchanged. Every `interval_s` it fetches all feeds at once (at most
WORKERS at a time, each bounded in time and bytes; a fetch still running at the poll's
deadline has its connection closed), keeps each node's newest snapshot, and judges again at
once when a snapshot brings news (a new fault, a new file, a restart, a node's state
changing), otherwise as often as judging costs allow (a tenth of the time, as the live
engine does), and at least every REJUDGE_S so silences grow. It keeps nothing the nodes do
not hold: a restarted central view has the whole picture after one poll.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from msrunwatch.judge.model import Report
from msrunwatch.live.changes import Changes
from msrunwatch.live.cluster.feeds import FeedState
from msrunwatch.live.cluster.fetch import FAILED, Aborts, Got, fetch_url, read_file
from msrunwatch.live.cluster.sources import Sources
from msrunwatch.live.cluster.view import Options, judge_view
from msrunwatch.live.run import DirtySet, Update

INTERVAL_S = 2.0
WORKERS = 32
MAX_BYTES = 64 << 20
"""Bytes of one node's snapshot (8 ranks take about 25 KB; a shared directory of 2,048
files about 6 MB)."""
JUDGE_SHARE = 0.1
REJUDGE_S = 10.0


class ClusterRun:
    """Everything the central view knows, advanced one tick at a time."""

    def __init__(
        self,
        sources: Sources,
        options: Options,
        interval_s: float = INTERVAL_S,
        timeout_s: float | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.sources, self.options = sources, options
        self.rules = list(options.rules)
        self.cluster = list(sources.specs)
        self.targets = [spec for spec in self.cluster if Path(spec).is_dir()]
        """What is watched (never written into): the directories of snapshots."""
        self.consoles: list[str] = []
        self.stall_after_s = options.stall_after_s
        self.interval_s = interval_s
        self.timeout_s = timeout_s if timeout_s is not None else max(min(interval_s, 2.0), 1.0)
        self.clock, self.monotonic, self.max_bytes = clock, monotonic, max_bytes
        self.dirty = DirtySet()
        self.states: dict[str, FeedState] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(WORKERS, "msrunwatch-fetch")
        self._aborts = Aborts()
        self._listing: list[str] = []
        self._last_poll = float("-inf")
        self._last_judge = float("-inf")
        self._judge_gap = 0.0
        self._urgent = True
        self._changed = False
        self._previous: Report | None = None
        self._changes = Changes()
        self.bytes_read = 0
        self.polls = 0

    # -- polling ------------------------------------------------------------------------

    def _fetch(self, state: FeedState) -> Got:
        feed, held = state.feed, state.held
        tag = held.tag if held is not None else None
        try:
            if feed.url is not None:
                return fetch_url(feed.url, tag, self.timeout_s, self.max_bytes, self._aborts)
            assert feed.path is not None
            return read_file(feed.path, tag, self.timeout_s, self.max_bytes)
        except Exception as exc:  # a bug must not stop the others: the node is named
            return Got(FAILED, error=f"{type(exc).__name__}: {exc}"[:160])

    def poll(self) -> None:
        """Fetch every feed once, at most timeout_s (plus a margin) in all."""
        feeds, self._listing = self.sources.feeds()
        wanted = {f.label: f for f in feeds}
        for label in list(self.states):
            if label not in wanted and self.states[label].feed.path is not None:
                del self.states[label]  # a snapshot file that went away: its node is gone
                self._urgent = True
        for label, feed in wanted.items():
            if label not in self.states:
                self.states[label] = FeedState(feed)
        started = self.monotonic()
        running = {}
        for state in self.states.values():
            if not state.busy:
                state.busy = True
                running[self._pool.submit(self._fetch, state)] = state
        done, late = concurrent.futures.wait(running, timeout=self.timeout_s + 1.0)
        if late:
            self._aborts.abort_all()
            more, late = concurrent.futures.wait(late, timeout=1.0)
            done |= more
        now = self.monotonic()
        for future in done:
            state = running[future]
            state.busy = False
            got = future.result()
            self.bytes_read += got.size
            before = state.state(now)[0]
            if state.took(got, now) or state.state(now)[0] != before:
                self._urgent = True
            if got.outcome != "same":
                self._changed = True
        for future in late:  # still blocked (a file system that hangs): passed over
            running[future].error = "still fetching (its read hangs)"
            future.add_done_callback(_released(running[future]))
        self._last_poll = started
        self.polls += 1

    def states_now(self) -> list[FeedState]:
        return list(self.states.values())

    # -- ticks --------------------------------------------------------------------------

    def tick(self) -> Update:
        """Poll when due, judge again when due; the verdict now."""
        now = self.monotonic()
        if now - self._last_poll >= self.interval_s:
            self.poll()
            now = self.monotonic()
        if not self._judge_due(now):
            assert self._previous is not None
            return Update(self._previous, time=self.clock())
        return self._judge(now)

    def _judge_due(self, now: float) -> bool:
        if self._previous is None or self._urgent:
            return True
        since = now - self._last_judge
        if since >= REJUDGE_S:
            return True
        return self._changed and since >= max(self._judge_gap, self.interval_s)

    def _judge(self, now: float) -> Update:
        began = time.perf_counter()
        self._urgent = self._changed = False
        self._last_judge = now
        result = judge_view(list(self.states.values()), self.options, now)
        report = result.report
        if self._listing:
            report = _warned(report, self._listing)
        update = Update(
            report,
            self._changes.new_findings(report),
            self._changes.status_changes(report),
            result.silence,
            0,
            0,
            (),
            self.clock(),
        )
        self._previous = self._changes.previous = report
        self._judge_gap = (time.perf_counter() - began) / JUDGE_SHARE
        return update

    def paths(self) -> list[Path]:
        """The snapshots followed (one per node)."""
        return [Path(s.feed.label) for s in self.states.values()]

    def close(self) -> None:
        self._aborts.abort_all()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _warned(report: Report, more: list[str]) -> Report:
    return replace(report, warnings=(*more, *report.warnings))


def _released(state: FeedState) -> Callable[[concurrent.futures.Future[Got]], None]:
    def done(_: concurrent.futures.Future[Got]) -> None:
        state.busy = False

    return done
