"""The feed: ticks the live engine off the UI thread and posts what each tick found.

The app runs `Feed.run` in a thread worker. One tick gives at most three messages
(restarted files, new findings, then the snapshot), and the feed waits for the app to
take each snapshot before the next tick (back-pressure), so a slow terminal slows the
reading instead of growing a queue. Tests give the app no feed, or a feed of their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from textual.message import Message

from msrunwatch.judge.model import Report
from msrunwatch.live.observer import Arrival
from msrunwatch.live.run import IDLE_TICK_S, Engine, LiveRun, Update
from msrunwatch.tui.messages import (
    FilesRestarted,
    FindingsRaised,
    LogsFound,
    SnapshotUpdated,
    TargetsAwaited,
)

Post = Callable[[Message], object]

BACKLOG_WAIT_S = 1.0
"""Longest wait for the app to take the previous snapshot before ticking again."""
AWAIT_S = 0.5
"""How often the waiting screen hears that a target is still missing."""


class Feed(Protocol):
    """Produces the app's messages, on a thread of the app's, until told to stop."""

    def run(self, post: Post) -> None:
        """Post messages until `stop`; called on a worker thread."""

    def stop(self) -> None:
        """Ask `run` to return soon; called on the UI thread."""

    def applied(self) -> None:
        """The app took the last snapshot."""


def messages(update: Update) -> list[Message]:
    """The messages one tick gives, in the order the app must see them."""
    out: list[Message] = []
    if update.restarted:
        out.append(FilesRestarted(update.restarted))
    if update.new_findings:
        out.append(FindingsRaised(update.new_findings, update.report.root_cause))
    out.append(SnapshotUpdated(update))
    return out


class LiveFeed:
    """Ticks a live engine (LiveRun, ClusterRun) every `tick_s` (at once while catching up)."""

    def __init__(
        self,
        live: Engine,
        tick_s: float = 0.25,
        arrival: Arrival | None = None,
        observe: Callable[[Update], object] | None = None,
    ) -> None:
        self.live = live
        self.tick_s = tick_s
        self.arrival = arrival
        """Targets to wait for before the first tick (None: they exist and are watched)."""
        self.observe = observe
        """Given every tick's update, on the feed's thread, news or not: the headless
        outputs (events, metrics, hook), which the headless loop feeds every tick too."""
        self._stop = threading.Event()
        self._applied = threading.Event()
        self._done = threading.Event()
        self._started = False
        self._last: tuple[Report | None, int, bool] = (None, -1, False)

    def run(self, post: Post) -> None:
        self._started = True
        try:
            if not self._await(post):
                return
            if isinstance(self.live, LiveRun):  # the cluster view reads no logs of its own
                post(LogsFound(self.live.discover()))
            while not self._stop.is_set():
                started = time.monotonic()
                update = self.live.tick()
                if self.observe is not None:
                    self.observe(update)
                if self._news(update):
                    self._applied.clear()
                    for message in messages(update):
                        post(message)
                    self._applied.wait(BACKLOG_WAIT_S)
                if not update.behind:
                    self._pause(self._period(update) - (time.monotonic() - started))
        finally:
            self._done.set()

    def _period(self, update: Update) -> float:
        """The tick period: a slow heartbeat once the run has ended and nothing was read."""
        return IDLE_TICK_S if update.ended and not update.bytes_read else self.tick_s

    def _pause(self, seconds: float) -> None:
        """Sleep until the next tick; a new file (the observer) or `stop` ends it early."""
        wake = self.live.dirty.wake
        if seconds > 0 and not self._stop.is_set():
            wake.wait(seconds)

    def _await(self, post: Post) -> bool:
        """Wait for missing targets, telling the app; False when stopped or out of time."""
        arrival = self.arrival
        if arrival is None:
            return True
        while missing := arrival.missing():
            expired = arrival.expired()
            waited = time.monotonic() - arrival.since
            post(TargetsAwaited(tuple(missing), waited, expired))
            if expired or self._stop.wait(AWAIT_S):
                return False
        return True

    def _news(self, update: Update) -> bool:
        """Whether a tick has anything the app does not have yet. The run's end is news on
        its own: a final verdict is not judged again, and its files settle later (SETTLED_S)."""
        last_report, last_behind, last_ended = self._last
        self._last = (update.report, update.behind, update.ended)
        return (
            update.report is not last_report
            or bool(update.silence or update.new_findings or update.restarted)
            or update.behind != last_behind
            or update.ended != last_ended
        )

    def stop(self) -> None:
        self._stop.set()
        self._applied.set()
        self.live.dirty.wake.set()

    def applied(self) -> None:
        self._applied.set()

    def join(self, timeout: float) -> bool:
        """Wait for `run` to return; False if it is still running (a tick that is slow)."""
        return not self._started or self._done.wait(timeout)
