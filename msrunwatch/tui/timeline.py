"""Every rank's warning and error lines in one list, ordered by the log's own time.

lnav's and Toolong's core view: after the verdict, what happened across the job, in
order. Each file is read once in blocks; a line-anchored pattern picks the WARNING,
ERROR and CRITICAL GLOG lines (every line, on demand), and lines without a time of
their own (a traceback) take the time of the line before. Nothing here knows Textual.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from msrunwatch.core.compat import dataclass
from msrunwatch.read.timestamps import clock, parse_glog
from msrunwatch.tui.logdoc import condense, level

BLOCK = 8 << 20
FILE_WIDTH = 16
"""The FILE column's width at most (longer names are cut)."""
LIMIT = 200_000
"""Lines kept at most (the earliest, in time order): a view, not an archive."""
_PROBLEMS = re.compile(
    rb"^(?:\[(?:WARNING|ERROR|CRITICAL)\]|Traceback|\w*(?:Error|Exception)\b)[^\n]*", re.M
)
_EVERY = re.compile(rb"^[^\n]+", re.M)
_STAMP = re.compile(r"\):(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d+\.?\d*)")


@dataclass(frozen=True, slots=True)
class Entry:
    """One log line in the merged view."""

    time: float | None
    rank: int | None
    level: str
    """`E`, `W` or empty (see logdoc.level)."""
    path: str
    line: int
    """1-based."""
    text: str


@dataclass(frozen=True, slots=True)
class LogRef:
    """A file to merge, and the rank it belongs to (None: the scheduler, msrun)."""

    rank: int | None
    path: str
    about: tuple[tuple[int, int], ...] = ()
    """(line, rank) of the lines of a rank-less file that the verdict ties to a rank: msrun's
    `Worker process 9606 exit with exception` is rank 1's, by its pid (the trial's N11)."""


def entries(ref: LogRef, every_line: bool = False) -> Iterator[Entry]:
    """The file's problem lines (or every line), each dated by its own or an earlier time."""
    pattern = _EVERY if every_line else _PROBLEMS
    last: float | None = None
    about = dict(ref.about)
    for number, text in _lines(ref.path, pattern):
        m = _STAMP.search(text, 0, 120)
        stamp = parse_glog(m[1]) if m else None
        last = stamp if stamp is not None else last
        yield Entry(last, about.get(number, ref.rank), level(text), ref.path, number, text)


def _lines(path: str, pattern: re.Pattern[bytes]) -> Iterator[tuple[int, str]]:
    """(1-based number, text) of each line the pattern matches, reading in blocks."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, read block by block
    except OSError:
        return
    with fh:
        number, carry = 1, b""
        while block := fh.read(BLOCK):
            data = carry + block
            cut = data.rfind(b"\n") + 1
            data, carry = data[:cut], data[cut:]
            at = 0
            for m in pattern.finditer(data):
                number += data.count(b"\n", at, m.start())
                at = m.start()
                yield number, m.group().decode("utf-8", errors="replace").rstrip("\r")
            number += data.count(b"\n", at)
        for m in pattern.finditer(carry):
            yield number, m.group().decode("utf-8", errors="replace")


def merge(refs: Iterable[LogRef], every_line: bool = False, limit: int = LIMIT) -> list[Entry]:
    """Every file's lines ordered by time (undated lines first, then by rank and line),
    each once: an echo in msrun's console of a line a log holds is left out."""
    out = without_echoes(refs, every_line)
    out.sort(key=lambda e: (e.time is not None, e.time or 0.0, _rank_key(e.rank), e.line))
    return out[:limit]


def without_echoes(refs: Iterable[LogRef], every_line: bool = False) -> list[Entry]:
    """The files' lines, less the copies that msrun's console holds of lines the logs
    hold: msrun (`--join=True`) prints every worker's and the scheduler's lines to the
    console verbatim, so the same ERROR would be listed twice, its rank-less copy first.

    A copy is told by its whole text (a GLOG line carries its process id and a time to
    the microsecond), counted: a console line is left out only while a log holds as many
    unmatched copies of it, so a traceback of msrun's own beside the workers' stays.
    Files rank first, then the rank-less files in the ranks' directories (the scheduler),
    then the rest (the consoles); a file's lines are matched against better files' only.
    """
    refs = list(refs)
    homes = {os.path.dirname(ref.path) for ref in refs if ref.rank is not None}

    def standing(ref: LogRef) -> int:
        return 0 if ref.rank is not None else 1 if os.path.dirname(ref.path) in homes else 2

    out: list[Entry] = []
    owned: Counter[str] = Counter()
    for tier in sorted({standing(ref) for ref in refs}):
        kept = []
        for ref in (r for r in refs if standing(r) == tier):
            for e in entries(ref, every_line):
                if owned[e.text] > 0:
                    owned[e.text] -= 1
                else:
                    kept.append(e)
        owned.update(e.text for e in kept)
        out += kept
    return out


_LAST: list[tuple[object, list[Entry]]] = []
"""The last merge and what it was of: a timeline opened again on files that did not change
(an ended run of 512 ranks took 8 s to read each time) shows it at once."""


def merged(refs: Sequence[LogRef], every_line: bool = False) -> list[Entry]:
    """`merge`, or the last merge of errors and warnings when it was of the same files,
    none changed since (by size and modification time); every line is read each time (it
    may be 200,000 lines: not kept)."""
    if every_line:
        return merge(refs, every_line)
    key = tuple((ref.rank, ref.path, ref.about, _stamp(ref.path)) for ref in refs)
    if _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    lines = merge(refs)
    _LAST[:] = [(key, lines)]
    return lines


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _rank_key(rank: int | None) -> int:
    return -1 if rank is None else rank


class TimelineSource:
    """The merged lines for the viewer, filtered by rank and level."""

    def __init__(self, lines: list[Entry]) -> None:
        self.all = lines
        self.shown = lines
        self.levels = "EW"
        self.ranks: frozenset[int] | None = None
        self.file_width = FILE_WIDTH

    def refilter(self) -> None:
        """Apply `levels` (`E`, `EW`, or `` for every line) and `ranks` (None: all)."""
        self.shown = [
            e
            for e in self.all
            if (not self.levels or (e.level and e.level in self.levels))  # "" is in any str
            and (self.ranks is None or e.rank in self.ranks)
        ]
        names = {source(e.path) for e in self.shown}
        self.file_width = min(max((len(n) for n in names), default=4), FILE_WIDTH)

    def first(self, path: str | None, line: int | None) -> int:
        """Where to open: that line if shown (the root cause's), else the first error."""
        for n, e in enumerate(self.shown):
            if e.path == path and e.line == line:
                return n
        return next((n for n, e in enumerate(self.shown) if e.level == "E"), 0)

    def __len__(self) -> int:
        return len(self.shown)

    def line(self, n: int) -> str:
        return self.shown[n].text if 0 <= n < len(self.shown) else ""

    def gutter(self, n: int) -> str:
        """Time, rank (`-` for the scheduler's and msrun's lines) and the file it is from."""
        e = self.shown[n]
        rank = "-" if e.rank is None else str(e.rank)
        name = source(e.path)[: self.file_width]
        return f"{clock(e.time) if e.time else '-':>12} {rank:>5} {name:<{self.file_width}} "


def source(path: str) -> str:
    """The file a line is from, as the FILE column names it: `worker_3`, `scheduler`,
    `msrun_console` (the directory is the rank's; the extension says nothing)."""
    name = os.path.basename(path)
    stem, dot, ext = name.rpartition(".")
    return stem if dot and ext in ("log", "txt") else name


def shorten(line: str) -> str:
    """A line without its GLOG prefix but the level (the gutter holds time and rank)."""
    return condense(line, with_time=False)
