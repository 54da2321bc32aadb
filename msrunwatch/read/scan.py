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

CADENCE_INTERVALS = 16
"""Positive intervals between progress lines the cadence is the median of."""
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
        offset: int = 0,
    ) -> None:
        self.extractor = Extractor(path, log_dir, role, matcher, rank_from_name)
        self._all_lines = role in (FileRole.CONSOLE, FileRole.MSRUN, FileRole.SCHEDULER)
        self._carry = b""
        self._lines = 0
        self._offset = offset
        """File offset of the first byte of the carry (a piece of a file starts further on;
        its lines are numbered from its start, see read.pieces)."""

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

    @property
    def lines(self) -> int:
        """Lines read so far (complete ones)."""
        return self._lines

    def finish(self) -> None:
        """The piece of the file this scanner reads ends with the file (see read.pieces):
        the last line counts, the last record ends; the file's facts are settled later."""
        if self._carry:
            self._flush_carry()
        self.extractor.stop(None)

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
        """Starts of the LossMonitor lines to parse; the others are only counted, and their
        epochs noted. The ones parsed are the last ones of the block back to the 16th
        positive interval between them (the cadence is the median of the last 16), or all of
        them: so the cadence is the same however the file is cut into blocks or pieces."""
        if self._all_lines:
            return []
        starts = [m.start() + 1 for m in P.BULK_LINE.finditer(buf, 0, end)]
        if not starts:
            return []
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
