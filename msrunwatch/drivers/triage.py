"""The post-mortem driver: find the logs, read them (in parallel when large), judge."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace

from msrunwatch.core.errors import InputError
from msrunwatch.core.fileio import open_regular
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Report
from msrunwatch.judge.verdict import judge
from msrunwatch.read.discover import LogFile, console_file, discover_target
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.runstate import assemble
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule

BLOCK = 8 << 20
"""Bytes read per system call: large blocks keep the per-block cost negligible."""
PARALLEL_BYTES = 32 << 20
"""Below this much input, forking workers costs more than it saves."""

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


def _scan_in_worker(log: LogFile) -> FileFacts:
    assert _matcher is not None
    return scan_file(log, _matcher)


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


def scan_all(
    files: Sequence[LogFile], rules: Sequence[Rule], progress: Progress | None = None
) -> list[FileFacts]:
    """Facts of every file, in the order given."""
    total = sum(f.size for f in files)
    workers = min(os.cpu_count() or 1, len(files))
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

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    order = sorted(range(len(files)), key=lambda i: -files[i].size)
    results: list[FileFacts | None] = [None] * len(files)
    with ProcessPoolExecutor(workers, context, _init_worker, (rules,)) as pool:
        futures = {pool.submit(_scan_in_worker, files[i]): i for i in order}
        done_bytes = 0
        for count, future in enumerate(as_completed(futures), 1):
            index = futures[future]
            results[index] = future.result()
            done_bytes += files[index].size
            if progress:
                progress(count, len(files), done_bytes, total)
    return [r for r in results if r is not None]


def triage(
    targets: Sequence[str],
    rules: Sequence[Rule],
    consoles: Sequence[str] = (),
    progress: Progress | None = None,
    ctx: Context | None = None,
) -> Report:
    """Read every log of the targets and return the verdict."""
    warnings: list[str] = []
    files = find_logs(targets, consoles, warnings)
    facts = scan_all(files, rules, progress)
    failed = [f"could not read {f.error}" for f in facts if f.error]
    if facts and len(failed) == len(facts):
        raise InputError(f"no log could be read: {failed[0]}" + _more(len(failed) - 1))
    partial = [w for f in facts for w in f.warnings]
    run = assemble([*targets], facts)
    return judge(run, rules, [*warnings, *failed, *run.warnings, *partial], ctx)


def _more(count: int) -> str:
    return f" (and {count} more)" if count else ""
