#!/usr/bin/env python3
"""What the live view costs once the run has ended: CPU of `msrunwatch DIR` left open on a
finished run of many ranks, beside `tail -F` on the same files (what users leave open today).

The run is generated (bench/gen_msrun_log.py: real lines, an OOM on one rank, EI0006 on the
others); the view runs in a pseudo-terminal of 80x24 until it draws `■ run ended`, then the
CPU time (user + system, every thread, from /proc) of each process is read over a window.
CPU time, not wall time: the figure holds on a busy machine.

    python bench/bench_idle.py [--ranks 512] [--seconds 30] [--windows 4] [--headless]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU of a process so far (all its threads), or of one of its threads
    (the main thread's id is the process's: the view's UI, beside the engine's thread)."""
    stat = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_view(run: Path, headless: bool) -> tuple[subprocess.Popen[bytes], int]:
    """msrunwatch on a pty of 80x24 (Textual draws on stderr: it is the pty too)."""
    command = [sys.executable, "-m", "msrunwatch", "watch", str(run)]
    if headless:
        command.append("--headless")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    proc = subprocess.Popen(
        command, stdin=follower, stdout=follower, stderr=follower, env=env, cwd=ROOT
    )
    os.close(follower)
    return proc, leader


def wait_for(fd: int, words: list[bytes], timeout: float) -> bool:
    """Read the process's output until one of `words` shows (False at the timeout)."""
    seen, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen = (seen + os.read(fd, 65536))[-200_000:]
            except OSError:
                return False
            if any(w in seen for w in words):
                return True
    return False


def drain(fd: int, seconds: float) -> None:
    """Keep reading the pty (a full pty would block the view) for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def measure(args: argparse.Namespace, run: Path) -> None:
    view, fd = start_view(run, args.headless)
    tail = subprocess.Popen(
        ["tail", "-q", "-F", *sorted(str(p) for p in run.iterdir())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ended = wait_for(fd, [b"run ended", b'"caught_up"'], args.timeout)
        if not ended:
            print("the view never said the run ended", file=sys.stderr)
            return
        drain(fd, 3.0)  # the last frames of the catch-up
        what = "msrunwatch watch --headless" if args.headless else "msrunwatch DIR (the view)"
        print(f"{args.ranks} ranks, run ended, CPU over {args.seconds:g} s (user+system):")
        for window in range(args.windows):
            if args.windows > 1:
                print(f" window {window + 1} (from {window * args.seconds:g} s after the end):")
            _window(fd, args.seconds, what, view, tail)
    finally:
        for proc in (view, tail):
            proc.terminate()
            proc.wait(10)
        os.close(fd)


def _window(
    fd: int, seconds: float, what: str, view: subprocess.Popen[bytes], tail: subprocess.Popen[bytes]
) -> None:
    """One window's CPU of each process, and of the view's main (UI) thread alone."""
    procs = {what: (view.pid, None), "  its main thread": (view.pid, view.pid)}
    procs["tail -q -F (same files)"] = (tail.pid, None)
    before = {name: cpu_seconds(*ids) for name, ids in procs.items()}
    drain(fd, seconds)
    for name, ids in procs.items():
        used = cpu_seconds(*ids) - before[name]
        print(f"  {name:32} {used:6.2f} s = {100 * used / seconds:5.1f}% of a core")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--seconds", type=float, default=30.0, help="the measured window")
    parser.add_argument("--windows", type=int, default=1, help="windows measured in a row")
    parser.add_argument("--timeout", type=float, default=600.0, help="for the catch-up")
    parser.add_argument("--headless", action="store_true", help="the headless watcher instead")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="msrunwatch-idle-"))
    try:
        run = tmp / "msrun_log"
        gen = [sys.executable, str(ROOT / "bench" / "gen_msrun_log.py"), str(run)]
        gen += ["--ranks", str(args.ranks), "--mb", "0.2", "--glog-v", "2"]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        measure(args, run)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
