"""SIGTERM and SIGHUP end the live view the way `q` does, so the terminal is given back.

Killed by their default action (a `kill`, `timeout`, a job scheduler's stop, an ssh
session that closed), the view left the terminal in the alternate screen with mouse
reporting on and the cursor hidden: exit -15, and a shell that printed mouse escapes at
every click. Now the first of them asks the app to exit through Textual's own shutdown,
which leaves the alternate screen, turns mouse reporting off and shows the cursor; then the
command line says so on stderr and exits 128 + the signal, as every other command does on
SIGTERM (`msrunwatch: terminated`, 143), and as a shell reports a SIGHUP (129).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from types import FrameType
from typing import Protocol

from msrunwatch.core.stopping import handled

SAID = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
"""The signals that stop the view, and the word stderr gets for each."""


class Stoppable(Protocol):
    """The app as the handler sees it."""

    stop_signal: int | None
    """Set by the handler: the app stops when it is mounted, if it was not running yet."""

    def stop_by_signal(self, signum: int) -> None: ...


class StopSignals:
    """Remembers the first SIGTERM or SIGHUP in `signum` and asks the app to stop.

    The handler runs in the main thread, where Textual's event loop runs: it schedules the
    stop on the loop (waking it), and leaves the signal in the app's `stop_signal` for it
    to find when it is mounted (before the loop started, there is nothing to schedule on).
    Later signals change nothing: the view is already ending.
    """

    def __init__(self, app: Stoppable) -> None:
        self.app = app
        self.signum: int | None = None

    def installed(self) -> contextlib.AbstractContextManager[None]:
        """The handlers, in the main thread only; the previous ones are put back."""
        return handled(SAID, self._arrived)

    def _arrived(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            return
        self.signum = self.app.stop_signal = signum
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the app has not started its loop yet, or has ended it
            return
        loop.call_soon_threadsafe(self.app.stop_by_signal, signum)

    def said(self) -> int:
        """Once the app ended after a signal: the one line on stderr, and the exit code. The
        terminal may be gone (SIGHUP): what cannot be written is let go."""
        assert self.signum is not None
        with contextlib.suppress(OSError):
            print(f"msrunwatch: {SAID[signal.Signals(self.signum)]}", file=sys.stderr, flush=True)
        return 128 + self.signum
