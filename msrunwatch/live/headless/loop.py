"""The headless tick loop: read the run, emit what changed, update the metrics, stop cleanly.

What each tick's update becomes (events, metrics, the hook) is `outputs.Outputs`, which the
live view drives too; this module only ticks the engine, waits between ticks and stops.
"""

from __future__ import annotations

import contextlib
import signal
import time
from typing import TextIO

from msrunwatch.core.exit_codes import ExitCode
from msrunwatch.live.headless.events import PipeClosed
from msrunwatch.live.headless.hooks import HOOK_TIMEOUT_S
from msrunwatch.live.headless.metrics import RunCollector
from msrunwatch.live.headless.options import HeadlessOptions
from msrunwatch.live.headless.outputs import CAUSES, Outputs
from msrunwatch.live.headless.signals import StopSignals
from msrunwatch.live.run import IDLE_TICK_S, Engine, Update

__all__ = ["CAUSES", "MIN_GAP_S", "TICK_S", "Headless"]

TICK_S = 0.1
"""Period of the ticks: each one stats every followed file, so this bounds the latency."""
MIN_GAP_S = 0.02
"""Shortest pause between two ticks, even after a slow one, so the loop never spins."""


class Headless(Outputs):
    """The headless loop over a LiveRun: `run()` for the command, `step()` for tests."""

    def __init__(
        self,
        live: Engine,
        options: HeadlessOptions,
        out: TextIO | None = None,
        err: TextIO | None = None,
        tick_s: float = TICK_S,
        hook_timeout_s: float = HOOK_TIMEOUT_S,
        collector: RunCollector | None = None,
    ) -> None:
        super().__init__(live, options, out, err, hook_timeout_s, collector)
        self.tick_s = tick_s
        self.exit_when_done = options.exit_when_done
        self._stop = StopSignals(lambda: self.live.dirty.wake.set())
        self._tick_began = 0.0
        self._idle = False
        """The run has ended and the last tick read nothing: tick at the slow heartbeat."""

    # -- one tick

    def step(self) -> int | None:
        """One tick: read, write what changed, update the metrics.

        Returns the exit code when --exit-when-done is given and every rank has ended.
        """
        if not self._started:
            self.start()
        self._tick_began = time.monotonic()
        update = self.live.tick()
        self._idle = update.ended and not update.bytes_read
        self.publish(update)
        if self.exit_when_done and self.done(update):
            return int(ExitCode.FINDINGS if update.report.has_errors else ExitCode.OK)
        return None

    def done(self, update: Update) -> bool:
        """The run has ended (live.run.run_ended), as the view decides it too."""
        return update.ended

    # -- the command

    def run(self) -> int:
        """Tick until done (--exit-when-done), Ctrl+C or SIGTERM; returns the exit code."""
        try:
            self.start()
            with self._stop.installed():
                code, reason = self._ticks()
                self.finish(code, reason)
            if reason != "done":  # as every other command stopped by a signal says it
                self._stderr(f"msrunwatch: {reason}")
        except PipeClosed:  # the events' reader went away: no `done` event can reach it
            self.close(wait_for_hooks=False)
            return int(ExitCode.OUTPUT_CLOSED)
        except Exception as exc:  # a bug: still say so in a done event before it is reported
            with contextlib.suppress(Exception):
                self.finish(int(ExitCode.USAGE), "error", f"{type(exc).__name__}: {exc}"[:300])
            self.close(wait_for_hooks=False)
            raise
        except BaseException:
            self.close(wait_for_hooks=False)
            raise
        self.close(wait_for_hooks=reason == "done")
        return code

    def _ticks(self) -> tuple[int, str]:
        """Step until an exit code: done, a stop signal, or a second Ctrl+C."""
        code: int | None = None
        try:
            while code is None:
                code = self.step()
                if code is None and self._stop.signum is None:
                    self._wait()
                if code is None and self._stop.signum is not None:
                    signum = self._stop.signum
                    reason = "interrupted" if signum == signal.SIGINT else "terminated"
                    return 128 + signum, reason
        except KeyboardInterrupt:
            return int(ExitCode.INTERRUPTED), "interrupted"
        return code, "done"

    def _wait(self) -> None:
        """Until the next tick: none while catching up, else the rest of the period (a new
        file or a stop signal wakes it early), and never less than MIN_GAP_S."""
        if self._behind():
            return
        period = IDLE_TICK_S if self._idle else self.tick_s
        rest = period - (time.monotonic() - self._tick_began)
        time.sleep(min(MIN_GAP_S, self.tick_s))
        if self._stop.signum is None and rest > MIN_GAP_S:
            self.live.dirty.wake.wait(rest - MIN_GAP_S)

    def _behind(self) -> bool:
        snap = self.collector.snapshot
        return snap.report is not None and not snap.caught_up
