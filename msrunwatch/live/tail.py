"""Read what is new in one file, by offset, and notice truncation, rotation and deletion.

The file system lies (network file systems, editors that replace files, msrun reusing a
log directory), so every read starts with a `stat` of the path and compares it with the
open descriptor: a smaller size means the file was truncated (a job restarted in the same
directory), another inode means it was replaced (rotated); a missing path means deleted.
Only `os.pread` is used: the descriptor's position is never relied on, and nothing is
ever written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

HEAD = 64
"""Bytes of a file's start kept to notice it was rewritten (truncated, then grown again)."""


class Change(StrEnum):
    """What happened to a file since the last read, besides growing."""

    NONE = "none"
    TRUNCATED = "truncated"
    """Shorter than what was read: a new run wrote it from the start."""
    REPLACED = "replaced"
    """The path names another file now (rotation, or rewritten by rename)."""
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class Read:
    """The outcome of one read: new bytes (possibly none) and what changed first."""

    data: bytes
    change: Change = Change.NONE
    size: int = 0
    mtime: float | None = None


class FileTail:
    """Offset-based reader of one growing file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._gone = False
        """The file was seen deleted: if the path comes back, it is another file."""
        self._head = b""
        """The file's first bytes: rewritten from the start, they change."""
        self._seen: tuple[int, int] | None = None
        """(size, mtime_ns) at the last read: the same again means nothing happened."""

    def close(self) -> None:
        """Release the descriptor."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd, self._identity, self._seen = None, None, None

    def _open(self) -> os.stat_result | None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        st = os.fstat(fd)
        self._fd, self._identity, self.offset, self._head = fd, (st.st_dev, st.st_ino), 0, b""
        return st

    def read(self, max_bytes: int) -> Read:
        """Up to max_bytes of new data; a change resets the offset before the data.

        When the path was replaced or deleted, what the old file still held past the
        offset is read first (the writer may have appended before the rotation).
        """
        try:
            st: os.stat_result | None = os.stat(self.path)
        except OSError:
            st = None
        if self._fd is not None and (st is None or (st.st_dev, st.st_ino) != self._identity):
            left = self._drain(max_bytes)
            if left:
                return Read(left, Change.NONE, self.offset)
            self.close()
            if st is None:
                self._gone = True
                return Read(b"", Change.DELETED)
            change = Change.REPLACED
        elif st is None:
            self._gone = self._gone or self._identity is not None or self.offset > 0
            return Read(b"", Change.DELETED)
        else:
            change = Change.NONE
            idle = self._fd is not None and (st.st_size, st.st_mtime_ns) == self._seen
            if idle and st.st_size == self.offset:
                return Read(b"", change, st.st_size, st.st_mtime)  # the common case: idle
        if self._fd is None:
            opened = self._open()
            if opened is None:
                return Read(b"", Change.DELETED)
            st = opened
            if self._gone:
                change, self._gone = Change.REPLACED, False
        elif st.st_size < self.offset or not self._same_head():
            self.offset, self._head = 0, b""
            change = Change.TRUNCATED
        data = self._pread(min(max_bytes, st.st_size - self.offset))
        self._seen = (st.st_size, st.st_mtime_ns)
        return Read(data, change, st.st_size, st.st_mtime)

    def _same_head(self) -> bool:
        """Whether the file still starts as it did (a rewrite from the start changes it)."""
        if not self._head or self._fd is None:
            return True
        return os.pread(self._fd, len(self._head), 0) == self._head

    def _drain(self, max_bytes: int) -> bytes:
        """What the open (old) file holds past the offset."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        return self._pread(min(max_bytes, size - self.offset))

    def _pread(self, n: int) -> bytes:
        if n <= 0 or self._fd is None:
            return b""
        data = os.pread(self._fd, n, self.offset)
        if self.offset < HEAD and len(self._head) < HEAD:
            self._head = (
                (self._head + data)[:HEAD] if self.offset == len(self._head) else self._head
            )
        self.offset += len(data)
        return data
