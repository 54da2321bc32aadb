"""Small formatting helpers shared by the text and Markdown reports."""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable

from msrunwatch.judge.model import Finding, Occurrence, RankReport, Report, Status
from msrunwatch.read.timestamps import clock, iso
from msrunwatch.rules.template import rank_name, ranks_phrase
from msrunwatch.rules.vocab import Severity

ANSI = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
    "bold": "1",
    "dim": "2",
}
STATUS_COLOR = {
    "failed": "red",
    "killed": "magenta",
    "stopped": "magenta",
    "timed-out": "yellow",
    "stalled": "yellow",
    "finished": "green",
    "training": "cyan",
    "compiling": "cyan",
}
OUTCOME_COLOR = {"failed": "red", "ok": "green", "running": "cyan", "unknown": "yellow"}
SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "dim"}


class Style:
    """ANSI colour when enabled, plain text otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, color: str | None) -> str:
        if not self.enabled or not color:
            return text
        return f"\x1b[{ANSI[color]}m{text}\x1b[0m"


def where(o: Occurrence | None) -> str:
    """`dir/file:line` as a user would open it."""
    if o is None or o.file is None:
        return "(no log)"
    return where_path(o.log_dir, o.file, o.line)


def when(seconds: float | None, exact: bool) -> str:
    """`05:16:37.900`, or `~05:16:37.900` when dated by the line before it."""
    if seconds is None:
        return ""
    return clock(seconds) if exact else "~" + clock(seconds)


UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
"""Binary units, as MindSpore's own memory lines count (its "MB" is MiB)."""
_NUMBER = r"\d{1,30}(?:\.\d{1,12})?"
_SIZES = re.compile(rf"\b({_NUMBER}(?:, {_NUMBER})*) ?(B|MB|MiB|GB)\b")
"""A size in a message, or a list of sizes sharing one unit (`43509, 54999 MB`)."""
_SCALE = {"B": 1, "MB": 1 << 20, "MiB": 1 << 20, "GB": 1 << 30}
"""Bytes per unit as MindSpore means them: its MB and GB are MiB and GiB."""


def size(nbytes: float) -> str:
    """`512 B`, `6.1 KiB`, `64.0 GiB`: a byte count as a person reads it."""
    value = float(nbytes)
    for unit in UNITS:
        if abs(value) < 1024 or unit == UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def mib(value: float | None) -> str:
    """A size MindSpore printed in MiB (the JSON's `_mb` fields): `820 MiB`, `57.4 GiB`."""
    if value is None:
        return "-"
    return f"{value:.0f} MiB" if abs(value) < 1024 else size(value * 1024 * 1024)


def human_sizes(message: str) -> str:
    """Sizes in a rule's message (`68719476736 B`, `11576 MB`, `59.8 GB`, `43509, 54999 MB`)
    in one style, MiB or GiB (`64.0 GiB`, `11.3 GiB`; MindSpore's MB and GB are MiB and GiB);
    the JSON report keeps the message as written. Small byte counts (`512 B`) stay."""
    return _SIZES.sub(_sized, message)


def _sized(m: re.Match[str]) -> str:
    unit = m[2]
    if unit == "B" and ("," in m[1] or "." in m[1] or len(m[1]) < 4):
        return m[0]
    out = []
    for text in m[1].split(", "):
        value = float(text) * _SCALE[unit]
        if not math.isfinite(value):
            return m[0]  # a forged figure of 30 digits: left as written
        whole_mib = unit != "B" and (value >= 1 << 20 or value == 0)
        out.append(mib(value / (1 << 20)) if whole_mib else size(value))
    return ", ".join(out)


def headroom(report: Report) -> str:
    """The rank closest to its usable memory: `peak 42.5 GiB of 56.8 GiB usable on rank 7:
    14.3 GiB headroom (25%)`; empty when no rank logged its memory."""
    best: tuple[float, RankReport] | None = None
    for r in report.ranks:
        m = r.memory
        limit = (m.used_mb or m.device_mb) if m else None
        if m is None or not limit or m.peak_actual_mb is None:
            continue
        ratio = m.peak_actual_mb / limit
        if best is None or ratio > best[0]:
            best = (ratio, r)
    if best is None:
        return ""
    ratio, r = best
    assert r.memory is not None
    limit = r.memory.used_mb or r.memory.device_mb or 0
    spare = limit - (r.memory.peak_actual_mb or 0)
    room = f"{mib(spare)} headroom ({1 - ratio:.0%})" if spare >= 0 else f"{mib(-spare)} over it"
    return (
        f"peak {mib(r.memory.peak_actual_mb)} of {mib(limit)} usable on {rank_name(r.rank)}: {room}"
    )


def count(n: int, noun: str) -> str:
    """`1 rank`, `2 ranks`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def ranks_text(ranks: Iterable[int]) -> str:
    """`rank 1`, `ranks 0-3`, `the log` (a log whose rank is not known): template.ranks_phrase."""
    items = list(ranks)
    return ranks_phrase(items) if items else "no rank"


def rank_cell(r: RankReport) -> str:
    """The table's RANK cell: the number, or for a log whose rank is not known the log's own
    name (`<stdin>`, `train.log`), never `-1`."""
    return str(r.rank) if r.rank >= 0 else os.path.basename(r.file or "") or "?"


def megabytes(value: int | None) -> str:
    """A MiB figure as a person reads it (see `mib`)."""
    return mib(value)


def loss(value: float | None) -> str:
    if value is None:
        return "-"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.4g}"


def compile_seconds(r: RankReport) -> str:
    c = r.compile
    if c is None or not (c.total_ms or c.count or c.in_progress):
        return "-"
    if c.in_progress and not c.total_ms:
        return "running"
    text = f"{c.total_ms / 1000:.2f}s"
    return f"{c.count}x {text}" if c.count > 1 else text


def step(r: RankReport) -> str:
    return "-" if r.progress is None else str(r.progress.step)


def first_error(r: RankReport) -> str:
    e = r.first_error
    if e is None:
        return "-"
    return f"{e.category} {where_path(r.log_dir, e.file, e.line)}"


def log_times(report: Report) -> list[float]:
    """The log times the report covers: the ranks' first and last lines, and the times of
    the lines its findings cite (the scheduler's and msrun's among them)."""
    times = [t for r in report.ranks for t in (r.first_time, r.last_time) if t is not None]
    return times + [o.time for f in report.findings for o in f.occurrences if o.time is not None]


def time_span(report: Report) -> str:
    """The log times the report covers (log_times: a new user saw the root cause's time
    after the range's end when only the ranks' logs counted)."""
    times = log_times(report)
    if not times:
        return ""
    start = iso(min(times)) or ""
    return f"{start[:10]} {clock(min(times))} - {clock(max(times))}"


def headline(report: Report) -> str:
    """One sentence: the verdict."""
    c = report.root_cause
    counts: dict[str, int] = {}
    for r in report.ranks:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    if c is not None:
        return f"{cause_subject(report)} {cause_verb(report)}: {c.category} ({summary})"
    if report.outcome == "ok":
        return f"no faults{_warned(report)}; {summary}"
    if report.outcome == "running":
        return f"no faults so far{_warned(report)}; {summary}"
    return summary or "no ranks found"


def _warned(report: Report) -> str:
    """The warnings beside a verdict without faults, by category: a NaN loss on every step
    of a run that goes on is no fault (loss scaling skips such steps), but `no faults` alone
    hides it above the findings."""
    warned = [f for f in report.findings if f.severity is Severity.WARNING]
    if not warned:
        return ""
    kinds = ", ".join(sorted({f.category for f in warned}))
    return f", {len(warned)} warning{'s' if len(warned) != 1 else ''} ({kinds})"


def cause_subject(report: Report) -> str:
    """Who the root cause is about: its ranks, or the job (the scheduler's or msrun's fault
    about the job itself names no rank)."""
    c = report.root_cause
    return ranks_text(c.ranks) if c and c.ranks else "the job"


ONE_RANK_VERB = {
    Status.FAILED: "failed first",
    Status.KILLED: "was killed first",
    Status.TIMED_OUT: "timed out first",
    Status.STALLED: "hung first",
    Status.STOPPED: "stopped first",
    Status.FINISHED: "finished, with",
    Status.UNKNOWN: "left no log",
}
"""What the root cause's one rank did, in the words of its status (the table's)."""
RANKS_VERB = {
    Status.FAILED: "failed",
    Status.KILLED: "were killed",
    Status.TIMED_OUT: "timed out",
    Status.STALLED: "hung",
    Status.STOPPED: "stopped",
    Status.FINISHED: "finished, with",
    Status.UNKNOWN: "left no log",
}
"""What the root cause's ranks did when they all have one status."""
CATEGORY_VERB = {"early-exit": "ended before the others"}
"""What the root cause's ranks did, when the category says it better than their status:
a rank that left early is `finished` in the table, and `finished, with: early-exit` read
as if it had finished its work."""
DOWN = frozenset({Status.FAILED, Status.KILLED, Status.TIMED_OUT, Status.STALLED, Status.STOPPED})


def cause_verb(report: Report) -> str:
    """What the root-cause ranks did, in the words of their status, so the headline never
    says `failed` above a count with no failed rank: `was killed first`, `hung first`,
    `timed out`, `finished, with` (a normal end, yet the fault: over budget), or what the
    category says they did (`ended before the others`: CATEGORY_VERB),
    `left no log` (the job expected them; what they did is not in these logs); ranks of
    several such statuses `went down`; a rank still at work `showed first` the fault."""
    c = report.root_cause
    ranks = set(c.ranks) if c else set()
    named = {r.status for r in report.ranks if r.rank in ranks}
    if not ranks:
        return "failed"  # the job: the scheduler's or msrun's fault about the job itself
    if c is not None and c.category in CATEGORY_VERB:
        return CATEGORY_VERB[c.category]
    if len(named) == 1:
        (status,) = named
        verbs = ONE_RANK_VERB if len(ranks) == 1 else RANKS_VERB
        if status in verbs:
            return _alone(verbs[status], report)
    if named and named <= DOWN:
        return "went down"
    return _alone("showed first", report) if len(ranks) == 1 else "showed"


def _alone(verb: str, report: Report) -> str:
    """`failed`, not `failed first`, when the report has one log: first of one says there
    were others (a log piped to `triage -`, one worker's log)."""
    return verb.removesuffix(" first") if len(report.ranks) == 1 else verb


def join_path(log_dir: str | None, file: str) -> str:
    """`dir/file`, or the target itself when the user gave that one file (its log directory
    is then the file, and `worker_1.log/worker_1.log` does not exist)."""
    if not log_dir:
        return file
    if log_dir == file or log_dir.endswith(("/" + file, os.sep + file)):
        return log_dir
    return os.path.join(log_dir, file)


def where_path(log_dir: str | None, file: str | None, line: int | None) -> str:
    """`dir/file:line` from parts."""
    if file is None:
        return "-"
    path = join_path(log_dir, file)
    return f"{path}:{line}" if line else path


def about(f: Finding) -> str:
    """Whom a finding is about: the root cause's ranks when it was seen on others (`rank 1
    (evidence on rank 0)`), else where it was seen (seen_on)."""
    if f.cause_ranks:
        return f"{ranks_text(f.cause_ranks)} (evidence on {seen_on(f)})"
    return seen_on(f)


def seen_on(f: Finding) -> str:
    """Where a finding was seen: its ranks, else the config it points at (no log
    directory), else the scheduler or msrun, else the whole run."""
    if f.ranks:
        return ranks_text(f.ranks)
    first = f.first
    if first is None or first.file is None:
        return "the run"
    return f"config {os.path.basename(first.file)}" if first.log_dir is None else "scheduler/msrun"


def nodes(report: Report) -> str:
    """Facts from several nodes: how many came whole, and whose clock the times are on."""
    counts = Counter(n.state for n in report.nodes)
    states = ", ".join(f"{counts[s]} {s}" for s in ("complete", "partial", "missing") if counts[s])
    measured = [n for n in report.nodes if n.brackets]
    live = live_states(report)
    # the cluster view: `2 reporting (facts: 2 complete)`, the count said once
    text = f"{live} (facts: {states})" if live else f"{len(report.nodes)} ({states})"
    if report.clock_reference:
        text += f"; times on {report.clock_reference}'s clock (the scheduler's)"
    if measured:
        worst = max(n.error_s or 0.0 for n in measured)
        text += f", {len(measured)} node clocks measured (within ±{worst * 1000:,.1f} ms)"
    return text


LIVE_ORDER = ("blind", "stale", "missing", "reporting", "ended")


def live_nodes(report: Report, most: int = 3) -> str:
    """The cluster view's nodes: `256 nodes: 254 reporting, 1 stale (node-003), 1 blind
    (node-137)`, the worst first, naming the nodes not seen now; empty outside it."""
    states = live_states(report, most)
    if not states:
        return ""
    shown = sum(n.live is not None for n in report.nodes)
    return f"{shown:,} node{'' if shown == 1 else 's'}: {states}"


def live_states(report: Report, most: int = 3) -> str:
    """`254 reporting, 1 stale (node-003), 1 blind (node-137)` (live_nodes)."""
    states = [n.live for n in report.nodes if n.live is not None]
    if not states:
        return ""
    counts = Counter(states)
    parts = []
    for state in LIVE_ORDER:
        if not counts[state]:
            continue
        text = f"{counts[state]:,} {state}"
        if state in ("blind", "stale", "missing"):
            names = [n.name for n in report.nodes if n.live == state]
            more = f" +{len(names) - most}" if len(names) > most else ""
            text += f" ({', '.join(names[:most])}{more})"
        parts.append(text)
    return ", ".join(parts)
