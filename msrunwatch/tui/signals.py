"""SIGTERM and SIGHUP end the live view the way `q` does, so the terminal is given back.

Killed by their default action (a `kill`, `timeout`, a job scheduler's stop, an ssh
session that closed), the view left the terminal in the alternate screen with mouse
reporting on and the cursor hidden: exit -15, and a shell that printed mouse escapes at
every click. Now the first of them asks the app to exit through Textual's own shutdown,
which leaves the alternate screen, turns mouse reporting off and shows the cursor; then the
command line says so on stderr and exits 128 + the signal, as every other command does on
SIGTERM (`msrunwatch: terminated`, 143), and as a shell reports a SIGHUP (129).

That shutdown is given GRACE_S. When the terminal itself is gone (a real hang-up),
Textual's writer thread can die on the write that fails, and its shutdown then waits
forever to hand that thread its last write (1 time in 8 under load, Textual 8.2): the view
never ended. After the grace the process says so and exits with the same code, unfinished
writes dropped: there is no terminal left to give back.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Protocol

from msrunwatch.core.stopping import handled

SAID = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
"""The signals that stop the view, and the word stderr gets for each."""

GRACE_S = 10.0
"""How long the view may take to end after a signal before the process ends without it
(the terminal is restored in milliseconds when there is one)."""


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

    def __init__(
        self,
        app: Stoppable,
        grace_s: float = GRACE_S,
        give_up: Callable[[int], object] = os._exit,
    ) -> None:
        self.app = app
        self.signum: int | None = None
        self.grace_s = grace_s
        self.give_up = give_up
        """Ends the process with the code when the view did not end in time (os._exit: the
        main thread is stuck, so nothing can be raised in it)."""
        self.deadline: threading.Timer | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers, in the main thread only; the previous ones are put back. Leaving
        the block (the view ended) calls off the deadline a signal set."""
        try:
            with handled(SAID, self._arrived):
                yield
        finally:
            if self.deadline is not None:
                self.deadline.cancel()

    def _arrived(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            return
        self.signum = self.app.stop_signal = signum
        self.deadline = threading.Timer(self.grace_s, self._ended_without_the_view)
        self.deadline.daemon = True
        self.deadline.start()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the app has not started its loop yet, or has ended it
            return
        loop.call_soon_threadsafe(self.app.stop_by_signal, signum)

    def _ended_without_the_view(self) -> None:
        self.give_up(self.said())

    def said(self) -> int:
        """Once the app ended after a signal: the one line on stderr, and the exit code. The
        terminal may be gone (SIGHUP): what cannot be written is let go."""
        assert self.signum is not None
        with contextlib.suppress(OSError):
            print(f"msrunwatch: {SAID[signal.Signals(self.signum)]}", file=sys.stderr, flush=True)
        return 128 + self.signum
