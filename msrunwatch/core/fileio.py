"""Open only regular files, and never read more than a cap.

Any path msrunwatch is handed can name something that is not a file: a FIFO (opening it
blocks until a writer comes, forever), a device (`/dev/zero` reads forever, `/dev/tty`
steals the terminal), a socket, or a symlink to any of these. So the path is `stat`ed
(following links) and refused unless it is a regular file, then opened with `O_NONBLOCK`
(a FIFO swapped in after the `stat` cannot block the open) and checked again with `fstat`
on the descriptor itself. Reads stop at a cap counted in bytes actually read, whatever
`st_size` claims (procfs files say 0, a file may grow while read).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFile(OSError):
    """The path names a directory, FIFO, socket or device: never opened, never read."""

    def __init__(self, path: str | Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))
        self.kind = kind

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        """Picklable as raised (a reader process hands it to the parent)."""
        return type(self), (str(self.filename), self.kind)


class FileTooLarge(OSError):
    """More bytes than the reader's cap: the file is not read at all."""

    def __init__(self, path: str | Path, cap: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {cap:,} bytes", str(path))
        self.cap = cap

    def __reduce__(self) -> tuple[type, tuple[str, int]]:
        return type(self), (str(self.filename), self.cap)


def kind_of(mode: int) -> str | None:
    """What a mode says a path is, None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def check_regular(path: str | Path, st: os.stat_result) -> None:
    """Raise NotRegularFile unless st describes a regular file."""
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise NotRegularFile(path, kind)


def open_regular(path: str | Path) -> int:
    """A read-only descriptor of a regular file; OSError (NotRegularFile for a FIFO, device,
    socket or directory) otherwise. The caller closes it."""
    check_regular(path, os.stat(path))
    fd = os.open(path, _FLAGS)
    try:
        check_regular(path, os.fstat(fd))
    except OSError:
        os.close(fd)
        raise
    return fd


def read_capped(path: str | Path, cap: int) -> bytes:
    """The whole content of a regular file of at most cap bytes (FileTooLarge beyond)."""
    fd = open_regular(path)
    try:
        parts: list[bytes] = []
        got = 0
        while got <= cap:
            chunk = os.read(fd, min(cap + 1 - got, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    if got > cap:
        raise FileTooLarge(path, cap)
    return b"".join(parts)


def read_head(path: str | Path, size: int) -> bytes:
    """The first bytes of a regular file (fewer when it is shorter)."""
    fd = open_regular(path)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def write_whole(path: Path, data: bytes) -> None:
    """Write a file whole or not at all: into a temporary file beside it, then renamed over
    it, so a reader (or a stop half-way: SIGTERM, Ctrl+C, a full disk) never sees part of
    it. What is not a regular file (`/dev/stdout`, a FIFO) is written to as it is."""
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "wb") as fh:
            fh.write(data)
        return
    if st is not None and os.path.islink(path):  # replace the file, keep the link
        path = Path(os.path.realpath(path))
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with open(temporary, "xb") as fh:
            fh.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader went away (`| head`): what is buffered for
    the closed pipe is dropped there, and the interpreter's last flush does not fail (an
    ignored BrokenPipeError on stderr, and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (an embedding, a test's capture)
        pass
