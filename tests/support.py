"""What several test modules share: the repository's paths and small helpers (fixtures
themselves live in conftest.py, which nothing imports)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import coverage

from msrunwatch.judge.model import Report, Status
from msrunwatch.live.run import LiveRun
from msrunwatch.read.facts import FileFacts
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.vocab import Severity

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

ScanText = Callable[..., FileFacts]
"""The `scan_text` fixture: bytes or text scanned as one file (optionally in chunks)."""


EVERY_CASE = "MSRUNWATCH_EVERY_CASE"
"""Set to 1, the tests that compare two ways of reading every rule's cases (fast path
against slow path, cached rule pack against a fresh one) take every case instead of one
per rule: the exhaustive form, for a change to the reader or the rule cache (it costs
about ten minutes of CPU more than the README's test command)."""

HANG_S = 120.0
"""The longest a test waits for what must happen (a thread to post, a process to draw or
exit): only a net against a hang, far above what a loaded machine takes, so that no
outcome depends on machine speed. Never a speed limit: a test of speed counts CPU time."""

WRITER_STALL = "MSRUNWATCH_TEST_WRITER_STALL_S"
"""Seconds (default 0) that the tests' writer threads stop for at their pauses
(`writer_stall`): a writer descheduled that long on a loaded machine. Set past the live
engine's SETTLED_S (5 s), it shows, at once and every time, what a busy machine shows
now and then; a test that waits for the state it asserts passes all the same, only slower."""


def writer_stall() -> None:
    """Where a writer thread may be held up by a busy machine: sleep WRITER_STALL seconds."""
    stall = float(os.environ.get(WRITER_STALL, "0"))
    if stall > 0:
        time.sleep(stall)


T = TypeVar("T")


def one_per_rule(
    cases: Sequence[T], rule: Callable[[T], str], fires: Callable[[T], bool]
) -> list[T]:
    """Each rule's first case that fires (its first case when none does), in order; every
    case when MSRUNWATCH_EVERY_CASE=1. A rule that fires through a shortcut shows the
    shortcut kept it; the other cases of a rule are the same lines around other values, and
    every case is still run once, on its own, by tests/rules."""
    if os.environ.get(EVERY_CASE) == "1":
        return list(cases)
    chosen: dict[str, T] = {}
    for case in cases:
        first = chosen.setdefault(rule(case), case)
        if not fires(first) and fires(case):
            chosen[rule(case)] = case
    picked = {id(c) for c in chosen.values()}
    return [c for c in cases if id(c) in picked]


@contextmanager
def untraced() -> Iterator[None]:
    """Coverage (the README's `pytest --cov`) paused inside: for a test's second reading of
    what other tests already run traced, every line of it (tracing costs 3 to 4 times the
    CPU of the reading itself). What the test asserts is unchanged; only whether these lines
    count as covered, which the traced readings decide."""
    running = coverage.Coverage.current()
    if running is None:
        yield
        return
    running.stop()
    try:
        yield
    finally:
        running.start()


def python(
    *args: str | Path, timeout: float = 120.0, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """This Python run as its own process from the repository: exit code, stdout and stderr
    as text, whatever the code (the test asserts it). The timeout is a net against a hang
    only: a loaded machine takes seconds where a quiet one takes a fraction of one."""
    return subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout, check=False, **kwargs,
    )  # fmt: skip


def program(
    *args: str | Path, timeout: float = 120.0, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """`msrunwatch ARGS` as a user runs it, a program of its own (so it ends by cli.end_now,
    not by returning to a test)."""
    return python("-m", "msrunwatch", *args, timeout=timeout, **kwargs)


def line_rule(
    rule_id: str,
    pattern: str,
    message: str,
    *,
    when: str | None = None,
    severity: Severity = Severity.ERROR,
    category: str = "python-exception",
) -> Rule:
    """A line rule made in a test: what the test is about (its pattern, message and `when`),
    the rest any valid value."""
    return Rule(
        id=rule_id,
        title="t",
        category=category,
        severity=severity,
        scope=Scope.LINE,
        message=message,
        pattern=pattern,
        when=Expr(when) if when else None,
    )


# -- a real run replayed into a directory, judged live on a clock the test moves ----------

STAMP = re.compile(rb"\):(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3})")
"""A GLOG line's time (local, as MindSpore writes it)."""


def log_time(line: bytes) -> float | None:
    m = STAMP.search(line[:160])
    return datetime.strptime(m[1].decode(), "%Y-%m-%d-%H:%M:%S.%f").timestamp() if m else None


class Replay:
    """The fixture's files written up to a log time, each line with the time of the last
    stamped line before it; file times follow the log's, so silences are the real ones."""

    def __init__(self, source: Path, target: Path) -> None:
        self.target = target
        self.lines: dict[str, list[tuple[float, bytes]]] = {}
        for path in sorted(source.iterdir()):
            dated, last = [], 0.0
            for line in path.read_bytes().splitlines(keepends=True):
                last = log_time(line) or last
                dated.append((last, line))
            self.lines[path.name] = dated
        self.written = dict.fromkeys(self.lines, 0)
        target.mkdir()

    def until(self, when: float) -> None:
        for name, dated in self.lines.items():
            new = [line for t, line in dated[self.written[name] :] if t <= when]
            path = self.target / name
            with path.open("ab") as fh:
                fh.write(b"".join(new))
            self.written[name] += len(new)
            last = max((t for t, _ in dated[: self.written[name]]), default=when)
            os.utime(path, (last, last))

    def append(self, name: str, text: bytes, when: float) -> None:
        path = self.target / name
        with path.open("ab") as fh:
            fh.write(text)
        os.utime(path, (when, when))


class Clock:
    """The live engine's clock, moved only by the test (a log time: see Replay)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def watching(
    source: Path, target: Path, rules: list[Rule], stall_after_s: float
) -> Iterator[tuple[Replay, LiveRun, Clock]]:
    """`source`'s run to be written into `target` as it happened (nothing yet), and the live
    engine over `target` on a clock the test moves: no outcome depends on machine speed."""
    replay = Replay(source, target)
    clock = Clock()
    live = LiveRun([str(target)], rules, stall_after_s=stall_after_s, clock=clock)
    try:
        yield replay, live, clock
    finally:
        live.close()


def judged(live: LiveRun, clock: Clock, when: float) -> Report:
    """The verdict at log time `when` (several ticks: read, then judge)."""
    report = None
    for _ in range(3):
        clock.now = when
        report = live.tick().report
        when += 1.1  # past JUDGE_S: the next tick judges again
    assert report is not None
    return report


def statuses(report: Report) -> dict[int, Status]:
    return {r.rank: r.status for r in report.ranks}


SHUTDOWN = b"abnormal compute graph nodes"
"""The scheduler's shutdown line that says the job is over (read.patterns.GAVE_UP)."""


def before_shutdown(scheduler_log: Path) -> bytes:
    """Cut a copied scheduler log before its shutdown (the job not yet over: a quiet rank is
    `waiting`, not `killed`); returns what was cut, to append later."""
    lines = scheduler_log.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if SHUTDOWN in line)
    scheduler_log.write_bytes(b"".join(lines[:cut]))
    return b"".join(lines[cut:])
