"""The snapshots held, merged and judged as `triage FACTS...` judges them, live.

What only a live view adds: how long each file has been quiet, from its node's own clock
(the snapshot says when each file last grew and when it was taken; the central view adds
the time since, measured on its own clock: no two machines' clocks are compared), and the
node states. A node that is blind or stale is never healthy: its ranks still running when
last seen are shown `unknown` with why, their quiet time is not known (so they are never
taken for the silent rank), and what their last snapshot showed is kept as evidence. A node
no snapshot ever came from has its ranks (from the scheduler's table) never named silent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from msrunwatch.drivers.cluster import judged
from msrunwatch.drivers.options import PostMortem
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import RankReport, Report, Status
from msrunwatch.live.cluster.feeds import BLIND, ENDED, MISSING, STALE, FeedState, Held
from msrunwatch.read.nodefacts.merge import Merged, NodeView, merge
from msrunwatch.read.nodefacts.nodes import collect
from msrunwatch.read.nodefacts.write import rules_digest
from msrunwatch.rules.model import Rule

ACTIVE = frozenset(
    {Status.STARTING, Status.COMPILING, Status.TRAINING, Status.STALLED, Status.WAITING}
)
UNSEEN = frozenset({BLIND, STALE, MISSING})
"""States in which what a node's ranks do now is not known."""


@dataclass(frozen=True)
class Options:
    """How the central view judges."""

    rules: Sequence[Rule]
    tolerance: float = 1.0
    stall_after_s: float = 120.0
    expected: Sequence[str] = ()


@dataclass(frozen=True)
class Judged:
    report: Report
    silence: dict[int, float]


def _short(host: str) -> str:
    return host.split(".", 1)[0].lower()


def _current(states: Sequence[FeedState], now: float) -> Iterator[tuple[Held, float]]:
    """Each snapshot held of a node seen now, with how old it is now."""
    for state in states:
        held = state.held
        if held is not None and state.state(now)[0] not in UNSEEN:
            yield held, held.age_s + max(now - held.received, 0.0)


def _quiet(states: Sequence[FeedState], now: float) -> dict[tuple[str, str], float]:
    """(log_dir as merged, path) -> seconds since the file last grew, for nodes whose
    snapshots are current; none for the others (not known)."""
    out: dict[tuple[str, str], float] = {}
    for held, age in _current(states, now):
        wall = held.live.get("wall_s")
        if not isinstance(wall, (int, float)):
            continue
        for stream in held.streams:
            for entry in stream.files.values():
                if entry.grew is not None:
                    key = (f"{stream.host}:{entry.facts.log_dir}", entry.facts.path)
                    out[key] = max(wall - entry.grew, 0.0) + age
    return out


def _log_now(states: Sequence[FeedState], merged: Merged, now: float) -> float | None:
    """Now on the scheduler's clock, from the freshest current snapshot and its node's
    measured offset (the logs' own clock when none is measured)."""
    offsets = {v.name: v.offset_s or 0.0 for v in merged.nodes}
    best: tuple[float, float] | None = None
    for held, age in _current(states, now):
        log_s = held.live.get("log_s")
        if not isinstance(log_s, (int, float)):
            continue
        host = held.hosts[0] if held.hosts else ""
        guess = log_s + age - offsets.get(host, 0.0)
        if best is None or age < best[0]:
            best = (age, guess)
    return None if best is None else best[1]


def _live_views(
    views: Sequence[NodeView], states: Sequence[FeedState], now: float
) -> list[NodeView]:
    """Each node with its live state; feeds that never answered are matched to the hosts
    the scheduler listed, or shown under their own name."""
    by_host: dict[str, FeedState] = {}
    for state in states:
        for host in state.held.hosts if state.held is not None else ():
            by_host[host] = state
    silent = {_short(s.feed.host): s for s in states if s.held is None and s.feed.host}
    out = []
    for view in views:
        found = by_host.get(view.name) or silent.pop(_short(view.name), None)
        if found is None:
            out.append(replace(view, live=MISSING))
            continue
        live, why = found.state(now)
        age = found.age(now) if found.held is not None else None
        out.append(replace(view, live=live, why=why or view.why, seen_s=age))
    named = {_short(v.name) for v in views}
    for state in states:
        if state.held is None and _short(state.feed.host or state.feed.label) not in named:
            live, why = state.state(now)
            out.append(NodeView(state.feed.label, MISSING, why, (), live=live))
    return out


def _done_nodes(report: Report, nodes: Sequence[NodeView]) -> list[NodeView]:
    """Blind or stale nodes whose ranks had all ended when last seen are `ended`: nothing
    more will happen there."""
    status = {r.rank: r.status for r in report.ranks}
    out = []
    for node in nodes:
        done = node.ranks and not any(status.get(r) in ACTIVE for r in node.ranks)
        if node.live in (BLIND, STALE) and done:
            node = replace(node, live=ENDED, why=f"{node.why}; its ranks had ended")
        out.append(node)
    return out


def _unseen(report: Report, nodes: Sequence[NodeView]) -> Report:
    """Ranks of nodes not seen now (or whose watcher stopped while they ran) are `unknown`,
    saying why."""
    status = {r.rank: r.status for r in report.ranks}
    unseen = {
        r: node
        for node in nodes
        if node.live in UNSEEN or node.live == ENDED
        for r in node.ranks
        if status.get(r) in ACTIVE
    }
    ranks = tuple(_unknown(r, unseen[r.rank]) if r.rank in unseen else r for r in report.ranks)
    return replace(report, ranks=ranks, nodes=tuple(nodes))


def _unknown(rank: RankReport, node: NodeView) -> RankReport:
    was = rank.status.value
    reason = f"node {node.name} {node.live}: {node.why} (last seen {was})"
    return replace(rank, status=Status.UNKNOWN, status_reason=reason)


def judge_view(states: Sequence[FeedState], options: Options, now: float) -> Judged:
    """One verdict over every snapshot held."""
    streams = [s for state in states if state.held is not None for s in state.held.streams]
    problems = [
        f"{state.feed.label}: {p}" for state in states if state.held for p in state.held.problems
    ]
    merged = merge(
        collect(streams), (), options.tolerance, rules_digest(options.rules), options.expected
    )
    nodes = _live_views(merged.nodes, states, now)
    quiet = _quiet(states, now)
    view = replace(merged, nodes=tuple(nodes))
    over = _quiet_since_over(states, view, quiet, options.stall_after_s, now)
    if over is not None:  # judged as `triage FACTS...` judges them at this clock
        view = replace(view, quiet_when_collected=over)
        post = PostMortem(stall_after_s=options.stall_after_s)
        ctx = Context(stall_after_s=options.stall_after_s)
        report = judged([], options.rules, view, problems, ctx, post)
    else:
        ctx = Context(
            now=_log_now(states, merged, now),
            quiet_s=quiet,
            stall_after_s=options.stall_after_s,
            caught_up=True,
        )
        report = judged([], options.rules, view, problems, ctx)
    report = _unseen(report, _done_nodes(report, nodes))
    if report.outcome == "ok" and any(n.live in UNSEEN for n in report.nodes):
        report = replace(report, outcome="unknown")
    return Judged(report, _silences(report, quiet))


def _quiet_since_over(
    states: Sequence[FeedState],
    view: Merged,
    quiet: Mapping[tuple[str, str], float],
    stall_after_s: float,
    now: float,
) -> float | None:
    """How long the run has been quiet now, when that makes it over: every node is seen,
    no file grew and no line was logged for longer than the stall threshold (its newest
    line measured on each node's own clock when its snapshot was taken, plus the
    snapshot's age). Then the view judges post mortem, as `triage` of the same facts does
    at this clock (drivers.postmortem): a live `waiting` on a run quiet for hours would be
    a verdict of its own. None: the run may still be going."""
    if view.quiet_when_collected is None or not quiet or min(quiet.values()) <= stall_after_s:
        return None
    if any(node.live in UNSEEN for node in view.nodes):
        return None
    ages = [age for _, age in _current(states, now)]
    since = view.quiet_when_collected + min(ages, default=0.0)
    return since if since > stall_after_s else None


def _silences(report: Report, quiet: Mapping[tuple[str, str], float]) -> dict[int, float]:
    return {
        r.rank: quiet[(r.log_dir, r.file)]
        for r in report.ranks
        if r.log_dir is not None and r.file is not None and (r.log_dir, r.file) in quiet
    }
