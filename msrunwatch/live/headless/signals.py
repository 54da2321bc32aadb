"""Turn SIGINT and SIGTERM into a request to stop the headless loop after its tick."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

REPEAT_S = 1.0
"""A second SIGINT sooner than this after the first is the same Ctrl+C, delivered twice."""


class StopSignals:
    """The first SIGINT or SIGTERM is remembered in `signum` and wakes the loop.

    A second Ctrl+C stops at once, unless it came with the first (`timeout` and
    shells forward the signal the process group already got).
    """

    def __init__(self, wake: Callable[[], None]) -> None:
        self.wake = wake
        """Called on the first signal, so the loop does not sleep out its tick."""
        self.signum: int | None = None
        self._first: list[float] = []

    @contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers, in the main thread only; the previous ones are put back."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            self._first.append(time.monotonic())
            self.wake()
        elif signum == signal.SIGINT and time.monotonic() - self._first[0] > REPEAT_S:
            raise KeyboardInterrupt  # a second Ctrl+C: a tick is stuck, stop at once
