"""Compile markers and training-progress lines, reduced to running totals."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from msrunwatch.core.numbers import median, to_float, to_int
from msrunwatch.read import patterns as P
from msrunwatch.read.facts import CompileStats, Progress
from msrunwatch.read.timestamps import parse_iso

COMPILE_TOTAL = "compile_graph"


class CompileTracker:
    """Compile start/finish markers and `[PROF]<stage> costs N msec` totals.

    The same `[PROF]` timing can appear twice, as an INFO line and bare on stdout
    (compile_statistics at GLOG_v<=1); the INFO copies win when both exist.
    """

    def __init__(self) -> None:
        self._glog: dict[str, float] = {}
        self._bare: dict[str, float] = {}
        self._glog_graphs = 0
        self._bare_graphs = 0
        self._started = 0
        self._finished = 0
        self._first_start: float | None = None
        self._last_end: float | None = None
        self._end_line: int | None = None
        self._stats: CompileStats | None = None
        """The totals as last computed; any new marker clears them (the live view asks for
        every file's facts on each verdict, and stages do not change once compiled)."""

    def glog_line(self, msg: str, when: float | None, lineno: int = 0) -> None:
        """A GLOG message mentioning compiling or [PROF]."""
        self._stats = None
        if P.COMPILE_START.search(msg):
            self._started += 1
            if self._first_start is None:
                self._first_start = when
        elif P.COMPILE_FINISH.search(msg):
            self._finished += 1
            self._last_end, self._end_line = when, lineno
        elif m := P.PROF_STAGE.search(msg):
            self._glog_graphs += self._add(self._glog, m["stage"], m["ms"])
            if m["stage"] == COMPILE_TOTAL:
                self._last_end, self._end_line = when, lineno

    def bare_line(self, text: str, when: float | None, lineno: int = 0) -> None:
        """A `[PROF]...` line printed to stdout."""
        self._stats = None
        if m := P.PROF_STAGE.match(text):
            self._bare_graphs += self._add(self._bare, m["stage"], m["ms"])
            if m["stage"] == COMPILE_TOTAL and self._end_line is None:
                self._last_end, self._end_line = when, lineno

    @staticmethod
    def _add(totals: dict[str, float], stage: str, ms: str) -> int:
        value = to_float(ms)
        if value is None:
            return 0
        total = totals.get(stage, 0.0) + value
        if math.isfinite(total):  # two costs of 1e308 msec are forged, not slow
            totals[stage] = total
        return 1 if stage == COMPILE_TOTAL else 0

    def stats(self) -> CompileStats:
        """The totals so far."""
        if self._stats is None:
            self._stats = self._totals()
        return self._stats

    def _totals(self) -> CompileStats:
        stages, graphs = (
            (self._glog, self._glog_graphs)
            if self._glog
            else (
                self._bare,
                self._bare_graphs,
            )
        )
        count = max(graphs, self._finished)
        ordered = tuple(
            sorted(((k, round(v, 3)) for k, v in stages.items()), key=lambda kv: -kv[1])
        )
        return CompileStats(
            count=count,
            total_ms=round(stages.get(COMPILE_TOTAL, 0.0), 3),
            started=max(self._started, count if self._started else 0),
            stages=ordered,
            first_start=self._first_start,
            last_end=self._last_end,
            end_line=self._end_line,
        )


def _loss(text: str | None) -> float | None:
    """The loss as logged: NaN and infinity are kept (a diverged loss is a finding)."""
    return None if text is None else to_float(text.rstrip(",;"), special=True)


def _ms(text: str | None) -> float | None:
    return to_float(text) if text else None


class ProgressTracker:
    """The latest training step, from LossMonitor, MindFormers, Megatron or `step=N loss=X`.

    Work per line is constant: epochs are tracked with running maxima, and the cadence
    (median of recent intervals) is computed only when the facts are read.
    """

    def __init__(self) -> None:
        self._latest: Progress | None = None
        self._intervals: deque[float] = deque(maxlen=16)
        self._lines = 0
        self._steps_per_epoch = 0
        self._epoch = 0
        self._epoch_top = 0

    @property
    def progress(self) -> Progress | None:
        """The latest progress, with its cadence."""
        p = self._latest
        if p is None or not self._intervals:
            return p
        return replace(p, lines=self._lines, cadence_s=median(self._intervals))

    def epoch_ended(self, epoch: int, step: int) -> None:
        """An epoch ended at this step: how many steps an epoch has."""
        self._steps_per_epoch = max(self._steps_per_epoch, step)

    def skipped(self, count: int) -> None:
        """Progress lines counted but not parsed."""
        self._lines += count

    def feed(self, text: str, lineno: int, when: Callable[[], float | None]) -> bool:
        """Take a progress line (`when` dates it, lazily); True when the line was one.

        A line whose numbers no run could reach (a 5,000-digit step) is taken and ignored."""
        if m := P.LOSS_MONITOR.search(text):
            epoch, step = to_int(m["epoch"]), to_int(m["step"])
            if epoch is not None and step is not None:
                step = self._global(epoch, step)
                self._record(step, epoch, _loss(m["loss"]), None, lineno, when())
        elif m := P.TIME_MONITOR.search(text):
            if self._latest is not None and (step_ms := _ms(m["step_ms"])) is not None:
                self._latest = replace(self._latest, step_time_ms=step_ms)
        elif m := P.MINDFORMERS.search(text):
            self._epoch_of_steps(m, parse_iso(text[:32]) or when(), _ms(m["step_ms"]), lineno)
        elif m := P.EPOCH_STEP.search(text):
            stamp = parse_iso(text[:32]) if P.ISO_PREFIX.match(text.lstrip()) else None
            self._epoch_of_steps(m, stamp or when(), None, lineno)
        elif m := P.MEGATRON.search(text):
            stamp = parse_iso(text[:32]) if P.ISO_PREFIX.match(text.lstrip()) else None
            loss, step_ms = _loss(m["loss"]), _ms(m["step_ms"])
            self._record(to_int(m["step"]), None, loss, step_ms, lineno, stamp or when())
        elif m := P.GENERIC_STEP.search(text):
            self._record(to_int(m["step"]), None, _loss(m["loss"]), None, lineno, when())
        else:
            return False
        return True

    def _epoch_of_steps(
        self, m: re.Match[str], stamp: float | None, step_ms: float | None, lineno: int
    ) -> None:
        """`Epoch:[1/2], step:[3/10]` (MindFormers, suites): the global step from both counts."""
        epoch, step, steps = to_int(m["epoch"]), to_int(m["step"]), to_int(m["steps"])
        if epoch is None or step is None or steps is None:
            return
        self._record((epoch - 1) * steps + step, epoch, _loss(m["loss"]), step_ms, lineno, stamp)

    def _global(self, epoch: int, step: int) -> int:
        """LossMonitor counts steps within an epoch; turn that into a global step."""
        if epoch != self._epoch:
            if epoch > self._epoch and self._epoch:
                self._steps_per_epoch = max(self._steps_per_epoch, self._epoch_top)
            self._epoch, self._epoch_top = epoch, 0
        self._epoch_top = max(self._epoch_top, step)
        return (epoch - 1) * self._steps_per_epoch + step

    def _record(
        self,
        step: int | None,
        epoch: int | None,
        loss: float | None,
        step_ms: float | None,
        lineno: int,
        when: float | None,
    ) -> None:
        if step is None:
            return
        self._lines += 1
        last = self._latest
        if step_ms is None and last is not None:
            step_ms = last.step_time_ms
        if last is not None and last.time is not None and when is not None and when > last.time:
            self._intervals.append(when - last.time)
        self._latest = Progress(step, epoch, loss, step_ms, lineno, when, self._lines)
