"""SIGTERM and SIGHUP to the live view give the terminal back (issue 21, found in its
rerun). Before, the view died by the signal's default action (exit -15) and left the
terminal in the alternate screen, with mouse reporting on and the cursor hidden: every
click then printed escapes into the shell. Now it ends as `q` does, says `msrunwatch:
terminated` (or `hung up`) and exits 128 + the signal, as every other command does on
SIGTERM (143) and as a shell reports a SIGHUP (129).

In process: the handler and the app. In a pseudo-terminal: the real `msrunwatch DIR`, and
the bytes it wrote to the terminal, which must end by undoing what the view turned on."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from msrunwatch.tui.signals import StopSignals
from tests.support import FIXTURES, HANG_S
from tests.tui.tui_scenarios import app

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
ROOT = Path(__file__).resolve().parents[2]
ALT_ON, ALT_OFF = b"\x1b[?1049h", b"\x1b[?1049l"
MOUSE_ON, MOUSE_OFF = b"\x1b[?1000h", b"\x1b[?1000l"
CURSOR_HIDDEN, CURSOR_SHOWN = b"\x1b[?25l", b"\x1b[?25h"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and terminals")


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "hung up")],
    ids=["SIGTERM", "SIGHUP"],
)
async def test_the_signal_ends_the_app_as_quitting_does(
    signum: int, code: int, word: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = app()
    stops = StopSignals(target)
    with stops.installed():
        async with target.run_test() as pilot:
            await pilot.pause()
            os.kill(os.getpid(), signum)  # handled: it reaches the app, not the process
            await pilot.pause()
            assert target._exit and target.return_value == code
    assert signal.getsignal(signum) is not stops._arrived  # put back
    assert (stops.signum, stops.said()) == (signum, code)
    assert capsys.readouterr().err == f"msrunwatch: {word}\n"


def test_a_signal_before_the_view_started_stops_it_when_it_starts() -> None:
    target = app()
    stops = StopSignals(target)
    with stops.installed():
        os.kill(os.getpid(), signal.SIGTERM)  # no event loop runs yet: nothing to schedule on
        assert target.stop_signal == signal.SIGTERM
        assert target.run(headless=True) == 143  # it stops once mounted, on its own


async def test_a_second_signal_changes_nothing() -> None:
    target = app()
    stops = StopSignals(target)
    with stops.installed():
        async with target.run_test() as pilot:
            target.exit(1)  # quitting began (`q`)
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGHUP)
            await pilot.pause()
    assert stops.signum == signal.SIGTERM and target.return_value == 1


def _controlling_terminal() -> None:
    """In the child, after setsid: the pseudo-terminal becomes its controlling terminal, as
    a login's is, so that closing it sends SIGHUP as a real hang-up does."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Viewer:
    """`msrunwatch DIR` in a pseudo-terminal, every byte it wrote kept."""

    def __init__(self, directory: Path) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "30"}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "msrunwatch", str(directory)],
            stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, start_new_session=True,
            preexec_fn=_controlling_terminal,
        )  # fmt: skip
        os.close(slave)
        self.written = b""

    def read(self, timeout: float = 0.05) -> bool:
        """What came within `timeout`; False once the terminal is closed on the other side."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 1 << 16)
        except OSError:  # EIO: every process holding the terminal is gone
            return False
        self.written += data
        return bool(data)

    def wait_for(self, *shown: bytes) -> None:
        deadline = time.monotonic() + HANG_S
        while not all(s in self.written for s in shown):
            assert self.process.poll() is None, f"exited early: {self.written[-500:]!r}"
            assert time.monotonic() < deadline, f"never drew {shown}: {self.written[-500:]!r}"
            self.read()

    def wait_exit(self) -> int:
        deadline = time.monotonic() + HANG_S
        while self.read() and time.monotonic() < deadline:
            pass
        return self.process.wait(timeout=HANG_S)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


@pytest.fixture
def viewer() -> Iterator[Callable[[Path], Viewer]]:
    started: list[Viewer] = []

    def start(directory: Path) -> Viewer:
        started.append(Viewer(directory))
        return started[-1]

    yield start
    for v in started:
        v.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGTERM, 143, b"terminated"), (signal.SIGHUP, 129, b"hung up")],
    ids=["SIGTERM", "SIGHUP"],
)
def test_the_terminal_is_given_back(
    signum: int, code: int, word: bytes, viewer: Callable[[Path], Viewer]
) -> None:
    view = viewer(OOM)
    view.wait_for(ALT_ON, MOUSE_ON, CURSOR_HIDDEN, b"oom")  # the view is up, the run judged
    os.kill(view.process.pid, signum)
    assert view.wait_exit() == code
    last = view.written.rindex(ALT_ON)
    after = view.written[last:]
    for restore in (ALT_OFF, MOUSE_OFF, CURSOR_SHOWN):
        assert restore in after, f"{restore!r} never written after the view started"
    end = after.rindex(ALT_OFF)  # nothing turns the view's modes back on after it left
    assert not any(mode in after[end:] for mode in (ALT_ON, MOUSE_ON, CURSOR_HIDDEN))
    assert after[end:].endswith(b"msrunwatch: " + word + b"\r\n")


@pytest.mark.slow
def test_a_terminal_that_hangs_up_leaves_no_process(viewer: Callable[[Path], Viewer]) -> None:
    """The terminal itself goes (an ssh session closed): the kernel sends SIGHUP, and the
    view ends with 129 although nothing it writes can reach anyone."""
    view = viewer(OOM)
    view.wait_for(ALT_ON, b"oom")
    os.close(view.master)
    view.master = os.open(os.devnull, os.O_RDONLY)  # for close()
    assert view.process.wait(timeout=HANG_S) == 129


class Stuck:
    """An app whose shutdown never ends (Textual's, once the terminal is gone)."""

    stop_signal: int | None = None

    def stop_by_signal(self, signum: int) -> None:
        pass


def test_a_view_that_cannot_end_is_ended_after_the_grace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ended = threading.Event()
    codes: list[int] = []

    def give_up(code: int) -> None:
        codes.append(code)
        ended.set()

    stops = StopSignals(Stuck(), grace_s=0.01, give_up=give_up)
    with stops.installed():
        os.kill(os.getpid(), signal.SIGHUP)
        assert ended.wait(60)  # the main thread could be stuck here: the deadline does not care
    assert codes == [129]
    assert capsys.readouterr().err == "msrunwatch: hung up\n"


def test_a_view_that_ended_calls_the_deadline_off() -> None:
    codes: list[int] = []
    stops = StopSignals(Stuck(), grace_s=3600, give_up=codes.append)
    with stops.installed():
        os.kill(os.getpid(), signal.SIGTERM)
        assert stops.deadline is not None and stops.deadline.is_alive()
    stops.deadline.join(60)  # cancelled: it ends without calling give_up
    assert not stops.deadline.is_alive() and codes == []
