"""Compile markers and training-progress lines, reduced to running totals."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
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
        self._glog: dict[str, int] = {}
        self._bare: dict[str, int] = {}
        """Totals in nanoseconds: integers add up the same in any grouping, so a file read
        in pieces (see read.pieces) totals exactly what one reader would."""
        self._glog_graphs = 0
        self._bare_graphs = 0
        self._started = 0
        self._finished = 0
        self._first_start: float | None = None
        self._last_end: float | None = None
        self._end_line: int | None = None
        self._glog_end = False
        """The end was set by a GLOG marker (a bare `[PROF]` line only sets a first end)."""
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
            self._last_end, self._end_line, self._glog_end = when, lineno, True
        elif m := P.PROF_STAGE.search(msg):
            self.stage(m["stage"], m["ms"], when, lineno)

    def stage(self, stage: str, ms: str, when: float | None, lineno: int) -> None:
        """A GLOG `[PROF]<stage> costs <ms> msec` line."""
        self.stages(((stage, ms, when, lineno),))

    def stages(self, timings: Iterable[tuple[str, str, float | None, int]]) -> None:
        """GLOG stage timings, one after another (read.glog's stage_lines): (stage, msec,
        time, line number) each."""
        self._stats = None
        glog, graphs = self._glog, 0
        for stage, ms, when, lineno in timings:
            graphs += self._add(glog, stage, ms)
            if stage == COMPILE_TOTAL:
                self._last_end, self._end_line, self._glog_end = when, lineno, True
        self._glog_graphs += graphs

    def bare_line(self, text: str, when: float | None, lineno: int = 0) -> None:
        """A `[PROF]...` line printed to stdout."""
        self._stats = None
        if m := P.PROF_STAGE.match(text):
            self._bare_graphs += self._add(self._bare, m["stage"], m["ms"])
            if m["stage"] == COMPILE_TOTAL and self._end_line is None:
                self._last_end, self._end_line = when, lineno

    @staticmethod
    def _add(totals: dict[str, int], stage: str, ms: str) -> int:
        value = to_float(ms)
        if value is None or not 0 <= value < 1e15:  # a cost of 1e308 msec is forged, not slow
            return 0
        totals[stage] = totals.get(stage, 0) + round(value * 1e6)
        return 1 if stage == COMPILE_TOTAL else 0

    def absorb(self, later: CompileTracker, shift: int) -> None:
        """Continue with what a reader of the rest of the file found (lines `shift` on)."""
        self._stats = None
        for mine, theirs in ((self._glog, later._glog), (self._bare, later._bare)):
            for stage, value in theirs.items():
                mine[stage] = mine.get(stage, 0) + value
        self._glog_graphs += later._glog_graphs
        self._bare_graphs += later._bare_graphs
        self._started += later._started
        self._finished += later._finished
        if self._first_start is None:
            self._first_start = later._first_start
        if later._end_line is not None and (later._glog_end or self._end_line is None):
            self._last_end, self._end_line = later._last_end, later._end_line + shift
            self._glog_end = self._glog_end or later._glog_end

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
            sorted(((k, round(v / 1e6, 3)) for k, v in stages.items()), key=lambda kv: -kv[1])
        )
        return CompileStats(
            count=count,
            total_ms=round(stages.get(COMPILE_TOTAL, 0) / 1e6, 3),
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
    """The latest training step, from LossMonitor, MindFormers, Megatron, Hugging Face's log
    dicts or `step=N loss=X`.

    Work per line is constant: epochs are tracked with running maxima, and the cadence
    (median of recent intervals) is computed only when the facts are read. A tracker that
    read the rest of a file can be absorbed (`absorb`): what it could not know (the steps
    per epoch seen before it, the last step time) is settled then.
    """

    def __init__(self) -> None:
        self._made: Progress | None = None
        self._raw: tuple[int, int | None, float | None, float | None, int, float | None, int] | None
        self._raw = None
        """The latest record's fields, made into a Progress only when asked (_latest): a
        block's LossMonitor lines are records one after another, and only the last counts."""
        self._intervals: deque[float] = deque(maxlen=16)
        self._lines = 0
        self._steps_per_epoch = 0
        self._epoch = 0
        self._epoch_top = 0
        self._raw_step: int | None = None
        """The latest record's LossMonitor step within its epoch (None: another kind)."""
        self._counted = False
        """The latest record's step is its count of progress lines (a Hugging Face log
        line carries none): a reader of the rest of a file adds the lines before it."""
        self._first: tuple[float | None] | None = None
        """The first record's time (wrapped: None before any record)."""
        self._orphan_ms: float | None = None
        """A step time read before any record (it belongs to the record before this reader)."""
        self.seen = False
        """A progress line was read (a fault before it is not where the log ends)."""
        self._first_epoch: int | None = None
        self._first_closed_up = False
        """The first epoch's run of lines ended with a higher epoch (its top counted)."""
        self._one_run = True
        """Every LossMonitor line so far was of the first epoch read."""

    @property
    def _latest(self) -> Progress | None:
        raw = self._raw
        if raw is not None:
            self._made, self._raw = Progress(*raw), None
        return self._made

    @_latest.setter
    def _latest(self, value: Progress | None) -> None:
        self._made, self._raw = value, None

    @property
    def latest_time(self) -> float | None:
        """The time of the latest record (what the log's activity needs)."""
        raw = self._raw
        if raw is not None:
            return raw[5]
        return None if self._made is None else self._made.time

    @property
    def progress(self) -> Progress | None:
        """The latest progress, with its cadence."""
        p = self._latest
        if p is None or not self._intervals:
            return p
        return replace(p, lines=self._lines, cadence_s=median(self._intervals))

    def skipped(self, count: int, epochs: list[tuple[int, int]]) -> None:
        """LossMonitor lines counted but not parsed, with their (epoch, step)."""
        self._lines += count
        self.seen = self.seen or count > 0
        for epoch, step in epochs:
            self._global(epoch, step)

    def feed(self, text: str, lineno: int, when: Callable[[], float | None]) -> bool:
        """Take a progress line (`when` dates it, lazily); True when the line was one.

        A line whose numbers no run could reach (a 5,000-digit step) is taken and ignored."""
        if m := P.LOSS_MONITOR.search(text):
            epoch, step = to_int(m["epoch"]), to_int(m["step"])
            if epoch is not None and step is not None:
                self._record(
                    self._global(epoch, step), epoch, _loss(m["loss"]), None, lineno, when()
                )
                self._raw_step = step
        elif m := P.TIME_MONITOR.search(text):
            step_ms = _ms(m["step_ms"])
            if step_ms is None:
                pass
            elif self._latest is not None:
                self._latest = replace(self._latest, step_time_ms=step_ms)
            else:
                self._orphan_ms = step_ms
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
        elif m := P.HF_LOGS.search(text):
            self._record(self._lines + 1, None, _loss(m["loss"]), None, lineno, when())
            self._counted = True
        else:
            return False
        self.seen = True
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
                if self._epoch == self._first_epoch:
                    self._first_closed_up = True
            self._epoch, self._epoch_top = epoch, 0
            if self._first_epoch is None:
                self._first_epoch = epoch
            else:
                self._one_run = False
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
        raw, made = self._raw, self._made
        if raw is not None:
            last_ms, last_time = raw[3], raw[5]
        elif made is not None:
            last_ms, last_time = made.step_time_ms, made.time
        else:
            last_ms = last_time = None
        if step_ms is None:
            step_ms = last_ms
        if last_time is not None and when is not None and when > last_time:
            self._intervals.append(when - last_time)
        if self._first is None:
            self._first = (when,)
        self._raw_step = None
        self._counted = False
        self._raw = (step, epoch, loss, step_ms, lineno, when, self._lines)

    def absorb(self, later: ProgressTracker, shift: int) -> None:
        """Continue with what a reader of the rest of the file (lines `shift` on) found."""
        if later._orphan_ms is not None and self._latest is None:
            self._orphan_ms = later._orphan_ms
        if later._orphan_ms is not None and self._latest is not None:
            self._latest = replace(self._latest, step_time_ms=later._orphan_ms)
        before, lines_before = self._latest, self._lines
        self._steps_per_epoch = max(self._spe_before(later), later._steps_per_epoch)
        self._lines += later._lines
        self.seen = self.seen or later.seen
        if later._first_epoch is not None:
            self._absorb_epochs(later)
        if later._latest is None or later._first is None:
            return
        if self._first is None:
            self._first = later._first
        if before is not None and before.time is not None:
            first = later._first[0]
            if first is not None and first > before.time:
                self._intervals.append(first - before.time)
        self._intervals.extend(later._intervals)
        self._raw_step, self._counted = later._raw_step, later._counted
        latest = later._latest
        if later._counted:
            latest = replace(latest, step=latest.step + lines_before)
        self._latest = self._settled(latest, later._raw_step, before, shift, lines_before)

    def _absorb_epochs(self, later: ProgressTracker) -> None:
        """The epoch being counted, its top step, and whether the first epoch has ended."""
        assert later._first_epoch is not None
        if self._first_epoch is None:
            self._first_epoch, self._one_run = later._first_epoch, later._one_run
            self._first_closed_up = later._first_closed_up
            self._epoch, self._epoch_top = later._epoch, later._epoch_top
            return
        continued = later._first_epoch == self._epoch
        if self._one_run:
            if not continued:
                self._first_closed_up = later._first_epoch > self._epoch
            elif not later._one_run:
                self._first_closed_up = later._first_closed_up
            self._one_run = continued and later._one_run
        if continued and later._one_run:
            self._epoch_top = max(self._epoch_top, later._epoch_top)
        else:
            self._epoch_top = later._epoch_top
        self._epoch = later._epoch

    def _spe_before(self, later: ProgressTracker) -> int:
        """Steps per epoch known when the later reader's lines begin, as one reader sees it."""
        spe, first = self._steps_per_epoch, later._first_epoch
        if first is None or not self._epoch:
            return spe
        if first > self._epoch or (first == self._epoch and later._first_closed_up):
            return max(spe, self._epoch_top)
        return spe

    def _settled(
        self, latest: Progress, raw: int | None, before: Progress | None, shift: int, lines: int
    ) -> Progress:
        """The later reader's latest record, with what only the earlier part knew."""
        step = latest.step
        if raw is not None and latest.epoch is not None:
            step = (latest.epoch - 1) * self._steps_per_epoch + raw
        step_ms = latest.step_time_ms
        if step_ms is None and before is not None:
            step_ms = before.step_time_ms
        return replace(
            latest,
            step=step,
            step_time_ms=step_ms,
            line=latest.line + shift,
            lines=latest.lines + lines,
        )
