"""`msrunwatch facts`: one node's logs read as triage reads them, written as facts lines.

Runs where the logs are (one task per node, through the cluster's own launcher), so no
log ever crosses the network: only its facts do, a few KB per rank, and `triage` merges
them. Nothing here judges: the verdict needs every node.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from msrunwatch import __version__
from msrunwatch.core.errors import InputError, UsageError
from msrunwatch.core.fileio import open_regular
from msrunwatch.drivers.triage import find_logs, scan_all
from msrunwatch.read.discover import LogFile, discover_target
from msrunwatch.read.facts import FileFacts
from msrunwatch.read.nodefacts.write import NodeInfo, Stream, rules_digest
from msrunwatch.rules.model import Rule

SUFFIX = ".facts.jsonl"


@dataclass(frozen=True)
class Written:
    """What one run of `facts` wrote."""

    path: str
    """Where (`-` for standard output)."""
    files: int
    unreadable: int
    records: int
    bytes: int
    warnings: tuple[str, ...]


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (0 <= K < N) as (K, N)."""
    k, slash, n = text.partition("/")
    if not slash or not k.isdigit() or not n.isdigit() or not 0 <= int(k) < int(n) <= 65536:
        raise UsageError(f"--shard {text!r}: expected K/N with 0 <= K < N, as 0/8 .. 7/8")
    return int(k), int(n)


def this_host() -> str:
    """The name this node goes by: $MSRUNWATCH_HOST, else its hostname (as MindSpore's
    scheduler logs it)."""
    return os.environ.get("MSRUNWATCH_HOST") or socket.gethostname() or "localhost"


def output_path(output: str, host: str, shard: tuple[int, int] | None) -> str:
    """Where to write: `-`, a file (`{host}` replaced), or `DIR/`, where the file is named
    after the host here, on the node (a `$(hostname)` in a job script is expanded once, on
    the submitting host)."""
    if output == "-":
        return output
    output = output.replace("{host}", host)
    if output.endswith(("/", os.sep)) or Path(output).is_dir():
        name = host if shard is None else f"{host}.shard-{shard[0]}-of-{shard[1]}"
        return str(Path(output) / f"{_safe(name)}{SUFFIX}")
    return output


def utc_offset_s() -> int:
    """This node's offset from UTC now, in seconds (its logs' clock minus UTC)."""
    return -time.altzone if time.localtime().tm_isdst > 0 else -time.timezone


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:200] or "host"


def inside(path: str, targets: Sequence[str]) -> str | None:
    """The log directory a path would be written in, if any: msrunwatch never writes
    into a directory it reads."""
    where = Path(path).resolve()
    for target in targets:
        root = Path(target).resolve()
        if root.is_dir() and (where == root or root in where.parents):
            return target
    return None


def _logs(targets: Sequence[str], consoles: Sequence[str], warnings: list[str]) -> list[LogFile]:
    """Every log of the targets, as triage finds them; a target with none is a warning
    (the node still reports, and says so)."""
    readable = []
    for target in targets:
        try:
            discover_target(target)
        except InputError as exc:
            warnings.append(str(exc))
            continue
        readable.append(target)
    if not readable and not consoles:
        return []
    return find_logs(readable, consoles, warnings)


def sharded(files: Sequence[LogFile], shard: tuple[int, int] | None) -> list[LogFile]:
    """Every N-th file from the K-th, in path order: the nodes sharing one directory share
    the reading, and the union of the shards is every file once."""
    if shard is None:
        return list(files)
    k, n = shard
    ordered = sorted(files, key=lambda f: (f.log_dir, f.rel))
    return ordered[k::n]


EVIDENCE_HITS = 3
EVIDENCE_AROUND = 2
EVIDENCE_TAIL = 20
EVIDENCE_WINDOW = 16 << 10
"""Bytes read before and after a line for its neighbours (lines are cut at 400 characters)."""


def _read(path: str, start: int, size: int) -> bytes:
    try:
        with open(open_regular(path), "rb") as fh:
            fh.seek(start)
            return fh.read(size)
    except OSError:
        return b""


def lines_before(path: str, offset: int, count: int) -> list[str]:
    """The `count` whole lines that end just before byte `offset`."""
    start = max(offset - EVIDENCE_WINDOW, 0)
    parts = _read(path, start, offset - start).split(b"\n")
    if start > 0:
        parts = parts[1:]  # cut mid-line
    if parts and not parts[-1]:
        parts = parts[:-1]  # the newline that ends the line before `offset`
    return [p.decode("utf-8", "replace") for p in parts[-count:]] if count else []


def lines_from(path: str, offset: int, count: int) -> list[str]:
    """The `count` lines that start at byte `offset`."""
    parts = _read(path, offset, EVIDENCE_WINDOW).split(b"\n")
    return [p.decode("utf-8", "replace") for p in parts[:count]]


def evidence(log: LogFile, facts: FileFacts) -> list[tuple[int, str]]:
    """Numbered lines around the file's first hits and at its end: what a central view
    shows without the node's disk (at most 8 KB)."""
    path = str(log.path)
    lines: dict[int, str] = {}
    for hit in facts.hits[:EVIDENCE_HITS]:
        before = lines_before(path, hit.offset, EVIDENCE_AROUND)
        for k, text in enumerate(before):
            lines[hit.line - len(before) + k] = text
        for k, text in enumerate(lines_from(path, hit.offset, EVIDENCE_AROUND + 1)):
            lines[hit.line + k] = text
    tail = lines_before(path, log.size + 1, EVIDENCE_TAIL)
    for k, text in enumerate(tail):
        lines[facts.lines - len(tail) + 1 + k] = text
    shown, size = [], 0
    for number in sorted(n for n in lines if n > 0):
        text = lines[number].rstrip("\r")[:400]
        size += len(text) + 8
        if size > 8 << 10:
            break
        shown.append((number, text))
    return shown


def stream_lines(
    targets: Sequence[str],
    rules: Sequence[Rule],
    host: str,
    shard: tuple[int, int] | None = None,
    consoles: Sequence[str] = (),
    with_evidence: bool = False,
) -> tuple[Iterator[str], list[FileFacts], list[str]]:
    """The facts lines of this node's logs, the facts they hold, and what went wrong."""
    warnings: list[str] = []
    logs = sharded(_logs(targets, consoles, warnings), shard)
    facts = scan_all(logs, rules)
    node = NodeInfo(
        host=host,
        log_dirs=tuple(targets),
        version=__version__,
        rules_digest=rules_digest(rules),
        shard=shard,
        collected_at_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        tz_offset_s=utc_offset_s(),
        warnings=tuple(warnings),
    )
    shown = (
        {i: evidence(log, f) for i, (log, f) in enumerate(zip(logs, facts))}
        if with_evidence
        else None
    )
    return Stream(node).lines(facts, shown), facts, warnings


def write(
    targets: Sequence[str],
    rules: Sequence[Rule],
    output: str,
    host: str | None = None,
    shard: tuple[int, int] | None = None,
    consoles: Sequence[str] = (),
    stdout: TextIO | None = None,
    with_evidence: bool = False,
) -> Written:
    """Read the node's logs and write their facts (atomically, to a file)."""
    host = host or this_host()
    path = output_path(output, host, shard)
    if path != "-" and (within := inside(path, targets)) is not None:
        raise UsageError(f"{path}: inside {within}, which is read: msrunwatch never writes there")
    lines, facts, warnings = stream_lines(targets, rules, host, shard, consoles, with_evidence)
    if path == "-":
        count, size = _emit(lines, stdout)
    else:
        count, size = atomic_write(path, lines)
    unreadable = sum(1 for f in facts if f.error is not None)
    return Written(path, len(facts), unreadable, count, size, tuple(warnings))


def _emit(lines: Iterable[str], out: TextIO | None) -> tuple[int, int]:
    import sys

    out = out or sys.stdout
    count = size = 0
    for line in lines:
        out.write(line + "\n")
        count, size = count + 1, size + len(line) + 1
    out.flush()
    return count, size


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _umask()
"""Read once, at import (setting it to read it is not thread-safe)."""


def atomic_write(path: str, lines: Iterable[str]) -> tuple[int, int]:
    """Written beside the target and renamed over it: a reader sees the old file or the
    whole new one, never half of it. Its mode is a new file's (a temporary file is private)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".facts-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o666 & ~UMASK)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            count, size = _emit(lines, fh)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise
    return count, size


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
