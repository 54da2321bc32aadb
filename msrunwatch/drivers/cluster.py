"""`msrunwatch triage FACTS...`: one verdict over every node's facts.

Facts files, directories of them and `-` may be mixed with log directories read here.
The merge (read.nodefacts) puts every node on the scheduler's clock and keys processes by
(host, pid); the judge is the one `triage DIR` runs. A node that sent nothing, or not all
of its facts, is named with its ranks, and a run with such a node is never called healthy.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from msrunwatch.core.errors import InputError, UsageError
from msrunwatch.core.fileio import open_regular
from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.postmortem import with_facts_clock
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Report
from msrunwatch.judge.verdict import judge
from msrunwatch.read.facts import FileFacts
from msrunwatch.read.nodefacts import clock
from msrunwatch.read.runstate import assemble
from msrunwatch.rules.model import Rule

if TYPE_CHECKING:
    from msrunwatch.read.nodefacts.merge import Merged
    from msrunwatch.read.nodefacts.nodes import NodeFacts
    from msrunwatch.read.nodefacts.reader import FactsReader, Readable

NAMED_FACTS = (".facts.jsonl", ".facts.jsonl.gz")
"""What `facts -o DIR/` names its files."""
FACTS_NAMES = (*NAMED_FACTS, ".jsonl", ".jsonl.gz")
SNIFF = 64 << 10
"""Bytes of a line the sniff looks at; a longer line is passed over."""
SNIFF_LINES = 8
SNIFF_READ = 8 << 20
"""Bytes the sniff reads at most, long lines passed over included."""
DEFAULT_TOLERANCE = 1.0
"""Seconds two nodes' clocks may differ when the logs cannot measure it (NTP's usual
bound on a managed cluster)."""


def _head(path: Path) -> bytes:
    """The first lines of a file (unpacked), for the sniff; what could not be read is left
    out."""
    kept: list[bytes] = []
    try:
        with path.open("rb") as raw:
            if not path.name.endswith(".gz"):
                return _first_lines(raw, kept)
            import gzip
            import zlib

            try:
                with gzip.GzipFile(fileobj=raw) as unzipped:
                    return _first_lines(unzipped, kept)
            except (EOFError, zlib.error, gzip.BadGzipFile):
                return b"".join(kept)  # a damaged tail: the lines before it still count
    except OSError:
        return b"".join(kept)


def _first_lines(fh: Readable, kept: list[bytes]) -> bytes:
    """Up to SNIFF_LINES lines of at most SNIFF bytes, a longer one passed over as the
    reader passes over lines too long to be records: one huge or garbled first line must
    not hide the facts after it. SNIFF_READ bytes at most are read."""
    read, skipping = 0, False
    while len(kept) < SNIFF_LINES and read < SNIFF_READ:
        line = fh.readline(SNIFF)
        if not line:
            break
        read += len(line)
        cut = len(line) == SNIFF and not line.endswith(b"\n")
        if not skipping and not cut:
            kept.append(line)
        skipping = cut
    return b"".join(kept)


def is_facts(head: bytes) -> bool:
    """Whether a file's first lines are facts (the reader, with its JSON and gzip, is
    imported only when a target has a file to sniff: `triage DIR` of logs needs none)."""
    from msrunwatch.read.nodefacts.reader import is_facts as sniffed

    return sniffed(head)


def facts_files(target: str) -> list[str] | None:
    """The facts files a target names (a facts file, or a directory holding some at its
    top), None when it holds none (then it is read as logs)."""
    path = Path(target)
    if path.is_file():
        return [target] if is_facts(_head(path)) else None
    if not path.is_dir():
        return None
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    found = [str(path / n) for n in names if n.endswith(FACTS_NAMES) and (path / n).is_file()]
    sniffed = {f for f in found if is_facts(_head(Path(f)))}
    if not sniffed:
        return None
    # named as facts but not starting as facts (torn, garbled): read too, so that what
    # cannot be read is named as left out, never skipped in silence
    return [f for f in found if f in sniffed or f.endswith(NAMED_FACTS)]


MAX_HOSTS_BYTES = 1 << 20


def expected_hosts(path: str | None) -> list[str]:
    """The hosts a job runs on, one per line (`scontrol show hostnames`; a `:port` is
    dropped, `#` starts a comment): each is named when it sent no facts."""
    if not path:
        return []
    try:
        with open(open_regular(path), "rb") as fh:
            data = fh.read(MAX_HOSTS_BYTES)
    except OSError as exc:
        raise UsageError(f"--expect-hosts {path}: cannot read: {exc.strerror or exc}") from None
    hosts = []
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        host = line.rsplit(":", 1)[0] if line.count(":") == 1 else line
        if host and len(host) <= 255 and not any(c.isspace() for c in host):
            hosts.append(host)
    if not hosts:
        raise UsageError(f"--expect-hosts {path}: names no host (one per line)")
    return hosts


def has_facts(targets: Sequence[str]) -> bool:
    return any(facts_files(t) is not None for t in targets)


def read_targets(targets: Sequence[str]) -> tuple[FactsReader, list[str], list[str]]:
    """Facts read from every facts target; the other targets (log directories); what
    could not be read."""
    from msrunwatch.read.nodefacts.reader import FactsReader

    reader = FactsReader()
    logs, failed = [], []
    for target in targets:
        found = facts_files(target)
        if found is None:
            logs.append(target)
            continue
        for path in found:
            try:
                reader.read_path(path)
            except OSError as exc:
                failed.append(f"could not read {path}: {exc.strerror or exc}")
    return reader, logs, failed


def merged(
    targets: Sequence[str],
    rules: Sequence[Rule],
    local: Sequence[FileFacts],
    reader: FactsReader,
    tolerance: float,
    expected: Sequence[str] = (),
) -> Merged:
    from msrunwatch.read.nodefacts.merge import merge  # facts only: `triage DIR` needs none
    from msrunwatch.read.nodefacts.nodes import collect
    from msrunwatch.read.nodefacts.write import rules_digest

    collected = collect(reader.streams.values())
    files = [f for node in collected.nodes for f in node.files] + list(local)
    if not any(f.error is None for f in files):  # nodes may have come, with no log readable
        shown = "; ".join(reader.problems.lines()[:2]) or _no_logs(collected.nodes, files)
        raise InputError(f"no facts could be read from {', '.join(targets)}: {shown}")
    return merge(collected, local, tolerance, rules_digest(rules), expected)


def _no_logs(nodes: Sequence[NodeFacts], files: Sequence[FileFacts]) -> str:
    """Why there is nothing to judge when no record was refused."""
    from msrunwatch.read.nodefacts.nodes import names

    if files:
        return f"none of the {len(files):,} logs they name could be read"
    if nodes:
        return f"{names([n.name for n in nodes])} sent no facts of any log"
    return "no facts records"


def local_clocks(
    facts: Sequence[FileFacts], tolerance: float
) -> tuple[list[FileFacts], dict[tuple[str, str], tuple[str, float, bool]] | None]:
    """Logs of several hosts read here (node directories copied to one place): when the
    registrations measure the clocks of at least two hosts, the times of a host whose clock
    is measurably off the scheduler's (its interval excludes 0) are moved onto it, and each
    file gets its clock's uncertainty for the judge's ties. Times are shown as logged where
    the clocks agree, and the logs of one host are left as they are."""
    table = clock.registrations(facts)
    clocks = clock.measure(facts, tolerance)
    if len(clocks.offsets) < 2:
        return list(facts), None
    moved, errors = [], {}
    for f in facts:
        domain = clock.domain_of(f, table)
        offset = clocks.offsets.get(domain)
        off = offset is not None and not offset.low <= 0.0 <= offset.high
        moved.append(clock.shifted(f, clocks.shift(domain)) if off else f)
        errors[(f.log_dir, f.path)] = (domain, clocks.error(domain), clocks.measured(domain))
    return moved, errors


def judged(
    log_dirs: Sequence[str],
    rules: Sequence[Rule],
    view: Merged,
    notes: Sequence[str],
    ctx: Context | None,
    post: PostMortem | None = None,
) -> Report:
    """The same judge as `triage DIR`, over every node, with what only a cluster knows;
    `post`: judged post mortem, as at the facts' collection (drivers.postmortem)."""
    run = assemble(log_dirs, view.files)
    ctx = replace(ctx or Context(), clocks=view.clock_errors, blind=view.blind)
    if post is not None:
        ctx = with_facts_clock(ctx, post, run, view.quiet_when_collected)
    partial = [f"{w}" for f in view.files for w in f.warnings]
    warnings = [*notes, *view.warnings, *run.warnings, *partial]
    report = judge(run, rules, warnings, ctx)
    from msrunwatch.read.nodefacts.nodes import COMPLETE

    incomplete = any(n.state != COMPLETE for n in view.nodes)
    outcome = "unknown" if report.outcome == "ok" and incomplete else report.outcome
    return replace(
        report,
        outcome=outcome,
        nodes=view.nodes,
        clocks=view.dir_clocks,
        clock_reference=view.reference,
    )
