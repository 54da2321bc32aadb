"""The post-mortem driver: find the logs, read them (in parallel when large), judge."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Optional

from msrunwatch.core.errors import InputError
from msrunwatch.core.fileio import open_regular
from msrunwatch.core.heap import reuse_blocks_below
from msrunwatch.drivers import cluster
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Report
from msrunwatch.judge.verdict import judge
from msrunwatch.read.discover import LogFile, console_file, discover_target
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.pieces import Piece, Source, Torn, bounds, join, scan_piece
from msrunwatch.read.runstate import assemble
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


def scan_file(log: LogFile, matcher: LineMatcher) -> FileFacts:
    """Read one file to its end; an unreadable file becomes facts with an error."""
    scanner = FileScanner(log.rel, log.log_dir, log.role, matcher, log.rank_from_name)
    key = str(log.path)
    matcher.reading(key)
    try:
        with open(open_regular(log.path), "rb", buffering=0) as fh:
            while chunk := fh.read(BLOCK):
                scanner.feed(chunk)
    except OSError as exc:
        scanner.close()
        return replace(scanner.facts(), error=f"{log.path}: {exc.strerror or exc}")
    scanner.close()
    given_up = tuple(a.describe(key) for a in matcher.abandoned(key))
    return replace(scanner.facts(), warnings=given_up) if given_up else scanner.facts()


def _init_worker(rules: Sequence[Rule]) -> None:
    global _matcher
    _matcher = LineMatcher(rules)


Task = tuple[int, Optional[list[int]], int]
"""(file index, nominal piece starts or None for the whole file, piece index)."""


def _run_task(log: LogFile, task: Task) -> FileFacts | Piece:
    assert _matcher is not None
    _, edges, piece = task
    if edges is None:
        return scan_file(log, _matcher)
    source = Source(str(log.path), log.rel, log.log_dir, log.role, log.rank_from_name)
    return scan_piece(source, _matcher, edges, piece)


def plan(files: Sequence[LogFile], workers: int) -> list[Task]:
    """Whole files, and large worker logs cut into pieces so every worker has work to
    the end: parts of about total / (workers * PIECES_PER_WORKER), largest first."""
    total = sum(f.size for f in files)
    target = max(MIN_PIECE, total // (workers * PIECES_PER_WORKER))
    tasks: list[tuple[int, Task]] = []
    for index, log in enumerate(files):
        count = log.size // target if log.role is FileRole.WORKER else 1
        if count < 2:
            tasks.append((log.size, (index, None, 0)))
            continue
        edges = bounds(log.size, count)
        tasks.extend((edges[k + 1] - edges[k], (index, edges, k)) for k in range(count))
    return [task for _, task in sorted(tasks, key=lambda t: -t[0])]


def find_logs(
    targets: Sequence[str], consoles: Sequence[str] = (), warnings: list[str] | None = None
) -> list[LogFile]:
    """Every log file of the targets, plus msrun console files given explicitly; what was
    skipped (unreadable directories, FIFOs, devices) is added to warnings. With no worker
    log at all, msrun's console is all there is of the workers (it tails their output with
    --join): it is read as a worker's log too."""
    files = [f for target in targets for f in discover_target(target, warnings)]
    files.extend(console_file(c) for c in consoles)
    if not any(f.role is FileRole.WORKER for f in files):
        files = [
            replace(f, role=FileRole.WORKER) if f.role is FileRole.CONSOLE else f for f in files
        ]
    return files


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
    from concurrent.futures import ProcessPoolExecutor, as_completed

    reuse_blocks_below(HEAP_BLOCKS)  # before the fork: the workers inherit it
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    tasks = plan(files, workers)
    results: list[FileFacts | None] = [None] * len(files)
    pieces: dict[int, list[Piece]] = {}
    with ProcessPoolExecutor(workers, context, _init_worker, (rules,)) as pool:
        futures = {pool.submit(_run_task, files[t[0]], t): t for t in tasks}
        done_files = done_bytes = 0
        for future in as_completed(futures):
            index, edges, _ = futures[future]
            got = future.result()
            if isinstance(got, Piece):
                assert edges is not None
                pieces.setdefault(index, []).append(got)
                if len(pieces[index]) < len(edges) - 1:
                    continue
                got = _joined(files[index], pieces.pop(index), edges[-1], rules)
            results[index] = got
            done_files, done_bytes = done_files + 1, done_bytes + files[index].size
            if progress:
                progress(done_files, len(files), done_bytes, total)
    return [r for r in results if r is not None]


def _joined(log: LogFile, pieces: list[Piece], size: int, rules: Sequence[Rule]) -> FileFacts:
    """One file's facts from its pieces; read again whole if it changed under them."""
    try:
        return join(sorted(pieces, key=lambda p: p.index), size)
    except Torn:
        return scan_file(log, LineMatcher(rules))


def triage(
    targets: Sequence[str],
    rules: Sequence[Rule],
    consoles: Sequence[str] = (),
    progress: Progress | None = None,
    ctx: Context | None = None,
    clock_tolerance: float = cluster.DEFAULT_TOLERANCE,
    expected_hosts: Sequence[str] = (),
) -> Report:
    """Read every log of the targets and return the verdict; facts files from other nodes
    among the targets make it the verdict over all of them (drivers.cluster), naming the
    expected hosts that sent none."""
    if cluster.has_facts(targets):
        facts_of = (consoles, progress, ctx, clock_tolerance, expected_hosts)
        return _triage_facts(targets, rules, *facts_of)
    warnings: list[str] = []
    files = find_logs(targets, consoles, warnings)
    facts = scan_all(files, rules, progress)
    failed = [f"could not read {f.error}" for f in facts if f.error]
    if facts and len(failed) == len(facts):
        raise InputError(f"no log could be read: {failed[0]}" + _more(len(failed) - 1))
    partial = [w for f in facts for w in f.warnings]
    facts, clocks = cluster.local_clocks(facts, clock_tolerance)  # several hosts' logs
    run = assemble([*targets], facts)
    notes = [*warnings, *failed, *encoding_warnings(facts), *run.warnings, *partial]
    return judge(run, rules, notes, replace(ctx or Context(), clocks=clocks) if clocks else ctx)


def _triage_facts(
    targets: Sequence[str],
    rules: Sequence[Rule],
    consoles: Sequence[str],
    progress: Progress | None,
    ctx: Context | None,
    tolerance: float,
    expected: Sequence[str] = (),
) -> Report:
    """Facts of other nodes, with any log directories given beside them read here."""
    reader, logs, failed = cluster.read_targets(targets)
    warnings: list[str] = []
    files = find_logs(logs, consoles, warnings) if logs or consoles else []
    local = scan_all(files, rules, progress)
    view = cluster.merged(targets, rules, local, reader, tolerance, expected)
    problems = [f"facts: {p}" for p in reader.problems.lines()]
    notes = [*failed, *problems, *warnings, *encoding_warnings(local)]
    return cluster.judged(targets, rules, view, notes, ctx)


def _more(count: int) -> str:
    return f" (and {count} more)" if count else ""


def encoding_warnings(facts: Sequence[FileFacts]) -> list[str]:
    """Say which files had lines that were not UTF-8 but GB18030 (the other bad lines
    are shown with U+FFFD, as before)."""
    return [
        f"{f.path}: {count} line{'s' if count != 1 else ''} not UTF-8, read as GB18030"
        for f in facts
        for name, count in f.encodings
        if name == "gb18030"
    ]
