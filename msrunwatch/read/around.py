"""The bytes around a line the scanner picked: what dates an undated line, and what the
line before it said, looked up only when a line needs them."""

from __future__ import annotations

from msrunwatch.read import patterns as P
from msrunwatch.read.timestamps import parse_glog


class Around:
    """The bytes around a parsed line, looked at only when the line needs them."""

    __slots__ = ("before", "buf", "start")

    def __init__(self, buf: bytes, start: int, before: bytes = b"") -> None:
        self.buf, self.start = buf, start
        self.before = before
        """The last line of the block read before buf: the line before buf's first."""

    def time_before(self, floor: int) -> float | None:
        """Time of the nearest GLOG line in buf[floor:start] (skipped INFO lines included).

        The caller passes where the last dated line starts, so each byte is searched once.
        """
        return time_before(self.buf, self.start, floor)

    def previous_line(self) -> str:
        """The line just before this one, even if it was skipped (an INFO header), even
        when it ended the block read before this one."""
        end = self.start - 1
        if end <= 0:
            return self.before.decode("utf-8", "replace")
        begin = self.buf.rfind(b"\n", 0, end) + 1
        return self.buf[begin:end].decode("utf-8", "replace")


def header_time(buf: bytes, start: int) -> float | None:
    """The timestamp of a GLOG line starting at buf[start], or None if it is not one."""
    m = P.HEADER_START.match(buf, start - 1)
    if m is None:
        return None
    colon = buf.find(b"):", m.end(), m.end() + 200)
    if colon < 0:
        return None
    return parse_glog(buf[colon + 2 : colon + 40].decode("ascii", "replace"))


def time_before(buf: bytes, start: int, floor: int) -> float | None:
    """Time of the nearest GLOG line (INFO included) in buf[floor:start]: one starting at
    floor counts (a dated line there may be a GLOG line the extractor does not read as one)."""
    pos = start - 1
    low = max(floor - 1, 0)
    while pos > low:
        pos = buf.rfind(b"\n[", low, pos)
        if pos < 0:
            return None
        t = header_time(buf, pos + 1)
        if t is not None:
            return t
    return None
