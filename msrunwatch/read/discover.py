"""Which files are msrun logs, what role each plays and which rank its name suggests.

Layouts: msrun's `--log_dir` (`scheduler.log`, `worker_N.log`, `<worker_log_name>_N.log`),
the `GLOG_logtostderr=0` tree (`rank_N/logs/mindspore.<host>.<user>.log.<LEVEL>.<ts>.<pid>`
and `mindspore.log.<pid>`), a single file, a run directory holding several node
directories, and msrun's saved console output. Anything else is ignored.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from msrunwatch.core.compat import dataclass
from msrunwatch.core.errors import InputError
from msrunwatch.core.fileio import kind_of, read_head
from msrunwatch.core.numbers import to_int
from msrunwatch.read import encoding
from msrunwatch.read.facts import FileRole
from msrunwatch.rules.programs import read_side

Warnings = list[str]
"""What was skipped while listing or opening, in words: every report shows these."""

SNIFF_BYTES = 64 * 1024
MAX_DEPTH = 5

_WORKER_NAME = read_side(r"^(?P<prefix>.*?)_(?P<rank>\d+)\.log$")
_GLOG_CPP = read_side(
    r"^mindspore\..+\.log\.(?P<level>INFO|WARNING|ERROR|FATAL)\.\d{8}-\d{6}\.(?P<pid>\d+)$"
)
_GLOG_PY = read_side(r"^mindspore\.log\.(?P<pid>\d+)(?:\.\d+)?$")
_GLOG_LINKS = {"mindspore.INFO", "mindspore.WARNING", "mindspore.ERROR", "mindspore.FATAL"}
_NOT_LOGS = {
    ".md",
    ".rst",
    ".csv",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".py",
    ".sh",
    ".ir",
    ".dot",
    ".ckpt",
    ".pb",
    ".npy",
    ".png",
    ".svg",
    ".html",
    ".gz",
    ".zip",
    ".tar",
}
"""Suffixes that are never logs, however log-like their text (READMEs quote log lines)."""
_RANK_DIR = read_side(r"^rank_(?P<rank>\d+)$")
_ROTATED = read_side(r"^(?!mindspore\.log\.\d+$).+\.log\.\d+$")
"""A rotated-away copy (`worker_0.log.1`): an older run, not this one's second file."""
_VERBOSITY = {"INFO": 0, "WARNING": 1, "ERROR": 2, "FATAL": 3}
_HEADER = read_side(rb"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] [A-Za-z_]+\(\d+[,:]")
_CRASH = read_side(
    rb"Traceback \(most recent call last\):|Fatal Python error: |\*\*\* Process received signal"
    rb"|^E[0-9A-Z][0-9A-Z]\d{3}: |^\[(?:ERROR|CRITICAL)\] ",
    re.MULTILINE,
)
"""A training process's output without a GLOG line: a traceback, a fatal signal, a CANN code
(print-only logs, excerpts of them, GLOG_v=3 runs)."""
_PROGRESS = read_side(
    rb"epoch: \d+,? step: \d+, loss is |iteration +\d+/ *\d+ \|"
    rb"|(?i:epoch):? ?\[? ?\d+ ?/ ?\d+\]?,? (?i:step|batch):? ?\[? ?\d+ ?/ ?\d+"
)
"""A training process's progress prints (MindSpore's LossMonitor, Megatron, the suites)."""
_MSRUN_EXIT = read_side(rb"Worker process \d+ exit with exception|Scheduler process \d+ exit with")


@dataclass(frozen=True, slots=True)
class LogFile:
    """A file to read, where it came from and what it is."""

    path: Path
    rel: str
    """Path relative to the log directory given, as reports show it."""
    log_dir: str
    """The target as the user gave it."""
    role: FileRole
    rank_from_name: int | None
    size: int
    identity: tuple[int, int] | None = None
    """(device, inode) of the file the path led to when listed: two paths to one file (a
    symlink, a hard link, a directory given twice) are read once."""
    encoding: str | None = None
    """The codec of a UTF-16 or UTF-32 log (read.encoding), decoded as it is read; None for
    bytes read as they are."""


def sniff(head: bytes) -> FileRole | None:
    """Guess a file's role from its first bytes; None when it is not an msrun log."""
    if (
        b"Start worker process with rank id:" in head
        or b"Start scheduler process, log file:" in head
    ):
        return FileRole.CONSOLE
    if b"process_entity/_api.py" in head and b"MainProcess" in head and b"ccsrc" not in head:
        return FileRole.MSRUN
    if _HEADER.search(head) is None:
        if _MSRUN_EXIT.search(head):
            return FileRole.CONSOLE
        return FileRole.WORKER if _CRASH.search(head) or _PROGRESS.search(head) else None
    if b"meta_server_node.cc" in head or b"MetaServerNode" in head:
        return FileRole.SCHEDULER
    return FileRole.WORKER


Classified = tuple[FileRole, Optional[int], Optional[str]]
"""Role, rank hint, and the codec of a UTF-16 or UTF-32 log."""


def _classify(path: Path, parent_rank: int | None, warnings: Warnings) -> Classified | None:
    """Role, rank hint and encoding of one file, or None to skip it (with a warning when
    it looked like a log but is not a regular file or cannot be read)."""
    name = path.name
    m = _WORKER_NAME.match(name)
    if m is None and _never_a_log(name):
        return None
    try:
        head = read_head(path, SNIFF_BYTES)
    except OSError as exc:
        warnings.append(f"skipped {path}: {_why(exc)}")
        return None
    codec = encoding.detect(head)
    if codec is not None:
        head = encoding.Transcoder(codec).feed(head)
    if name == "scheduler.log":
        return FileRole.SCHEDULER, None, codec
    if m is not None:
        role = sniff(head) if head else FileRole.WORKER
        return (role or FileRole.WORKER), to_int(m["rank"]), codec
    if b"\x00" in head[:4096]:
        return None
    role = sniff(head)
    if role is None:
        return None
    return role, parent_rank if role is FileRole.WORKER else None, codec


def _never_a_log(name: str) -> bool:
    """Names that are never read: hidden files, glog's level links, other formats, rotated
    copies (decided by the name alone, before anything is opened)."""
    if name == "scheduler.log":
        return False
    if name in _GLOG_LINKS or name.startswith("."):
        return True
    return Path(name).suffix.lower() in _NOT_LOGS or _ROTATED.match(name) is not None


def _why(exc: OSError) -> str:
    """Why a path could not be read, in words (a symlink loop, a broken link, a FIFO)."""
    if exc.errno == errno.ELOOP:
        return "a symlink loop"
    if exc.errno == errno.ENOENT:
        return "vanished, or a broken symlink"
    return str(exc.strerror or exc)


def _keep_most_verbose(files: list[Path]) -> list[Path]:
    """Of glog's per-level copies of one process (INFO holds WARNING), keep the fullest."""
    best: dict[str, Path] = {}
    others: list[Path] = []
    for path in files:
        m = _GLOG_CPP.match(path.name)
        if m is None:
            others.append(path)
            continue
        key = m["pid"]
        current = best.get(key)
        if current is None or _level(path) < _level(current):
            best[key] = path
    return others + list(best.values())


def _level(path: Path) -> int:
    m = _GLOG_CPP.match(path.name)
    return _VERBOSITY[m["level"]] if m else 9


def _walk(root: Path, warnings: Warnings) -> Iterator[tuple[Path, int | None]]:
    """Files under root with the rank their `rank_N` directory suggests, the fullest of
    glog's per-level copies of a process only."""
    for here, rank, names in _directories(root, warnings):
        files = list(_files_inside(here, names, root, warnings))
        yield from ((p, rank) for p in sorted(_keep_most_verbose(files)))


def _each_file(root: Path, warnings: Warnings) -> Iterator[tuple[Path, int | None]]:
    """Every file `_walk` would choose from, one at a time in name order: for a caller that
    stops at the first log, which copy of a process it meets does not matter, and a
    directory of 100,000 logs is not gone through whole to find one."""
    for here, rank, names in _directories(root, warnings):
        yield from ((p, rank) for p in _files_inside(here, names, root, warnings))


def _files_inside(here: Path, names: list[str], root: Path, warnings: Warnings) -> Iterator[Path]:
    """The files of one directory that are read: not a link out of the log directory."""
    for name in names:
        path = here / name
        if _inside(path, root, warnings):
            yield path


def _directories(root: Path, warnings: Warnings) -> Iterator[tuple[Path, int | None, list[str]]]:
    """Each directory under root that can be entered, with the rank its `rank_N` name
    suggests and its file names sorted. A directory that cannot be listed (or vanished) is
    a warning: its ranks may hold the first fault."""
    base_depth = len(root.parts)

    def unlistable(exc: OSError) -> None:
        warnings.append(f"skipped {exc.filename or root}: {_why(exc)}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable):
        here = Path(dirpath)
        if not _enterable(here, warnings):
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if _descend(here / d, warnings))
        if len(here.parts) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        yield here, _rank_dir(here, root), sorted(filenames)


def _enterable(here: Path, warnings: Warnings) -> bool:
    """Whether a listed directory can be entered: one that can be listed but not searched
    (`chmod -R 644` takes the x bit) names its files but opens none, which is said once
    for the directory rather than once per file."""
    try:
        os.stat(os.path.join(here, "."))
    except OSError as exc:
        warnings.append(f"skipped {here}: can be listed but not entered ({_why(exc)})")
        return False
    return True


def _descend(path: Path, warnings: Warnings) -> bool:
    """Whether to walk into a subdirectory: never a hidden one, never through a symlink
    (a loop, or a way out of the log directory), which is said."""
    if path.name.startswith("."):
        return False
    if path.is_symlink():
        warnings.append(f"skipped {path}: a symlink to a directory (not followed)")
        return False
    return True


def _inside(path: Path, root: Path, warnings: Warnings) -> bool:
    """False (with a warning) for a symlink that leads out of the log directory: msrunwatch
    reads the logs it was given, not what a link in them points at."""
    if _never_a_log(path.name):
        return True
    escape = outside(path, root)
    if escape is None:
        return True
    warnings.append(escape)
    return False


def outside(path: Path, root: Path) -> str | None:
    """Why a path is not read when it is a symlink leading out of the directory root (the
    warning), else None; a loop or a broken link is None too: reading it says which."""
    try:
        if not path.is_symlink():
            return None
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if target.is_relative_to(root.resolve()):
        return None
    return f"skipped {path}: a symlink to {target}, outside the log directory"


def distinct(files: list[LogFile], warnings: Warnings) -> list[LogFile]:
    """Each file once, however many paths lead to it (symlinks, hard links, a directory
    given twice): 15 links to one 2 GB log must not read it 16 times. The path kept is the
    one whose name gives a rank, else the one that is not a symlink, else the first; every
    other path is a warning."""
    kept: dict[tuple[int, int], LogFile] = {}
    for log in files:
        if log.identity is None:
            continue
        other = kept.get(log.identity)
        if other is None or _preferred(log) < _preferred(other):
            kept[log.identity] = log
    chosen = {id(log) for log in kept.values()}
    out = []
    for log in files:
        if log.identity is None or id(log) in chosen:
            out.append(log)
        else:
            first = kept[log.identity].path
            why = "given twice" if first == log.path else f"another path to {first}"
            warnings.append(f"skipped {log.path}: {why}, already read")
    return out


def _preferred(log: LogFile) -> tuple[bool, bool]:
    """Sorts first the path to keep of several to one file."""
    return log.rank_from_name is None, log.path.is_symlink()


def _rank_dir(here: Path, root: Path) -> int | None:
    for part in reversed(here.relative_to(root).parts):
        if m := _RANK_DIR.match(part):
            return to_int(m["rank"])
    return None


def _target_kind(root: Path) -> str | None:
    """`a FIFO`, `a character device`... for a target that is neither a file nor a directory."""
    try:
        mode = root.stat().st_mode
    except OSError:
        return None
    return None if stat.S_ISDIR(mode) else kind_of(mode)


def candidates(target: str, warnings: Warnings | None = None) -> list[tuple[Path, int | None]]:
    """Files of a target worth classifying, without reading any (the live view lists these
    often and opens only the new ones)."""
    root = _root(target)
    return [(root, None)] if root.is_file() else list(_walk(root, _said(warnings)))


def _said(warnings: Warnings | None) -> Warnings:
    return [] if warnings is None else warnings


def _root(target: str) -> Path:
    """The target as a path, once it is known to be a file or a directory."""
    if not target:
        raise InputError("an empty path is not a log directory")
    root = Path(target)
    if root.is_file():
        return root
    kind = _target_kind(root)
    if kind is not None:
        raise InputError(f"{target}: not a regular file or directory ({kind})")
    if not root.is_dir():
        raise InputError(f"{target}: no such file or directory")
    return root


def log_file(
    target: str, path: Path, dir_rank: int | None, warnings: Warnings | None = None
) -> LogFile | None:
    """One candidate as a LogFile, or None when it is not a log (yet: it may be empty)."""
    classified = _classify(path, dir_rank, _said(warnings))
    if classified is None:
        return None
    role, rank, codec = classified
    root = Path(target)
    rel = path.name if root.is_file() else path.relative_to(root).as_posix()
    size, identity = _size_and_identity(path)
    return LogFile(path, rel, target, role, rank, size, identity, codec)


def has_log(target: str) -> bool:
    """Whether a target holds at least one log (found as soon as one is: a directory of
    100,000 logs is neither walked nor classified whole to answer)."""
    said: Warnings = []
    root = _root(target)
    listed = [(root, None)] if root.is_file() else _each_file(root, said)
    return any(log_file(target, path, rank, said) for path, rank in listed)


def discover_target(target: str, warnings: Warnings | None = None) -> list[LogFile]:
    """The log files of one target (a directory or a single file). What was skipped is
    added to warnings; when nothing could be read at all, that is the error."""
    said: Warnings = []
    listed = candidates(target, said)
    files = [found for path, rank in listed if (found := log_file(target, path, rank, said))]
    files = distinct(files, said)
    if warnings is not None:
        warnings.extend(said)
    if not files:
        if said:
            more = f" (and {len(said) - 1} more)" if len(said) > 1 else ""
            raise InputError(f"{target}: no log could be read: {said[0]}{more}")
        kind = "not an msrun or MindSpore log" if Path(target).is_file() else "no msrun logs found"
        raise InputError(f"{target}: {kind}")
    return files


def console_file(target: str) -> LogFile:
    """msrun's saved console output, given with --console."""
    path = Path(target)
    if not path.is_file():
        kind = _target_kind(path)
        raise InputError(
            f"{target}: " + (f"not a regular file ({kind})" if kind else "no such file")
        )
    size, identity = _size_and_identity(path)
    try:
        codec = encoding.detect(read_head(path, encoding.PROBE))
    except OSError:
        codec = None  # reading it says why
    return LogFile(path, path.name, str(path.parent), FileRole.CONSOLE, None, size, identity, codec)


def file_size(path: Path) -> int:
    """Its size now, 0 when it cannot be read."""
    return _size_and_identity(path)[0]


def _size_and_identity(path: Path) -> tuple[int, tuple[int, int] | None]:
    """Size and (device, inode) of the file a path leads to now; (0, None) when it cannot
    be read."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, None
    return st.st_size, (st.st_dev, st.st_ino)
