"""One large log read as several pieces at once, joined into what one reader would find.

A piece starts at a line boundary: the first GLOG line (any level) whose time can be read at
or after its nominal start. There a reader starting afresh reads on as one that has read
the whole file before it, as long as nothing was still open (a traceback's frames, a bare
exception waiting for its body, a memory block: `Extractor.clean`), and what both know is
joined exactly by `Extractor.absorb` (line numbers shifted by the lines before the piece).
So each piece reads on past its nominal end to the line where the next piece starts, and
if it is not clean there, on to the next piece's start, and so on: the piece it overran is
then dropped. The result is always that of one reader; only the work may be done twice,
where a piece boundary falls inside a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from msrunwatch.core.compat import dataclass
from msrunwatch.core.fileio import open_regular
from msrunwatch.read import patterns as P
from msrunwatch.read.around import header_time
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.scan import MAX_LINE, FileScanner, line_break_is_cr
from msrunwatch.rules.matcher import LineMatcher

BLOCK = 8 << 20
"""Bytes read per system call."""
LOOK = 64 << 10
"""Bytes read at a time while looking for the line where a piece starts."""


@dataclass(frozen=True, slots=True)
class Source:
    """The file a piece belongs to (what a FileScanner needs to know of it)."""

    path: str
    rel: str
    log_dir: str
    role: FileRole
    rank_from_name: int | None
    fd: int | None = None
    """A descriptor of the file held by the caller for every piece (the same file however
    its path changes meanwhile); None to open the path."""


@dataclass(slots=True)
class Piece:
    """What one reader found between `start` and `stop` (None: no line starts a piece in
    its part of the file; the piece before it reads that part)."""

    index: int
    start: int | None
    stop: int
    lines: int
    extractor: Extractor | None
    given_up: tuple[str, ...] = ()
    """The lines a rule gave up on in this piece (its time budget), for the warnings."""


def bounds(size: int, count: int) -> list[int]:
    """Nominal starts of `count` equal pieces, and the end of the file."""
    return [size * i // count for i in range(count)] + [size]


def start_of(fd: int, pos: int, end: int) -> int | None:
    """The first piece start in [pos, end): a line beginning with a GLOG line whose time
    reads. Reads ahead only as far as it must (usually a few KB)."""
    if pos == 0:
        return 0
    at = pos - 1  # a line starting at pos follows the newline just before it
    while at < end:
        data = os.pread(fd, LOOK + 256, at)
        if not data:
            return None
        limit = min(len(data), end - at + 1)
        for m in P.HEADER_START.finditer(data, 0, limit):
            line = m.start() + 1
            if _starts_piece(data, line):
                return at + line
        if len(data) < LOOK + 256:
            return None
        at += LOOK
    return None


def _starts_piece(data: bytes, line: int) -> bool:
    """A GLOG line the extractor reads as one, whose time reads: every line after it is
    dated by it or a later one, and a traceback or record before it ends there."""
    if header_time(data, line) is None:
        return False
    stop = data.find(b"\n", line)
    text = data[line : stop if stop >= 0 else len(data)].decode("utf-8", "replace")
    return P.GLOG_HEADER.match(text) is not None


def scan_piece(source: Source, matcher: LineMatcher, edges: Sequence[int], index: int) -> Piece:
    """Read piece `index` of the file whose nominal piece starts are `edges`."""
    size = edges[-1]
    fd = open_regular(source.path) if source.fd is None else source.fd
    matcher.reading(source.path)
    try:
        start = start_of(fd, edges[index], edges[index + 1])
        if start is None or (index and start >= edges[index + 1]):
            return Piece(index, None, start or size, 0, None)
        cr = line_break_is_cr(os.pread(fd, MAX_LINE + 1, 0), final=True)
        scanner = FileScanner(
            source.rel, source.log_dir, source.role, matcher, source.rank_from_name, start, cr
        )
        stop = _read_on(fd, scanner, start, edges, index + 1)
    finally:
        if source.fd is None:
            os.close(fd)
    given_up = tuple(a.describe(source.path) for a in matcher.abandoned(source.path))
    return Piece(index, start, stop, scanner.lines, scanner.extractor, given_up)


def _read_on(fd: int, scanner: FileScanner, start: int, edges: Sequence[int], after: int) -> int:
    """Feed the scanner from start to the next piece's start where it is clean."""
    size = edges[-1]
    pos = start
    while True:
        stop = _next_start(fd, edges, after)
        _feed(fd, scanner, pos, stop)
        pos = stop
        if stop >= size:
            pos = _feed_to_end(fd, scanner, pos)
            scanner.finish()
            return pos
        if scanner.extractor.clean():
            data = os.pread(fd, 256, stop)
            scanner.extractor.stop(header_time(b"\n" + data, 1))
            return stop
        after = next(i for i, edge in enumerate(edges) if edge > stop)


def _next_start(fd: int, edges: Sequence[int], after: int) -> int:
    """Where the first non-empty piece from `after` on starts (the end of the file if none)."""
    size = edges[-1]
    for i in range(after, len(edges) - 1):
        start = start_of(fd, edges[i], edges[i + 1])
        if start is not None and start < edges[i + 1]:
            return start
    return size


def _feed(fd: int, scanner: FileScanner, pos: int, stop: int) -> None:
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, pos, stop - pos, os.POSIX_FADV_SEQUENTIAL)
    while pos < stop:
        chunk = os.pread(fd, min(BLOCK, stop - pos), pos)
        if not chunk:
            break
        scanner.feed(chunk)
        pos += len(chunk)


def _feed_to_end(fd: int, scanner: FileScanner, pos: int) -> int:
    """The last piece reads what the file holds now (it may have grown since it was listed)."""
    while chunk := os.pread(fd, BLOCK, pos):
        scanner.feed(chunk)
        pos += len(chunk)
    return pos


class Torn(Exception):
    """The pieces do not join (the file changed while they were read)."""


def join(pieces: Sequence[Piece], size: int) -> FileFacts:
    """The facts of the whole file from its pieces (in order), as one reader finds them."""
    first = pieces[0].extractor
    assert first is not None and pieces[0].start == 0
    pos, lines = pieces[0].stop, pieces[0].lines
    given_up = list(pieces[0].given_up)
    for piece in pieces[1:]:
        if piece.extractor is None or piece.start is None or piece.start < pos:
            continue  # empty, or read by the piece before (it was not clean at its end)
        if piece.start != pos:
            raise Torn(f"piece {piece.index} starts at {piece.start}, not {pos}")
        first.absorb(piece.extractor, lines)
        pos, lines = piece.stop, lines + piece.lines
        given_up += piece.given_up
    if pos < size:
        raise Torn(f"the pieces end at {pos} of {size} bytes")
    first.close()
    facts = first.facts(lines)
    return replace(facts, warnings=tuple(given_up)) if given_up else facts
