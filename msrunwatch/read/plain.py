"""Lines without a GLOG header: the script's prints, Python's tracebacks and the exception
that ends them (with its body), the device-memory summary, training progress (LossMonitor,
MindFormers, Megatron, the suites' loggers) and the lines that say training ended. A print
repeated with nothing new in it is read once (MAX_INERT of them remembered)."""

from __future__ import annotations

from msrunwatch.read import patterns as P
from msrunwatch.read.around import Around
from msrunwatch.read.facts import FileRole
from msrunwatch.read.memory import MemoryBlock
from msrunwatch.read.records import Records
from msrunwatch.read.timestamps import parse_iso
from msrunwatch.read.traceback import CHAINED, SURVIVED, informative, is_bare
from msrunwatch.rules.matcher import LineMatcher

MAX_INERT = 4096
"""Distinct inert lines remembered per file."""

_DATED_START = frozenset("[0123456789")
"""First characters of a line that may begin with a date (checked before the regex)."""


class PlainLines(Records):
    """What a file's un-prefixed lines said: faults, memory, progress, the end."""

    def __init__(self, matcher: LineMatcher, role: FileRole) -> None:
        super().__init__(matcher, role)
        self._first_dated: float | None = None
        """The first print line with a date of its own: the start of a log without GLOG."""
        self._memory = MemoryBlock()
        self._training_started = False
        self._pipeline_stages: int | None = None
        self._inert: set[str] = set()
        """Un-prefixed lines seen to change nothing: their repeats are not read again."""

    def _unprefixed(self, text: str, lineno: int, offset: int, around: Around) -> None:
        """A line without a GLOG prefix: a print, a traceback, an exception's body."""
        if text.startswith(P.TRACEBACK_START) or lineno != self._last_line + 1:
            self._new_record()
        if text in self._inert and self._traceback.state != "frames" and self._deferred is None:
            self._around = around
            return
        if text[:1] in _DATED_START and P.ISO_PREFIX.match(text):
            self._dated(parse_iso(text[:32]))
        self._fired = False
        kind = self._traceback.feed(text)
        if self._deferred is not None and kind == "text" and informative(text):
            self._flush_deferred(text.strip())
        self._around = around
        facts = P.PLAIN_FACTS.could_match(text)
        if facts:
            self._plain(text, lineno, around)
        if kind == "exception" or (facts and P.FATAL.search(text)):
            self._fault(lineno, text)
        if kind == "exception" and not self._traceback.survived:
            self._uncaught_line = lineno
        if kind == "exception" and is_bare(text):
            self._deferred = (text, lineno, offset, around)
        elif text.strip():
            self._rules(text, lineno, offset, None, False, kind=kind)
        if kind == "text" and not facts and self._no_news(text):
            self._remember_inert(text)

    def _no_news(self, text: str) -> bool:
        """The line changed nothing but the record it is in (no rule fired, no traceback
        began or ended): the same text later can skip the reading (real logs print the
        same dataset dumps and compile traces again and again)."""
        return (
            not self._fired
            and not self.matcher.gave_up
            and self._traceback.state != "frames"
            and self._deferred is None
            and not text.startswith((P.TRACEBACK_START, *CHAINED, *SURVIVED))
        )

    def _remember_inert(self, text: str) -> None:
        if self._every_rule:  # the shortcuts are off: every repeat is read again
            return
        if len(self._inert) >= MAX_INERT:
            self._inert.clear()
        self._inert.add(text)

    def progress_line(
        self,
        text: str,
        lineno: int,
        around: Around,
        offset: int,
        parse: bool = True,
        rules: bool = True,
    ) -> None:
        """A LossMonitor line: a record of its own, outside any traceback (stdout's prints
        interleave with stderr's tracebacks), read by the rules (a NaN loss is a finding)
        unless no rule can fire on it (`rules`: see read.lossonly) and, when `parse`, for
        progress (the scanner reads these lines in bulk and parses only the last few of a
        block: see FileScanner). The line after it starts a record."""
        self._new_record()
        self._around = around
        if parse and self._progress.feed(text, lineno, self.date):
            self._last_fault = None
            self._note_activity(self._progress.latest_time)
        if rules:
            self._rules(text, lineno, offset, None, False, kind="text")

    def progress_passed(self, around: Around) -> None:
        """A LossMonitor line no rule can fire on, not parsed for progress (see
        read.lossonly): what progress_line would do with it, without the matcher."""
        self._new_record()
        self._around = around

    def skipped_progress(self, count: int, epochs: list[tuple[int, int]]) -> None:
        """Progress lines the scanner counted but did not parse (only the latest matter),
        with their (epoch, step): how many steps an epoch has."""
        self._progress.skipped(count, epochs)

    def _dated(self, when: float | None) -> None:
        """A print line with its own date (a suite's `[2024-02-01 01:45:11] ... INFO -`
        logger): in a print-only log it shows when the process started (the rank is
        starting, not unknown) and that it is active."""
        if self._first_dated is None:
            self._first_dated = when
        self._note_activity(when)

    def _plain(self, text: str, lineno: int, around: Around) -> None:
        """Facts carried by an un-prefixed line (stdout prints, the memory block)."""
        if text.startswith("[PROF]"):
            self._compile.bare_line(text, self.date(), lineno)
        elif self._memory.feed(text, lineno, self.date):
            if P.TEARDOWN.search(text):
                self._finished_line = lineno
            elif lineno != self._last_line + 1 and P.TEARDOWN.search(around.previous_line()):
                self._finished_line = lineno - 1  # the summary's INFO header was skipped
        elif self._progress.feed(text, lineno, self.date):
            self._last_fault = None
            self._note_activity(self._progress.latest_time)
        elif m := P.MEGATRON_STAMP.search(text):
            self._note_activity(parse_iso(m["ts"]))
            if m["what"] == "before the start of training step":
                self._training_started = True
            elif m["what"] == "after training is done":
                self._finished_line = lineno
        elif m := P.PIPELINE_STAGES.search(text):
            self._pipeline_stages = int(m["stages"])
        elif P.FINISHED.search(text):
            self._finished_line = lineno
