"""Read one log file's bytes, block by block, into its FileFacts.

The hot path never loops over lines in Python: a regex with a literal `\\n` core finds
the lines that are not INFO/DEBUG GLOG lines (faults, prints, tracebacks and the memory
block are all there), two literal scans find the INFO lines that carry compile markers,
and only those lines are decoded and parsed. The same scanner is fed the whole file by
triage and the appended bytes by the live watcher.
"""

from __future__ import annotations

import bisect
import re

from msrunwatch.read import patterns as P
from msrunwatch.read import shortcuts
from msrunwatch.read.around import Around, header_time, time_before
from msrunwatch.read.extract import READ_WHOLE, Extractor
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.lossonly import loss_only
from msrunwatch.read.progress import COMPILE_TOTAL
from msrunwatch.read.quiet import quiet_lines
from msrunwatch.rules.matcher import LineMatcher

HEAD = 4096
"""Bytes of a file's start kept to know it again (same_head)."""
CADENCE_INTERVALS = 16
"""Positive intervals between progress lines the cadence is the median of."""
MAX_LINE = 1 << 20
"""A line longer than this is cut: a runaway line must not hold the whole file."""
RUN_LINES = 64
"""Quiet lines in a row after which the rest of the run is told apart in bulk (_run)."""
RUN_SLICE = 256 << 10
"""Bytes of such a run split into lines at a time: what it holds in memory."""

_COMPILE_TOTAL = COMPILE_TOTAL.encode()

Quiet = tuple[int, int, int, int]
"""A run of quiet lines, one after another: the start of its first line and of its last
one, how many lines, and the newline that ends it (offsets in the block)."""


class FileScanner:
    """Incremental reader of one log file; `facts()` is its state at any point."""

    def __init__(
        self,
        path: str,
        log_dir: str,
        role: FileRole,
        matcher: LineMatcher,
        rank_from_name: int | None = None,
        offset: int = 0,
        cr: bool | None = None,
    ) -> None:
        self.extractor = Extractor(path, log_dir, role, matcher, rank_from_name)
        self._all_lines = role in READ_WHOLE or not shortcuts.enabled()
        """Every line goes to Extractor.line (with the shortcuts off: see read.shortcuts)."""
        self._carry = b""
        self._before = b""
        """The last line of the block read before (see Around.previous_line)."""
        self._lines = 0
        self._quiet = quiet_lines(matcher)
        self._at = (0, 1)
        """While a block is read: lines before the last one counted, and where it starts."""
        self._cr = cr
        """Lines end in a lone CR (None: not known yet, see line_break_is_cr)."""
        self._skipping = False
        """The rest of a line longer than MAX_LINE is being passed over."""
        self.head = b""
        """The file's first bytes as read (HEAD of them), to know it again."""
        self._offset = offset
        """File offset of the first byte of the carry (a piece of a file starts further on;
        its lines are numbered from its start, see read.pieces)."""
        self._stages: dict[int, re.Match[bytes]] = {}
        """The compile stage lines of the block being read, by start (see _marked)."""
        self._fast_stages = role is not FileRole.SCHEDULER
        """The scheduler's messages are read for other facts (Extractor._scheduler)."""
        found = loss_only(matcher)
        self._loss_only = found.match if found is not None else None
        self._passed: set[int] = set()
        """The LossMonitor lines of the block no rule can fire on, not parsed for progress:
        passed over without being read (see read.lossonly)."""
        self._headers: dict[int, re.Match[bytes]] = {}
        """The WARNING/ERROR/CRITICAL lines of the block, by start, with their header as the
        block pass read it (P.CANDIDATE_LINE's `fault`): not matched again (_read)."""

    def feed(self, chunk: bytes) -> None:
        """Consume the next bytes of the file; an incomplete last line waits for more."""
        if not chunk:
            return
        if len(self.head) < HEAD:
            self.head += chunk[: HEAD - len(self.head)]
        if self._cr is None and not self._decide(chunk):
            return
        self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        """Read the complete lines of the carry and chunk (line ends known)."""
        if self._cr:
            chunk = chunk.replace(b"\r", b"\n")
        if self._skipping and not (chunk := self._skip_rest(chunk)):
            return
        buf = b"\n" + self._carry + chunk
        end = buf.rfind(b"\n", 1)
        if end <= 0:
            self._carry = buf[1:]
            if len(self._carry) > MAX_LINE:
                self._flush_carry(complete=False)
            self.extractor.size = self._offset + len(self._carry)
            return
        self._scan(buf, end)
        complete = end  # bytes of complete lines, minus the sentinel, plus the newline
        self._offset += complete
        self._carry = buf[end + 1 :]
        self.extractor.size = self._offset + len(self._carry)

    def _decide(self, chunk: bytes) -> bool:
        """Whether lines end in LF (or CRLF) or in a lone CR (see line_break_is_cr); False
        while undecided (the bytes wait in the carry, as an unfinished line does)."""
        seen = self._carry + chunk
        self._cr = line_break_is_cr(seen, final=len(seen) > MAX_LINE)
        if self._cr is None:
            self._carry = seen
            self.extractor.size = self._offset + len(seen)
            return False
        if self._cr:
            self._carry = self._carry.replace(b"\r", b"\n")
        return True

    def _settle_line_ends(self) -> None:
        """The file ended before its line ends could be told: tell them from all of it,
        and read the lines that waited."""
        if self._cr is None:
            waiting, self._carry = self._carry, b""
            self._cr = bool(line_break_is_cr(waiting, final=True))
            if waiting:
                self._take(waiting)

    def _skip_rest(self, chunk: bytes) -> bytes:
        """The rest of a line cut at MAX_LINE is not read, but it is one line: the lines
        after it keep their numbers, however the file is fed (issue 10)."""
        newline = chunk.find(b"\n")
        if newline < 0:
            self._offset += len(chunk)
            self.extractor.size = self._offset
            return b""
        self._offset += newline + 1
        self._lines += 1
        self._skipping = False
        self.extractor.size = self._offset
        return chunk[newline + 1 :]

    def close(self) -> None:
        """The file ended: its last line counts even without a newline."""
        self._settle_line_ends()
        if self._carry:
            self._flush_carry()
        elif self._skipping:
            self._lines += 1
            self._skipping = False
        self.extractor.close()

    def finish(self) -> None:
        """The piece of the file this scanner reads ends with the file (see read.pieces):
        the last line counts, the last record ends; the file's facts are settled later."""
        self._settle_line_ends()
        if self._carry:
            self._flush_carry()
        elif self._skipping:
            self._lines += 1
            self._skipping = False
        self.extractor.stop(None)

    def same_head(self, head: bytes) -> bool:
        """Whether a file's first bytes are those this scanner read: a file truncated and
        written again between two reads has grown, but no longer starts the same."""
        size = min(len(head), len(self.head))
        return head[:size] == self.head[:size]

    @property
    def lines(self) -> int:
        """Lines read so far (complete ones)."""
        return self._lines

    def facts(self) -> FileFacts:
        """Everything read so far, frozen."""
        return self.extractor.facts(self._lines)

    def news(self) -> tuple[object, ...]:
        """Changes when the file says something urgent (see Extractor.news)."""
        return self.extractor.news()

    def _flush_carry(self, complete: bool = True) -> None:
        """Read the carry as a line: the last one of the file, or the first MAX_LINE bytes
        of a longer line, whose rest is skipped up to its end."""
        buf = b"\n" + self._carry[:MAX_LINE] + b"\n"
        self._scan(buf, len(buf) - 1)
        self._offset += len(self._carry)
        self.extractor.size = self._offset
        self._carry = b""
        if not complete:
            self._lines -= 1
            self._skipping = True

    def _starts(self, buf: bytes, end: int) -> tuple[list[int], list[int], list[Quiet]]:
        """Start offsets (in buf) of the lines worth parsing, in order, of the LossMonitor
        lines among them (read in bulk: see _progress_starts), and the runs of quiet lines
        (see read.quiet), which need reading only inside a record; the fault lines' headers
        go to self._headers."""
        self._headers.clear()
        if self._all_lines:
            return [m.start() + 1 for m in P.ANY_LINE.finditer(buf, 0, end)], [], []
        starts: list[int] = []
        epochs: list[int] = []
        quiet: list[Quiet] = []
        headers = self._headers
        is_quiet = self._quiet.quiet if self._quiet.pattern is not None else None
        candidates, bulk = P.CANDIDATE_LINE.finditer, P.BULK_LINE.match
        streak, pos = 0, 0
        while pos < end:  # once more after each flood passed in bulk (see _run)
            resume = end
            for m in candidates(buf, pos, end):
                newline, stop = m.span()
                start = newline + 1
                if m.lastindex is not None:  # a fault header: neither progress nor quiet
                    headers[start] = m
                    starts.append(start)
                elif bulk(buf, newline):
                    epochs.append(start)
                elif is_quiet is not None and is_quiet(buf[start:stop]):
                    if self._add_quiet(quiet, (start, start, 1, stop)):
                        streak += 1
                        if streak >= RUN_LINES:  # a flood of prints: the rest in bulk
                            resume = self._run(buf, stop, end, starts, epochs, quiet)
                            break
                        continue
                else:
                    starts.append(start)
                streak = 0
            streak, pos = 0, resume
        extra = self._marked(buf, end)
        if extra:
            starts = sorted(extra.union(starts))
        return starts, epochs, quiet

    def _marked(self, buf: bytes, end: int) -> set[int]:
        """Starts of the INFO lines with a compile marker to read, but those that are a
        compile stage's timing and nothing else: they go to self._stages with their fields,
        in order, to be read a run at a time (_stage_run)."""
        found: set[int] = set()
        stages = self._stages
        stages.clear()
        for index, start in P.marked_lines(buf, end):
            if start in found:
                stages.pop(start, None)  # two markers: read it whole
                continue
            found.add(start)
            if index == 0 and self._fast_stages:
                stage = P.STAGE_LINE.match(buf, start)
                if stage is not None and self._only_stage(buf, stage, end):
                    stages[start] = stage
        return found.difference(stages)

    def _only_stage(self, buf: bytes, stage: re.Match[bytes], end: int) -> bool:
        """The stage line `stage` matched is ASCII, not too long, and its message holds no
        literal of another fact (P.stage_only)."""
        start, msg = stage.start(), stage.start("msg")
        stop = buf.find(b"\n", msg, end + 1)
        stop = stop if stop != -1 else end
        if stop - start > MAX_LINE or not buf[start:stop].isascii():
            return False
        return P.stage_only().search(buf, msg, stop) is None

    def _run(
        self,
        buf: bytes,
        pos: int,
        end: int,
        starts: list[int],
        epochs: list[int],
        quiet: list[Quiet],
    ) -> int:
        """The candidate lines from the newline at `pos` to the next INFO line, told apart
        a slice at a time: a slice whose distinct lines are all quiet is one quiet run (in C:
        split and set), any other line by line. Returns where the run ends."""
        stop = P.NOT_CANDIDATE.search(buf, pos, end)
        limit = stop.start() if stop is not None else end
        at = pos + 1  # the first line of the run
        while at <= limit:
            cut = limit if limit - at <= RUN_SLICE else buf.find(b"\n", at + RUN_SLICE, limit)
            cut = limit if cut < 0 else cut
            lines = buf[at:cut].split(b"\n")
            distinct = set(lines)
            if (
                self._quiet.none_in(buf, at, cut)
                if len(distinct) * 4 > len(lines)  # mostly new lines: one scan of the slice
                else all(self._quiet.quiet(line) for line in distinct)
            ):
                last = cut - len(lines[-1])
                self._add_quiet(quiet, (at, last, len(lines), cut))
            else:
                for line in lines:
                    if P.BULK_LINE.match(buf, at - 1):
                        epochs.append(at)
                    elif self._quiet.quiet(line):
                        self._add_quiet(quiet, (at, at, 1, at + len(line)))
                    else:
                        starts.append(at)
                    at += len(line) + 1
            at = cut + 1
        return limit

    @staticmethod
    def _add_quiet(quiet: list[Quiet], run: Quiet) -> bool:
        """Add a run of quiet lines, joined to the one before when it follows it directly;
        whether it was joined."""
        if quiet and quiet[-1][3] == run[0] - 1:
            first, _, count, _ = quiet[-1]
            quiet[-1] = (first, run[1], count + run[2], run[3])
            return True
        quiet.append(run)
        return False

    def _progress_starts(self, buf: bytes, starts: list[int]) -> list[int]:
        """Starts of the LossMonitor lines to parse for progress; the others are only
        counted, and their epochs noted (the rules read them all, but those no rule can
        fire on: self._passed, which the ones parsed are not matched for either). The ones
        parsed are the
        last ones of the block back to the 16th positive interval between them (the cadence
        is the median of the last 16), or all of them: so the cadence is the same however
        the file is cut into blocks or pieces."""
        self._passed.clear()
        if not starts:
            return []
        if (passed := self._loss_only) is not None:
            self._passed.update(start for start in starts if passed(buf, start - 1))
        keep = _parsed_from(buf, starts)
        if keep:
            epochs = [m.groups() for s in starts[:keep] if (m := P.LOSS_BULK.match(buf, s - 1))]
            self.extractor.skipped_progress(keep, [(int(e), int(st)) for e, st in epochs])
        return starts[keep:]

    def _scan(self, buf: bytes, end: int) -> None:
        """Parse the chosen lines of buf[1:end+1] (complete lines only)."""
        self.extractor.new_block()
        if not self.extractor.first_time_known:
            self.extractor.note_first_time(first_header_time(buf, 0, end))
        starts, epochs, quiet = self._starts(buf, end)
        parsed = set(self._progress_starts(buf, epochs))
        bulk = set(epochs)
        if epochs:
            starts = sorted([*starts, *epochs])
        self._at = self._lines, 1
        q = s = 0
        stages = list(self._stages)
        for start in starts:
            if s < len(stages) and stages[s] < start:
                q, s = self._stage_run(buf, end, quiet, q, stages, s, start)
            if q < len(quiet) and quiet[q][0] < start:
                q = self._pass_quiet(buf, end, quiet, q, bisect.bisect_left(quiet, (start,), q))
            if start not in self._passed:
                self._read(buf, end, start, start in bulk, start in parsed)
            elif start in parsed:
                self._read(buf, end, start, True, True, rules=False)
            else:
                self.extractor.progress_passed(Around(buf, start, self._before))
        if s < len(stages):
            q, s = self._stage_run(buf, end, quiet, q, stages, s, end + 1)
        if q < len(quiet):
            self._pass_quiet(buf, end, quiet, q, len(quiet))
        lineno, counted = self._at
        self._lines = lineno + P.newlines(buf, counted, end + 1)
        self._before = buf[buf.rfind(b"\n", 0, end) + 1 : end]
        self._settle(buf, end)
        self.extractor.block_time = self._block_end_time(buf, end) or self.extractor.block_time

    def _stage_run(
        self,
        buf: bytes,
        end: int,
        quiet: list[Quiet],
        q: int,
        stages: list[int],
        first: int,
        limit: int,
    ) -> tuple[int, int]:
        """Read the compile stage lines stages[first:] that start before `limit` (no other
        line is read between them) at once: the quiet runs before the first are passed
        over as before any line, those between them only counted (a stage line ends every
        record: the reader is at rest after it). Only compile_graph's line number and the
        last one's are needed. Returns the next quiet run and the next stage line."""
        stop = bisect.bisect_left(stages, limit, first)
        head, tail = stages[first], stages[stop - 1]
        if q < len(quiet) and quiet[q][0] < head:
            q = self._pass_quiet(buf, end, quiet, q, bisect.bisect_left(quiet, (head,), q))
        lineno, counted = self._at
        timings = []
        for start in stages[first:stop]:
            pid, ts, stage, ms = self._stages[start].group("pid", "ts", "stage", "ms")
            number = 0
            if stage == _COMPILE_TOTAL or start == tail:
                lineno += P.newlines(buf, counted, start)
                counted, number = start, lineno + 1
            timings.append((pid.decode(), ts.decode(), stage.decode(), ms.decode(), number))
        self._at = lineno, counted
        self.extractor.stage_lines(timings, tail)
        return bisect.bisect_left(quiet, (tail,), q), stop

    def _pass_quiet(self, buf: bytes, end: int, quiet: list[Quiet], first: int, stop: int) -> int:
        """Pass over the runs of quiet lines quiet[first:stop] (no other line chosen between
        them): read their lines while a record is open, then count the rest in one go."""
        extractor = self.extractor
        i = first
        while i < stop:
            start, last, count, newline = quiet[i]
            if extractor.at_rest():
                lineno, counted = self._at
                final = quiet[stop - 1][1]
                lineno += P.newlines(buf, counted, final)
                self._at = lineno, final
                extractor.quiet_lines(count + sum(r[2] for r in quiet[i + 1 : stop]), lineno + 1)
                break
            self._read(buf, end, start)
            if count == 1:
                i += 1
            else:
                quiet[i] = (buf.find(b"\n", start) + 1, last, count - 1, newline)
        return stop

    def _read(
        self,
        buf: bytes,
        end: int,
        start: int,
        bulk: bool = False,
        parse: bool = False,
        rules: bool = True,
    ) -> None:
        """Parse the line starting at buf[start]; `bulk`: a LossMonitor line, read for
        progress only when `parse` and by the rules only when `rules` (see
        _progress_starts)."""
        lineno, counted = self._at
        lineno += P.newlines(buf, counted, start)
        self._at = lineno, start
        stop = buf.find(b"\n", start, end + 1)
        raw = buf[start : stop if stop != -1 else end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        offset = self._offset + start - 1
        header = self._headers.get(start)
        if header is not None and raw.isascii() and len(raw) <= MAX_LINE:
            text = raw.decode("ascii")
            level, pid, ts = header.group("level", "pid", "ts")
            msg = text[header.end("fault") - start :]
            fields = level.decode(), pid.decode(), ts.decode(), msg
            self.extractor.glog_line(
                fields, text, lineno + 1, offset, Around(buf, start, self._before)
            )
            return
        text = self._decode(raw)
        if bulk:
            around = Around(buf, start, self._before)
            self.extractor.progress_line(text, lineno + 1, around, offset, parse, rules)
        else:
            self.extractor.line(text, lineno + 1, offset, Around(buf, start, self._before))

    def _decode(self, raw: bytes) -> str:
        """UTF-8; a line that is not is tried as GB18030 (GBK's superset, what Chinese
        Windows and many CANN tools write) before its bad bytes become U+FFFD, and the
        extractor counts the lines read so (issue 10)."""
        if len(raw) > MAX_LINE:
            return raw[:MAX_LINE].decode("utf-8", "replace")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        try:
            text = raw.decode("gb18030")
        except UnicodeDecodeError:
            self.extractor.decoded("invalid")
            return raw.decode("utf-8", "replace")
        self.extractor.decoded("gb18030")
        return text

    def _settle(self, buf: bytes, end: int) -> None:
        """Date the undated hits by the first GLOG line after them, once one is read."""
        for key, offset in self.extractor.undated():
            pos = max(offset - self._offset + 1, 0)
            m = P.HEADER_START.search(buf, pos, end)
            if m is not None:
                self.extractor.settle(key, header_time(buf, m.start() + 1))

    @staticmethod
    def _block_end_time(buf: bytes, end: int) -> float | None:
        """Time of the last GLOG line of the block, INFO included: the file's latest activity."""
        return time_before(buf, end + 1, 0)


def line_break_is_cr(data: bytes, final: bool = False) -> bool | None:
    """Whether a file's lines end in a lone CR (old Mac, some tools' progress output), told
    from its first MAX_LINE bytes: a CR and no LF there. An LF anywhere there makes it an LF
    file, where CRLF is one line end and a lone CR (a progress bar redrawn before the first
    newline) is part of a line (issue 21, defect 10: a lone CR in the first line had made
    every later CRLF two line ends). None while it cannot be told: no LF yet in fewer bytes
    than that; `final` (the file ends there): decide anyway."""
    head = data[: MAX_LINE + 1]
    if b"\n" in head:
        return False
    if final or len(head) > MAX_LINE:
        return b"\r" in head
    return None


def _parsed_from(buf: bytes, starts: list[int]) -> int:
    """Index of the first progress line to parse: back to the 16th positive interval."""
    positive, later = 0, None
    for i in range(len(starts) - 1, 0, -1):
        when = time_before(buf, starts[i], starts[i - 1])
        if when is None:
            continue
        if later is not None and later[0] > when:
            positive += 1
            if positive == CADENCE_INTERVALS:
                return later[1] - 1
        later = (when, i)
    return 0


def first_header_time(buf: bytes, pos: int, end: int) -> float | None:
    """Time of the first GLOG line in buf[pos:end] whose time can be read."""
    for m in P.HEADER_START.finditer(buf, pos, end):
        if (when := header_time(buf, m.start() + 1)) is not None:
            return when
    return None
