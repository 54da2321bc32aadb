"""The post-mortem driver: find the logs, read them (drivers.reading: in parallel when
large), judge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from msrunwatch.core.errors import InputError
from msrunwatch.drivers import cluster
from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.postmortem import last_written, with_clock
from msrunwatch.drivers.reading import Progress, plan, scan_all, scan_file, usable_cpus
from msrunwatch.drivers.runs import one_run_each
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Report
from msrunwatch.judge.verdict import judge
from msrunwatch.read.discover import LogFile, console_file, discover_target, distinct
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.runstate import assemble
from msrunwatch.rules.model import Rule

__all__ = ["Progress", "find_logs", "plan", "scan_all", "scan_file", "triage", "usable_cpus"]


def find_logs(
    targets: Sequence[str], consoles: Sequence[str] = (), warnings: list[str] | None = None
) -> list[LogFile]:
    """Every log file of the targets, plus msrun console files given explicitly; what was
    skipped (unreadable directories, FIFOs, devices) is added to warnings. With no worker
    log at all, msrun's console is all there is of the workers (it tails their output with
    --join): it is read as a worker's log too."""
    files = [f for target in targets for f in discover_target(target, warnings)]
    files.extend(console_file(c) for c in consoles)
    files = distinct(files, warnings if warnings is not None else [])
    if not any(f.role is FileRole.WORKER for f in files):
        files = [
            replace(f, role=FileRole.WORKER) if f.role is FileRole.CONSOLE else f for f in files
        ]
    return files


def triage(
    targets: Sequence[str],
    rules: Sequence[Rule],
    consoles: Sequence[str] = (),
    progress: Progress | None = None,
    ctx: Context | None = None,
    clock_tolerance: float = cluster.DEFAULT_TOLERANCE,
    expected_hosts: Sequence[str] = (),
    post: PostMortem | None = None,
) -> Report:
    """Read every log of the targets and return the verdict; facts files from other nodes
    among the targets make it the verdict over all of them (drivers.cluster), naming the
    expected hosts that sent none. `post`: judge whether the run is over by the clock
    (drivers.postmortem); None: it is not consulted."""
    if cluster.has_facts(targets):
        facts_of = (consoles, progress, ctx, clock_tolerance, expected_hosts, post)
        return _triage_facts(targets, rules, *facts_of)
    warnings: list[str] = []
    files = find_logs(targets, consoles, warnings)
    facts = scan_all(files, rules, progress)
    one_run_each(facts)
    written = last_written(post, files)
    del files  # before the run is assembled (100,000 LogFiles are 56 MiB of a large check's peak)
    failed = [f"could not read {f.error}" for f in facts if f.error]
    if facts and len(failed) == len(facts):
        raise InputError(f"no log could be read: {failed[0]}" + _more(len(failed) - 1))
    partial = [w for f in facts for w in f.warnings]
    facts, clocks = cluster.local_clocks(facts, clock_tolerance)  # several hosts' logs
    run = assemble([*targets], facts)
    notes = [*warnings, *failed, *encoding_warnings(facts), *run.warnings, *partial]
    if post is not None:
        ctx = with_clock(ctx or Context(), post, run, written)
    return judge(run, rules, notes, replace(ctx or Context(), clocks=clocks) if clocks else ctx)


def _triage_facts(
    targets: Sequence[str],
    rules: Sequence[Rule],
    consoles: Sequence[str],
    progress: Progress | None,
    ctx: Context | None,
    tolerance: float,
    expected: Sequence[str] = (),
    post: PostMortem | None = None,
) -> Report:
    """Facts of other nodes, with any log directories given beside them read here."""
    reader, logs, failed = cluster.read_targets(targets)
    warnings: list[str] = []
    files = find_logs(logs, consoles, warnings) if logs or consoles else []
    local = scan_all(files, rules, progress)
    view = cluster.merged(targets, rules, local, reader, tolerance, expected)
    problems = [f"facts: {p}" for p in reader.problems.lines()]
    notes = [*failed, *problems, *warnings, *encoding_warnings(local)]
    return cluster.judged(targets, rules, view, notes, ctx, post)


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
