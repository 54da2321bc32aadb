"""A log file as numbered lines, read by offset: a sparse index, never the whole file held.

The index holds one entry per block of about a MiB, cut at a line end: its byte offset,
the number of its first line and how many lines it has. A line is found by bisecting the
blocks and reading one block (a few decoded blocks are cached), so a viewer can jump to
line 2,000,000 of a large log at once. Growth is indexed from where the last pass ended.
Nothing here knows about Textual.
"""

from __future__ import annotations

import bisect
import os
import re
from collections import OrderedDict
from collections.abc import Iterator

from msrunwatch.core.compat import dataclass

BLOCK = 1 << 20
"""Bytes per index block (cut back to the last line end in it)."""
CACHED_BLOCKS = 8
_GLOG = re.compile(
    r"^\[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] [A-Za-z_]+\(\d+[,:][^)]*\):"
    r"(?:\d{4}-\d\d-\d\d-)?(?P<time>\d\d:\d\d:\d\d\.\d{3})[.\d]* "
    r"(?:\[[^\]]*\] )?(?:[A-Za-z_~][\w:~<>]*\] )?(?P<message>.*)$"
)
"""MindSpore's GLOG prefix: level, module(pid,tid,process):date-time [file:line] Function]."""
_ERROR = re.compile(r"^\[(?:ERROR|CRITICAL)\]|^Traceback|^\w*(?:Error|Exception)\b")
_WARNING = re.compile(r"^\[WARNING\]")
LEVEL_WORDS = {"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARN", "ERROR": "ERROR"}


def level(line: str) -> str:
    """`E` for an error line (GLOG ERROR, a traceback, an exception), `W` for a warning."""
    if _ERROR.search(line):
        return "E"
    return "W" if _WARNING.search(line) else ""


def condense(line: str, with_time: bool = True) -> str:
    """`05:34:25.600 ERROR message`: a GLOG line's ~100-character prefix cut to time and
    level (only the level when the time is shown beside it); other lines as they are."""
    m = _GLOG.match(line)
    if m is None:
        return line
    word = f"{LEVEL_WORDS.get(m['level'], m['level'][:5]):<5} {m['message']}"
    return f"{m['time']} {word}" if with_time else word


@dataclass(frozen=True, slots=True)
class Block:
    """One indexed block: where it starts, its first line's number (0-based), its lines."""

    offset: int
    first: int
    count: int


class LogDoc:
    """Numbered lines of one file (0-based here; shown 1-based)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.blocks: list[Block] = []
        self._firsts: list[int] = []
        self.indexed = 0
        """Bytes indexed (always at a line end, or the end of the file)."""
        self.lines = 0
        self.error = ""
        self._cache: OrderedDict[int, list[str]] = OrderedDict()

    def __len__(self) -> int:
        return self.lines

    def index(self) -> bool:
        """Index what was appended since the last call; True when there are new lines.
        A file that shrank (truncated: a new run) is indexed afresh."""
        try:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < self.indexed:
                    self._forget()
                before = self.lines
                while self.indexed < size:
                    self._add_block(os.pread(fh.fileno(), BLOCK, self.indexed))
            self.error = ""
            return self.lines != before
        except OSError as exc:
            self.error = exc.strerror or str(exc)
            return False

    def _forget(self) -> None:
        self.blocks, self._firsts, self.indexed, self.lines = [], [], 0, 0
        self._cache.clear()

    def _add_block(self, data: bytes) -> None:
        end = data.rfind(b"\n") + 1 if len(data) == BLOCK else len(data)
        if end == 0:
            end = len(data)  # a line longer than a block: split it
        count = data.count(b"\n", 0, end) + (0 if data[:end].endswith(b"\n") else 1)
        self._cache.pop(len(self.blocks) - 1, None)  # the last block may have grown
        if self.blocks and not self._ends_line():
            self._merge_tail(count)
        else:
            self.blocks.append(Block(self.indexed, self.lines, count))
            self._firsts.append(self.lines)
            self.lines += count
        self.indexed += end

    def _ends_line(self) -> bool:
        """Whether the bytes indexed so far end with a complete line."""
        with open(self.path, "rb") as fh:
            return os.pread(fh.fileno(), 1, max(self.indexed - 1, 0)) in (b"\n", b"")

    def _merge_tail(self, count: int) -> None:
        """New bytes continue the last line: they join the last block."""
        last = self.blocks[-1]
        self.blocks[-1] = Block(last.offset, last.first, last.count + count - 1)
        self.lines += count - 1

    def _block_lines(self, b: int) -> list[str]:
        cached = self._cache.get(b)
        if cached is not None:
            self._cache.move_to_end(b)
            return cached
        block = self.blocks[b]
        end = self.blocks[b + 1].offset if b + 1 < len(self.blocks) else self.indexed
        with open(self.path, "rb") as fh:
            data = os.pread(fh.fileno(), end - block.offset, block.offset)
        lines = data.decode("utf-8", errors="replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        lines = [line.rstrip("\r") for line in lines]
        self._cache[b] = lines
        if len(self._cache) > CACHED_BLOCKS:
            self._cache.popitem(last=False)
        return lines

    def line(self, n: int) -> str:
        """Line n (0-based); an empty string past the end or if the file went away."""
        if not 0 <= n < self.lines:
            return ""
        b = bisect.bisect_right(self._firsts, n) - 1
        try:
            lines = self._block_lines(b)
        except OSError:
            return ""
        k = n - self.blocks[b].first
        return lines[k] if k < len(lines) else ""

    def scan(self, start: int, step: int) -> Iterator[tuple[int, str]]:
        """Lines from `start` forwards (step 1) or backwards (step -1), with their numbers."""
        n = start
        while 0 <= n < self.lines:
            yield n, self.line(n)
            n += step
