"""Read one log file's bytes, block by block, into its FileFacts.

The hot path never loops over lines in Python: a regex with a literal `\\n` core finds
the lines that are not INFO/DEBUG GLOG lines (faults, prints, tracebacks and the memory
block are all there), two literal scans find the INFO lines that carry compile markers,
and only those lines are decoded and parsed. The same scanner is fed the whole file by
triage and the appended bytes by the live watcher.
"""

from __future__ import annotations

from msrunwatch.read import patterns as P
from msrunwatch.read.around import Around, header_time, time_before
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.rules.matcher import LineMatcher

PROGRESS_PARSED = 17
"""LossMonitor lines parsed per block: the latest, and 16 intervals for the step cadence."""
MAX_LINE = 1 << 20
"""A line longer than this is cut: a runaway line must not hold the whole file."""


class FileScanner:
    """Incremental reader of one log file; `facts()` is its state at any point."""

    def __init__(
        self,
        path: str,
        log_dir: str,
        role: FileRole,
        matcher: LineMatcher,
        rank_from_name: int | None = None,
    ) -> None:
        self.extractor = Extractor(path, log_dir, role, matcher, rank_from_name)
        self._all_lines = role in (FileRole.CONSOLE, FileRole.MSRUN, FileRole.SCHEDULER)
        self._carry = b""
        self._lines = 0
        self._offset = 0
        """File offset of the first byte of the carry."""

    def feed(self, chunk: bytes) -> None:
        """Consume the next bytes of the file; an incomplete last line waits for more."""
        if not chunk:
            return
        buf = b"\n" + self._carry + chunk
        end = buf.rfind(b"\n", 1)
        if end <= 0:
            self._carry = buf[1:]
            if len(self._carry) > MAX_LINE:
                self._flush_carry()
            return
        self._scan(buf, end)
        complete = end  # bytes of complete lines, minus the sentinel, plus the newline
        self._offset += complete
        self._carry = buf[end + 1 :]
        self.extractor.size = self._offset + len(self._carry)

    def close(self) -> None:
        """The file ended: its last line counts even without a newline."""
        if self._carry:
            self._flush_carry()
        self.extractor.close()

    def facts(self) -> FileFacts:
        """Everything read so far, frozen."""
        return self.extractor.facts(self._lines)

    def news(self) -> tuple[object, ...]:
        """Changes when the file says something urgent (see Extractor.news)."""
        return self.extractor.news()

    def _flush_carry(self) -> None:
        buf = b"\n" + self._carry[:MAX_LINE] + b"\n"
        self._scan(buf, len(buf) - 1)
        self._offset += len(self._carry)
        self.extractor.size = self._offset
        self._carry = b""

    def _starts(self, buf: bytes, end: int) -> list[int]:
        """Start offsets (in buf) of the lines worth parsing, in order."""
        if self._all_lines:
            return [m.start() + 1 for m in P.ANY_LINE.finditer(buf, 0, end)]
        starts = [m.start() + 1 for m in P.CANDIDATE_LINE.finditer(buf, 0, end)]
        extra: set[int] = set()
        for marker in P.INFO_MARKERS:
            for m in marker.finditer(buf, 0, end):
                extra.add(buf.rfind(b"\n", 0, m.start()) + 1)
        if extra:
            starts = sorted(extra.union(starts))
        return starts

    def _progress_starts(self, buf: bytes, end: int) -> list[int]:
        """Starts of the last LossMonitor lines of the block; the others are only counted."""
        if self._all_lines:
            return []
        total = buf.count(P.LOSS_LINE_START, 0, end)
        starts: list[int] = []
        pos = end
        while total and len(starts) < PROGRESS_PARSED:
            pos = buf.rfind(P.LOSS_LINE_START, 0, pos)
            if pos < 0:
                break
            starts.append(pos + 1)
        starts.reverse()
        if starts:
            self.extractor.skipped_progress(total - len(starts))
            self._learn_epoch(buf, starts[0])
        return starts

    def _learn_epoch(self, buf: bytes, first: int) -> None:
        """Steps per epoch from the last line of the previous epoch, which may be skipped."""
        m = P.LOSS_MONITOR.match(buf[first : first + 200].decode("ascii", "replace"))
        if m is None or int(m["epoch"]) < 2:
            return
        marker = P.LOSS_LINE_START + str(int(m["epoch"]) - 1).encode()
        pos = buf.rfind(marker, 0, first)
        if pos >= 0:
            line = buf[pos + 1 : buf.find(b"\n", pos + 1)].decode("ascii", "replace")
            if (ended := P.LOSS_MONITOR.match(line)) is not None:
                self.extractor.epoch_ended(int(ended["epoch"]), int(ended["step"]))

    def _scan(self, buf: bytes, end: int) -> None:
        """Parse the chosen lines of buf[1:end+1] (complete lines only)."""
        self.extractor.new_block()
        if self._offset == 0 and (first := P.HEADER_START.search(buf, 0, end)) is not None:
            self.extractor.note_first_time(header_time(buf, first.start() + 1))
        bulk = self._progress_starts(buf, end)
        starts = self._starts(buf, end)
        if bulk:
            starts = sorted([*starts, *bulk])
        chosen = set(bulk)
        lineno, counted = self._lines, 1
        for start in starts:
            lineno += buf.count(b"\n", counted, start)
            counted = start
            stop = buf.find(b"\n", start, end + 1)
            raw = buf[start : stop if stop != -1 else end]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            text = raw[:MAX_LINE].decode("utf-8", "replace")
            if start in chosen:
                self.extractor.progress_line(text, lineno + 1, Around(buf, start))
            else:
                offset = self._offset + start - 1
                self.extractor.line(text, lineno + 1, offset, Around(buf, start))
        self._lines = lineno + buf.count(b"\n", counted, end + 1)
        self._settle(buf, end)
        self.extractor.block_time = self._block_end_time(buf, end) or self.extractor.block_time

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
