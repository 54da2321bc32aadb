"""The last lines of a log, read by offset from its end: never the whole file."""

from __future__ import annotations

import os
from dataclasses import dataclass

TAIL_BYTES = 64 * 1024
"""Bytes read from the end of a log for the detail screen."""


@dataclass(frozen=True, slots=True)
class Tail:
    """The end of a file as read once."""

    lines: tuple[str, ...]
    size: int
    """The file's size when it was read."""
    start: int
    """Offset of the first byte of the first line shown."""
    error: str = ""


def read_tail(path: str, max_bytes: int = TAIL_BYTES) -> Tail:
    """The complete lines among the last `max_bytes` of a file (one bounded pread).

    A line cut by the start of the window is dropped; bytes that are not UTF-8 are
    replaced, so a corrupt log still shows.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return Tail((), 0, 0, exc.strerror or str(exc))
    try:
        size = os.fstat(fd).st_size
        start = max(size - max_bytes, 0)
        data = os.pread(fd, size - start, start)
    except OSError as exc:
        return Tail((), 0, 0, exc.strerror or str(exc))
    finally:
        os.close(fd)
    if start > 0:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
        start = size - len(data)
    text = data.decode("utf-8", errors="replace")
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return Tail(tuple(lines), size, start)
