"""Read every log file to its facts: in this process, or in worker processes when large.

Large worker logs are cut into pieces read at once (read.pieces). Each such file is opened
once, here, before the workers are forked: every piece reads that descriptor, so a file
renamed away, or replaced by a FIFO or a device, after it was listed is still the file
that was listed, read whole and consistent (before, the piece that opened it late failed
and the run ended in an internal error). That it moved is said in a warning. A file that
cannot be opened at all is, as a small file is, a file that could not be read.

Workers never outlive the reader: on SIGTERM (core.stopping's Terminated) or Ctrl+C the
reader kills and reaps them before it re-raises, and each dies with its parent anyway.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Optional

from msrunwatch.core.fileio import open_regular
from msrunwatch.core.heap import reuse_blocks_below
from msrunwatch.core.stopping import become_worker, signals_held
from msrunwatch.read.discover import LogFile
from msrunwatch.read.encoding import Transcoder, note
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.pieces import Piece, Source, Torn, bounds, join, scan_piece
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule

BLOCK = 8 << 20
"""Bytes read per system call: large blocks keep the per-block cost negligible."""
PARALLEL_BYTES = 32 << 20
"""Below this much input, forking workers costs more than it saves."""
MIN_PIECE = 16 << 20
"""A file is cut into pieces no smaller than this (each costs a look for its first line)."""
PIECES_PER_WORKER = 4
"""Work is dealt in about this many parts per worker, so the workers finish together."""
HEAP_BLOCKS = 2 * BLOCK
"""Allocations below this come from the heap while large inputs are read: a block, the
carry joined to it and a line up to MAX_LINE fit (see core.heap)."""

_matcher: LineMatcher | None = None

Progress = Callable[[int, int, int, int], None]
"""Called with (files done, files in all, bytes done, bytes in all)."""


def unread(log: LogFile, why: str) -> FileFacts:
    """The facts of a file that could not be read: none, and why."""
    scanner = FileScanner(log.rel, log.log_dir, log.role, LineMatcher(()), log.rank_from_name)
    return replace(scanner.facts(), error=f"{log.path}: {why}")


def scan_file(log: LogFile, matcher: LineMatcher) -> FileFacts:
    """Read one file to its end; an unreadable file becomes facts with an error, and one
    that is not the file listed any more (rotated in between) is read with a warning."""
    scanner = FileScanner(log.rel, log.log_dir, log.role, matcher, log.rank_from_name)
    key = str(log.path)
    matcher.reading(key)
    notes: list[str] = []
    transcoder = Transcoder(log.encoding) if log.encoding else None
    try:
        with open(open_regular(log.path), "rb", buffering=0) as fh:
            if log.identity not in (None, _identity(os.fstat(fh.fileno()))):
                notes.append(f"{log.path}: replaced since it was listed; read as it is now")
            while chunk := fh.read(BLOCK):
                scanner.feed(transcoder.feed(chunk) if transcoder else chunk)
            if transcoder:
                scanner.feed(transcoder.close())
                notes.append(note(log.path, transcoder.codec))
    except OSError as exc:
        scanner.close()
        return replace(scanner.facts(), error=f"{log.path}: {exc.strerror or exc}")
    scanner.close()
    notes += [a.describe(key) for a in matcher.abandoned(key)]
    matcher.forget(key)  # read to its end: its budget is of no more use (100,000 files)
    return replace(scanner.facts(), warnings=tuple(notes)) if notes else scanner.facts()


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _init_worker(rules: Sequence[Rule], parent: int) -> None:
    global _matcher
    become_worker(parent)
    _matcher = LineMatcher(rules)


Task = tuple[int, Optional[list[int]], int]
"""(file index, nominal piece starts or None for the whole file, piece index)."""


def _run_task(log: LogFile, task: Task, fd: int | None) -> FileFacts | Piece:
    assert _matcher is not None
    _, edges, piece = task
    if edges is None:
        return scan_file(log, _matcher)
    source = Source(str(log.path), log.rel, log.log_dir, log.role, log.rank_from_name, fd)
    return scan_piece(source, _matcher, edges, piece)


def plan(files: Sequence[LogFile], workers: int) -> list[Task]:
    """Whole files, and large worker logs cut into pieces so every worker has work to
    the end: parts of about total / (workers * PIECES_PER_WORKER), largest first."""
    total = sum(f.size for f in files)
    target = max(MIN_PIECE, total // (workers * PIECES_PER_WORKER))
    tasks: list[tuple[int, Task]] = []
    for index, log in enumerate(files):
        whole = log.role is not FileRole.WORKER or log.encoding is not None  # decoded in order
        count = 1 if whole else log.size // target
        if count < 2:
            tasks.append((log.size, (index, None, 0)))
            continue
        edges = bounds(log.size, count)
        tasks.extend((edges[k + 1] - edges[k], (index, edges, k)) for k in range(count))
    return [task for _, task in sorted(tasks, key=lambda t: -t[0])]


def usable_cpus() -> int:
    """CPUs this process may run on (taskset and cgroup cpusets narrow os.cpu_count())."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def scan_all(
    files: Sequence[LogFile], rules: Sequence[Rule], progress: Progress | None = None
) -> list[FileFacts]:
    """Facts of every file, in the order given."""
    total = sum(f.size for f in files)
    workers = usable_cpus()
    if total < PARALLEL_BYTES or workers < 2:
        matcher = LineMatcher(rules)
        results = []
        done = 0
        for index, log in enumerate(files):
            results.append(scan_file(log, matcher))
            done += log.size
            if progress:
                progress(index + 1, len(files), done, total)
        return results
    return _scan_parallel(files, rules, workers, total, progress)


def _scan_parallel(
    files: Sequence[LogFile],
    rules: Sequence[Rule],
    workers: int,
    total: int,
    progress: Progress | None,
) -> list[FileFacts]:
    import multiprocessing  # only large inputs are read in parallel
    from concurrent.futures import ProcessPoolExecutor

    reuse_blocks_below(HEAP_BLOCKS)  # before the fork: the workers inherit it
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    tasks = plan(files, workers)
    results: list[FileFacts | None] = [None] * len(files)
    held = _hold(files, tasks, results) if method == "fork" else {}
    tasks = [t for t in tasks if results[t[0]] is None]
    context = multiprocessing.get_context(method)
    pool = None
    try:
        with signals_held():  # the workers are forked at the first submit
            pool = ProcessPoolExecutor(workers, context, _init_worker, (rules, os.getpid()))
            futures = {pool.submit(_run_task, files[t[0]], t, held.get(t[0])): t for t in tasks}
        _collect(futures, files, results, rules, progress, held)  # a signal held arrives here
    except BaseException:  # SIGTERM, Ctrl+C, a bug: no worker may outlive this
        if pool is not None:
            with signals_held():
                _kill(pool)
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        _close(held)
    return [r for r in results if r is not None]


def _close(held: dict[int, int]) -> None:
    for fd in held.values():
        os.close(fd)
    held.clear()


def _hold(
    files: Sequence[LogFile], tasks: Sequence[Task], results: list[FileFacts | None]
) -> dict[int, int]:
    """A descriptor of each file read in pieces, opened before the workers are forked (they
    inherit it); a file that cannot be opened now is recorded as not read."""
    held: dict[int, int] = {}
    for index in sorted({t[0] for t in tasks if t[1] is not None}):
        try:
            held[index] = open_regular(files[index].path)
        except OSError as exc:
            results[index] = unread(files[index], str(exc.strerror or exc))
    return held


def _collect(
    futures: dict[Any, Task],
    files: Sequence[LogFile],
    results: list[FileFacts | None],
    rules: Sequence[Rule],
    progress: Progress | None,
    held: dict[int, int],
) -> None:
    """Fill results as the tasks end (a file's pieces joined once all are in)."""
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    pieces: dict[int, list[Piece]] = {}
    total = sum(f.size for f in files)
    done_files = sum(1 for r in results if r is not None)
    done_bytes = 0
    for future in as_completed(futures):
        index, edges, _ = futures[future]
        if results[index] is not None:
            continue  # a piece of a file already given up on
        try:
            got = future.result()
        except (OSError, BrokenProcessPool) as exc:  # EIO, or a worker killed (OOM killer)
            results[index] = unread(files[index], f"{type(exc).__name__}: {exc}")
            pieces.pop(index, None)
        else:
            if isinstance(got, Piece):
                assert edges is not None
                pieces.setdefault(index, []).append(got)
                if len(pieces[index]) < len(edges) - 1:
                    continue
                got = _joined(files[index], pieces.pop(index), edges[-1], rules, held[index])
            results[index] = got
        done_files, done_bytes = done_files + 1, done_bytes + files[index].size
        if progress:
            progress(done_files, len(files), done_bytes, total)


def _joined(
    log: LogFile, pieces: list[Piece], size: int, rules: Sequence[Rule], fd: int
) -> FileFacts:
    """One file's facts from its pieces, and a warning when its path moved while read."""
    try:
        facts = join(sorted(pieces, key=lambda p: p.index), size)
    except Torn:  # it grew or was rewritten in place: read it again, whole
        return scan_file(log, LineMatcher(rules))
    moved = _moved(log, fd)
    return replace(facts, warnings=(*facts.warnings, moved)) if moved else facts


def _moved(log: LogFile, fd: int) -> str | None:
    """Whether the path still leads to the file that was read (held open by fd)."""
    try:
        now: tuple[int, int] | None = _identity(os.stat(log.path))
    except OSError:
        now = None
    if now == _identity(os.fstat(fd)):
        return None
    return (
        f"{log.path}: renamed, replaced or deleted while it was read "
        "(the file as listed was read to its end)"
    )


def _kill(pool: Any) -> None:
    """Kill every worker now and reap it (the executor has no other way to stop one that
    is reading), drop the work not started, and let the executor's manager thread end.

    That thread closes its wake-up pipe when it sees the workers gone; left running, it
    raced the interpreter's exit, which writes to that pipe (concurrent.futures'
    `_python_exit`): 'OSError: [Errno 9] Bad file descriptor' after 'msrunwatch:
    interrupted', in 1 run of 3 under load (CPython 3.11)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    for process in processes:
        process.kill()
    for process in processes:
        process.join(1.0)
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(5.0)
