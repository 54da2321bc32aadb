"""End to end: the real `msrunwatch DIR` in a pseudo-terminal, as a user would run it.

GIVEN a copy of a healthy two-rank run, WHEN an OOM line is appended to rank 1's log,
THEN rank 1 turns failed on screen; WHEN q is pressed, THEN the process exits with
triage's code for a failed run and leaves the terminal as it found it.

GIVEN an empty log directory that a writer fills with an 8-rank run (scheduler first, each
file in pieces cut mid-line), THEN the screen ends up with every rank's status, the root
cause and every finding that `triage` gives for the finished run.
"""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from msrunwatch.judge.statuses import WRITING_S
from msrunwatch.report.fmt import count
from msrunwatch.tui.widgets.findings_panel import describe
from tests.support import HANG_S, writer_stall
from tests.tui.tui_scenarios import FIXTURES, fixture_report, oom_line_for, running_copy
from tests.tui.vt_screen import Screen

WIDTH, HEIGHT = 160, 40
TIMEOUT_S = 120.0

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


class Terminal:
    """A pseudo-terminal with a process in it, and the screen it drew."""

    def __init__(self, argv: list[str], cwd: Path, height: int = HEIGHT) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", height, WIDTH, 0, 0))
        self.before = termios.tcgetattr(slave)
        self.slave = slave
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(WIDTH), "LINES": str(height)}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True
        )
        self.screen = Screen(WIDTH, height)
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode

    def pump(self, seconds: float = 0.05) -> None:
        """Read whatever the process wrote within `seconds`."""
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:  # the process is gone and the pty closed
                return
            self.screen.feed(self._decode(data))

    def wait_for(self, condition: Callable[[Screen], bool], what: str) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while not condition(self.screen):
            assert self.process.poll() is None, f"exited early:\n{self.screen.text()}"
            assert time.monotonic() < deadline, f"no {what} on screen:\n{self.screen.text()}"
            self.pump()

    def press(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait_exit(self) -> int:
        deadline = time.monotonic() + TIMEOUT_S
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"did not exit:\n{self.screen.text()}"
            self.pump()
        for _ in range(20):
            self.pump(0.01)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
        os.close(self.slave)


def rank_row(screen: Screen, rank: int, status: str) -> bool:
    """A table row of this rank reads this status."""
    return any(
        line.split()[:1] == [str(rank)] and status in line.split()[1:4] for line in screen.lines()
    )


@pytest.mark.slow
def test_a_rank_turns_failed_on_screen_and_q_restores_the_terminal(tmp_path: Path) -> None:
    run = running_copy(tmp_path)  # rank 1 still training: its log stops before its end
    root = Path(__file__).resolve().parents[2]
    # rank 1 is silent from the copy on: no machine is so slow that it reads as stalled
    argv = [sys.executable, "-m", "msrunwatch", str(run), "--stall-after", str(HANG_S * 10)]
    terminal = Terminal(argv, cwd=root)
    try:
        terminal.wait_for(lambda s: rank_row(s, 0, "finished"), "rank 0 finished")
        terminal.wait_for(lambda s: "2 ranks" in s.text(), "both ranks")
        assert "no faults" in terminal.screen.text()

        log = run / "msrun_log" / "worker_1.log"
        with log.open("a") as fh:
            fh.write(oom_line_for(log))

        terminal.wait_for(lambda s: rank_row(s, 1, "failed"), "rank 1 failed")
        terminal.wait_for(lambda s: "rank 1 failed first: oom" in s.text(), "the root cause")
        assert rank_row(terminal.screen, 0, "finished")

        terminal.press(b"q")
        assert terminal.wait_exit() == 1, "the exit code of a failed run"
        assert terminal.screen.exited_alternate, "left the alternate screen"
        assert termios.tcgetattr(terminal.slave) == terminal.before, "terminal modes restored"
    finally:
        terminal.close()


def write_in_pieces(source: Path, target: Path, paused: list[float] | None = None) -> None:
    """Write a run's logs as msrun does: the scheduler first, each file in appended pieces.
    `paused` gets the longest time a file begun stood still before its next piece."""
    names = sorted(p.name for p in source.iterdir())
    names.sort(key=lambda n: n != "scheduler.log")
    for name in names:
        data = (source / name).read_bytes()
        cuts = [0, len(data) // 3 + 7, 2 * len(data) // 3 + 1, len(data)]  # mid-line cuts
        with (target / name).open("ab") as fh:
            last = None
            for start, end in zip(cuts, cuts[1:]):
                fh.write(data[start:end])
                fh.flush()
                now = time.monotonic()
                if paused is not None and last is not None:
                    paused.append(now - last)
                last = now
                time.sleep(0.03)
                writer_stall()


@pytest.mark.slow
def test_a_run_written_while_watched_ends_up_as_triage_sees_it(tmp_path: Path) -> None:
    name = "synth_hccl_ei0006_after_oom_8p"
    expected = fixture_report(name)
    log_dir = tmp_path / "run" / "msrun_log"
    log_dir.mkdir(parents=True)
    root = Path(__file__).resolve().parents[2]
    terminal = Terminal([sys.executable, "-m", "msrunwatch", str(log_dir)], cwd=root, height=70)
    paused: list[float] = []
    writer = threading.Thread(
        target=write_in_pieces, args=(FIXTURES / name / "msrun_log", log_dir, paused)
    )
    try:
        terminal.wait_for(lambda s: "msrunwatch" in s.text() or "rank" in s.text(), "the view")
        writer.start()
        while writer.is_alive():  # keep reading the screen while the run is written
            terminal.pump()
        for rank in expected.ranks:
            number, status = rank.rank, rank.status.value
            terminal.wait_for(
                lambda s, n=number, st=status: rank_row(s, n, st), f"rank {number} {status}"
            )
        terminal.wait_for(lambda s: "rank 3 failed first: oom" in s.text(), "the root cause")
        errors = sum(1 for f in expected.findings if f.severity.value == "error")
        title = f"Findings ({len(expected.findings)}, {count(errors, 'error')})"
        # None undone (no false alarm), unless the writer really stood still mid-file for as
        # long as the view takes a rank for silent (a loaded machine descheduled it): then a
        # `silent-rank` the next piece undoes is what the view should have said meanwhile.
        stood_still = max(paused, default=0.0) >= WRITING_S
        undone = f"{title[:-1]}, "  # `Findings (8, 4 errors, 1 undone)`
        terminal.wait_for(
            lambda s: title in s.text() or (stood_still and undone in s.text()), title
        )
        for finding in expected.findings[:4]:  # the errors; the warnings are below the fold
            terminal.wait_for(lambda s, f=finding: describe(f) in s.text(), describe(finding))
        terminal.press(b"q")
        assert terminal.wait_exit() == 1
    finally:
        writer.join(timeout=10)
        terminal.close()


@pytest.mark.slow
def test_the_hook_runs_once_under_the_view_and_never_writes_on_the_screen(tmp_path: Path) -> None:
    """The trial's F1: `--on-finding`, `--events` and `--metrics-port` given to the view did
    nothing. Now the hook runs (once, for the OOM), its output stays off the screen, and the
    events file ends with the view's `done`."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed", run)
    ran, events = tmp_path / "hook.log", tmp_path / "events.jsonl"
    hook = f'echo HOOK-OUT; echo HOOK-ERR >&2; echo "$MSRUNWATCH_RULE" >> "{ran}"'
    argv = [sys.executable, "-m", "msrunwatch", str(run), "--on-finding", hook]
    argv += ["--events", str(events), "--metrics-port", "0"]
    terminal = Terminal(argv, cwd=Path(__file__).resolve().parents[2])
    try:
        terminal.wait_for(lambda s: "rank 1 failed first: oom" in s.text(), "the root cause")
        terminal.wait_for(lambda s: ran.exists(), "the hook's run")
        for _ in range(20):  # a second run, or the hook's output, would show by now
            terminal.pump(0.05)
        assert "HOOK-" not in terminal.screen.text()
        terminal.press(b"q")
        assert terminal.wait_exit() == 1
    finally:
        terminal.close()
    assert ran.read_text() == "oom-memory-not-enough\n"
    assert "HOOK-" not in terminal.screen.text()
    last = json.loads(events.read_text().splitlines()[-1])
    assert (last["event"], last["reason"], last["exit_code"]) == ("done", "quit", 1)
