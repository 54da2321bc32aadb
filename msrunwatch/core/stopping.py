"""Stopping on SIGTERM and SIGINT without leaving processes behind.

Large inputs are read by worker processes. Killed by the default SIGTERM, the parent left
them running for good, holding its stdout open (a `| tee` never ended). So while a command
runs, SIGTERM raises `Terminated` in the main thread, as SIGINT raises KeyboardInterrupt:
the reader kills and reaps its workers on the way out, and the command line exits 143 (or
130) with one line. Workers also die with their parent whatever kills it (Linux's
parent-death signal, even for a SIGKILL the parent cannot catch) and ignore SIGINT, which
a terminal's Ctrl+C sends to the whole process group: the parent alone decides. Both
signals are held (blocked) while workers are forked and while they are killed: a worker
gets them only once its own handlers are set, and the parent only at a point where it can
clean up (a signal raised inside the pool's start-up left it hung, or printed a child's
traceback).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType

Handler = Callable[[int, "FrameType | None"], object]

PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal a process gets when the thread that forked it ends."""


class Terminated(BaseException):
    """SIGTERM, raised where the main thread is: like KeyboardInterrupt, not an Exception,
    so no `except Exception` swallows it on its way out."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated while the block runs (main thread only); the previous
    handler is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def handled(signums: Iterable[int], handler: Handler) -> Iterator[None]:
    """The handler for these signals while the block runs (main thread only: elsewhere
    nothing is installed); the previous handlers are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in signums}
    try:
        yield
    finally:
        for s, before in previous.items():
            signal.signal(s, before)


STOPS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait (blocked) until the block ends, then arrive as they came; a
    process forked inside starts with them blocked too."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def become_worker(parent: int) -> None:
    """In a freshly forked worker (forked with the signals held): SIGTERM kills it at once
    (not the parent's handler), SIGINT is the parent's to act on, and it dies with its
    parent (Linux); then the signals it got meanwhile arrive."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's kill on the way out is all
        return
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)
