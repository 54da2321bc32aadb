"""Read what is new in one file, by offset, and notice truncation, rotation and deletion.

The file system lies (network file systems, editors that replace files, msrun reusing a
log directory), so every read starts with a `stat` of the path and compares it with what
was read before: another inode means the file was replaced (rotated), a missing path that
it was deleted, and a smaller size, or a start that no longer hashes the same, that it was
truncated and written again (a job restarted in the same directory), even when it grew
back past the old offset between two reads. Only `os.pread` is used: the descriptor's
position is never relied on, and nothing is ever written.

A descriptor is held only while the file is busy: `release()` closes it and keeps the
offset, and the next read opens the path again when it still names the same file. The
live engine releases files that go idle, so a thousand quiet logs hold no descriptors.
Only regular files are opened (never a FIFO or a device a log was replaced with), and a
file that cannot be opened (too many open files, no permission) is an error to report,
never taken for a deleted one.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

from msrunwatch.core.compat import StrEnum, dataclass
from msrunwatch.core.fileio import open_regular
from msrunwatch.read.discover import outside

HEAD = 4096
"""Bytes of a file's start whose hash is kept to notice it was rewritten."""


class Change(StrEnum):
    """What happened to a file since the last read, besides growing."""

    NONE = "none"
    TRUNCATED = "truncated"
    """Shorter than what was read, or starting otherwise: a new run wrote it from the start."""
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
    error: str | None = None
    """Why the file could not be opened or read this time (it is tried again next time)."""


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class FileTail:
    """Offset-based reader of one growing file."""

    def __init__(self, path: Path, root: Path | None = None) -> None:
        self.path = path
        self.root = root
        """The log directory: a path swapped for a symlink leading out of it is not opened
        (listing skips such a link; a file already followed must not read through it)."""
        self.offset = 0
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        """The file read so far (dev, inode), kept while its descriptor is released."""
        self._gone = False
        """The file was seen deleted: if the path comes back, it is another file."""
        self._head = b""
        """The file's first bytes as read (up to HEAD): rewritten from the start, they change."""
        self._head_hash = b""
        self._seen: tuple[int, int] | None = None
        """(size, mtime_ns) at the last read: the same again means nothing happened."""

    @property
    def holds_descriptor(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Close the descriptor but remember the file: the next read reopens it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Release the descriptor and forget the file."""
        self.release()
        self._identity, self._seen = None, None

    def pending(self) -> bool:
        """Whether a read would find something: the file was never read, is not the one read
        so far, or has bytes past the offset (a stat, no read: for files a tick's budget did
        not reach, which are behind only if so)."""
        try:
            st: os.stat_result | None = os.stat(self.path)
        except OSError:
            st = None
        if self._identity is None:
            return st is not None
        return self._left_behind(st) or st is None or st.st_size != self.offset

    def read(self, max_bytes: int) -> Read:
        """Up to max_bytes of new data; a change resets the offset before the data.

        When the path was replaced or deleted, what the old file still held past the
        offset is read first, if its descriptor is still held (the writer may have appended
        before the rotation)."""
        try:
            st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return Read(b"", error=f"cannot stat {self.path}: {exc.strerror or exc}")
        if self._left_behind(st):
            return self._moved(st, max_bytes)
        if st is None:
            self._gone = self._gone or self.offset > 0
            return Read(b"", Change.DELETED)
        idle = self._identity is not None and (st.st_size, st.st_mtime_ns) == self._seen
        if idle and st.st_size == self.offset:
            return Read(b"", Change.NONE, st.st_size, st.st_mtime)  # the common case
        return self._grown(st, Change.NONE, max_bytes)

    def _left_behind(self, st: os.stat_result | None) -> bool:
        """Whether the path no longer names the file read so far (deleted or replaced)."""
        return self._identity is not None and (st is None or _identity(st) != self._identity)

    def _moved(self, st: os.stat_result | None, max_bytes: int) -> Read:
        """The path no longer names the file read so far: drain it, then start afresh."""
        if self._fd is not None:
            left = self._pread(self._fd, min(max_bytes, os.fstat(self._fd).st_size - self.offset))
            if left:
                return Read(left, Change.NONE, self.offset)
        self.close()
        self._gone = True  # until the new file is opened: an open that fails keeps the news
        if st is None:
            return Read(b"", Change.DELETED)
        return self._grown(st, Change.NONE, max_bytes)

    def _grown(self, st: os.stat_result, change: Change, max_bytes: int) -> Read:
        """Read what is new in the file st describes (opening it first if needed)."""
        fresh = self._identity is None
        try:
            fd = self._descriptor()
        except OSError as exc:
            return Read(b"", error=_why(self.path, exc))
        if fresh and self._gone:
            change, self._gone = Change.REPLACED, False
        st = os.fstat(fd)
        if not fresh and (st.st_size < self.offset or not self._same_head(fd)):
            self.offset, self._head, self._head_hash = 0, b"", b""
            change = Change.TRUNCATED
        data = self._pread(fd, min(max_bytes, st.st_size - self.offset))
        self._seen = (st.st_size, st.st_mtime_ns)
        return Read(data, change, st.st_size, st.st_mtime)

    def _descriptor(self) -> int:
        """The open descriptor, opening the path again if it was released (OSError when it
        cannot be opened, or names another file than the one read so far)."""
        if self._fd is not None:
            return self._fd
        escape = None if self.root is None else outside(self.path, self.root)
        if escape is not None:
            raise Escaped(escape)
        fd = open_regular(self.path)
        opened = _identity(os.fstat(fd))
        if self._identity is None:
            self._identity, self.offset, self._head, self._head_hash = opened, 0, b"", b""
        elif opened != self._identity:  # replaced between the stat and the open
            os.close(fd)
            raise FileNotFoundError(errno.ENOENT, "replaced while opened", str(self.path))
        self._fd = fd
        return fd

    def _same_head(self, fd: int) -> bool:
        """Whether the file still starts as it did (a rewrite from the start changes it)."""
        if not self._head_hash:
            return True
        now = os.pread(fd, len(self._head), 0)
        return hashlib.blake2b(now, digest_size=16).digest() == self._head_hash

    def _pread(self, fd: int, n: int) -> bytes:
        if n <= 0:
            return b""
        data = os.pread(fd, n, self.offset)
        if self.offset == len(self._head) < HEAD and data:
            self._head = (self._head + data)[:HEAD]
            self._head_hash = hashlib.blake2b(self._head, digest_size=16).digest()
        self.offset += len(data)
        return data


class Escaped(OSError):
    """The path became a symlink out of the log directory: said as the listing says it."""


def _why(path: Path, exc: OSError) -> str:
    """An open that failed, in words; running out of descriptors says what to do."""
    if isinstance(exc, Escaped):
        return str(exc.args[0])
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return f"cannot open {path}: too many open files (raise `ulimit -n`); tried again"
    return f"cannot open {path}: {exc.strerror or exc}"
