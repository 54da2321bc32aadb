"""Many nodes' facts as one run on one clock, ready for the same judge as one node's.

Each node's files keep their host (processes are (host, pid)) and get the node in their
directory's name (`node-137:/data/msrun_log`), every time is moved onto the scheduler's
clock, and each directory carries how uncertain its times are after that, so the judge
can declare a tie where the clocks cannot tell the order. Nodes the scheduler registered
workers on but that sent no facts, or partial ones, are named with their ranks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from msrunwatch.read.facts import FileFacts, FileRole, Registration
from msrunwatch.read.nodefacts import clock
from msrunwatch.read.nodefacts.nodes import (
    COMPLETE,
    MISSING,
    Collected,
    NodeFacts,
    names,
    quiet_when_collected,
)
from msrunwatch.rules.template import rank_ranges


@dataclass(frozen=True)
class NodeView:
    """One node as the report shows it."""

    name: str
    state: str
    """complete, partial or missing."""
    why: str
    ranks: tuple[int, ...]
    offset_s: float | None = None
    """Its clock minus the scheduler's, measured; None when not measured."""
    error_s: float | None = None
    """How far its corrected times may be off (the tolerance when not measured)."""
    brackets: int = 0
    """Workers whose registration gave the offset."""
    bracket_s: tuple[float, float] | None = None
    """The interval their registrations put the offset in (for the scheduler's own node
    too, whose offset is 0 by definition: a check of the method)."""
    live: str | None = None
    """The live cluster view's word on the node: reporting, stale, blind or ended (None
    after the fact)."""
    seen_s: float | None = None
    """Live: seconds since its snapshot was taken (as of the verdict), when one came."""


@dataclass(frozen=True)
class Merged:
    files: tuple[FileFacts, ...]
    nodes: tuple[NodeView, ...]
    clock_errors: Mapping[tuple[str, str], tuple[str, float, bool]]
    """(log_dir, path) as the merged files name them -> (clock domain, seconds of
    uncertainty, whether it was measured). Per file: a shared directory holds several
    hosts' files."""
    dir_clocks: Mapping[tuple[str, str], tuple[float | None, float]]
    """(log_dir, path) -> (its clock minus the scheduler's, measured or None; uncertainty)."""
    reference: str | None
    warnings: tuple[str, ...]
    blind: frozenset[int] = frozenset()
    """Ranks of nodes that sent no or partial facts, whose files did not come."""
    quiet_when_collected: float | None = None
    """Seconds every node had been quiet when its facts were collected (nodes.py); None
    when logs read here are merged too, or a node does not say when it was collected."""


def _short(host: str) -> str:
    return host.split(".", 1)[0].lower()


def _renamed(f: FileFacts) -> FileFacts:
    """Files from a node name it in their directory: two nodes' `msrun_log` stay apart."""
    return f if f.host is None else replace(f, log_dir=f"{f.host}:{f.log_dir}")


def _table_hosts(table: Mapping[str, Registration]) -> dict[str, list[int]]:
    hosts: dict[str, list[int]] = {}
    for r in table.values():
        hosts.setdefault(r.host, []).append(r.rank)
    return hosts


def _file_ranks(files: Sequence[FileFacts]) -> set[int]:
    return {f.rank for f in files if f.role is FileRole.WORKER and f.rank is not None}


def _registered_on(node: NodeFacts, table: Mapping[str, Registration]) -> set[str]:
    """The hosts the scheduler registered this node's workers on (by their node ids)."""
    keys = (clock.node_key(f) for f in node.files if f.role is FileRole.WORKER)
    return {table[k].host for k in keys if k is not None and k in table}


def _claims(nodes: Sequence[NodeFacts], table: Mapping[str, Registration]) -> list[str]:
    """Nodes whose files hold ranks the scheduler registered on another node that sent
    facts of its own (or on several hosts)."""
    names = {_short(n.name): n.name for n in nodes}
    out = []
    for node in nodes:
        hosts = _registered_on(node, table)
        others = sorted(h for h in hosts if _short(h) != _short(node.name) and _short(h) in names)
        if others or len(hosts) > 1:
            shown = ", ".join(sorted(hosts))
            out.append(f"{node.name} sent ranks the scheduler registered on {shown}")
    return out


def _views(
    collected: Collected,
    table: Mapping[str, Registration],
    clocks: clock.Clocks,
    expected: Sequence[str] = (),
) -> list[NodeView]:
    by_host = _table_hosts(table)
    shorts = {_short(h): h for h in by_host}
    views = []
    covered: Counter[str] = Counter()
    listed: dict[str, set[str]] = {}
    for node in collected.nodes:
        hosts = _registered_on(node, table)
        named = shorts.get(_short(node.name))
        listed[node.name] = {named} if named is not None else hosts if len(hosts) == 1 else set()
        covered.update(listed[node.name] | hosts)
    for node in collected.nodes:
        ranks: set[int] = _file_ranks(node.files)
        for host in listed[node.name]:
            if covered[host] == 1:  # the node alone holds that host's ranks
                ranks |= set(by_host[host])
        offset = clocks.offsets.get(node.name)
        views.append(
            NodeView(
                node.name,
                node.state,
                node.why,
                tuple(sorted(ranks)),
                clocks.offset(node.name),
                clocks.error(node.name) if node.shards is None else None,
                offset.ranks if offset is not None else 0,
                (offset.low, offset.high) if offset is not None else None,
            )
        )
    for host, listed_ranks in sorted(by_host.items()):
        if host not in covered:
            missing = tuple(sorted(listed_ranks))
            views.append(NodeView(host, MISSING, "no facts from this node", missing))
    known = {_short(v.name) for v in views} | {_short(h) for h in covered}
    for host in sorted(set(expected)):
        if _short(host) not in known:
            known.add(_short(host))
            views.append(NodeView(host, MISSING, "no facts from this node (expected)", ()))
    return views


def merge(
    collected: Collected,
    local: Sequence[FileFacts],
    tolerance: float,
    digest: str,
    expected: Sequence[str] = (),
) -> Merged:
    """Every node's files on the scheduler's clock, with what the judge and report need;
    `expected`: hosts that should have sent facts (named when they did not, even when no
    scheduler's table lists them)."""
    files = [f for node in collected.nodes for f in node.files] + list(local)
    table = clock.registrations(files)
    clocks = clock.measure(files, tolerance)
    moved = []
    errors: dict[tuple[str, str], tuple[str, float, bool]] = {}
    offsets: dict[tuple[str, str], tuple[float | None, float]] = {}
    for f in files:
        domain = clock.domain_of(f, table)
        g = _renamed(clock.shifted(f, clocks.shift(domain)))
        key = (g.log_dir, g.path)
        errors[key] = (domain, clocks.error(domain), clocks.measured(domain))
        offsets[key] = (clocks.offset(domain), clocks.error(domain))
        moved.append(g)
    warnings = [*collected.warnings, *_claims(collected.nodes, table), *_clock_notes(clocks)]
    other = sorted(
        {n.name for n in collected.nodes if n.rules_digests and digest not in n.rules_digests}
    )
    if other:
        warnings.append(
            f"facts of {names(other)} were extracted with another rule set: they are judged "
            "as they are (hits of rules not known here are left out, rules added since did "
            "not read their logs)"
        )
    views = _with_timeouts(_views(collected, table, clocks, expected), files, table)
    lacking = [v for v in views if v.state != COMPLETE]
    warnings.extend(_lacking(lacking))
    seen = _file_ranks(moved)
    blind = frozenset(r for v in lacking for r in v.ranks if r not in seen)
    quiet = None if local else quiet_when_collected(collected.nodes)
    return Merged(
        tuple(moved), tuple(views), errors, offsets, clocks.reference, tuple(warnings), blind, quiet
    )


SHOWN_LACKING = 10
"""Nodes without all their facts named one warning each; past that, the first few are and
one more warning counts the rest (10^6 forged nodes printed 65,536 warnings). Every node
is still in the report's `nodes`."""


def _lacking(views: Sequence[NodeView]) -> list[str]:
    """A warning per node that is partial or missing, the rest counted past SHOWN_LACKING."""
    shown = views if len(views) <= SHOWN_LACKING else views[: SHOWN_LACKING // 2]
    out = [f"node {v.name} ({_ranks(v.ranks)}): {v.state}, {v.why}" for v in shown]
    rest = views[len(shown) :]
    if rest:
        states = Counter(v.state for v in rest)
        counted = ", ".join(f"{n:,} {state}" for state, n in sorted(states.items()))
        out.append(
            f"{len(rest):,} more nodes without all their facts ({counted}): "
            f"{names([v.name for v in rest], most=5)} (every node is in the JSON report's nodes)"
        )
    return out


def _with_timeouts(
    views: list[NodeView], files: Sequence[FileFacts], table: Mapping[str, Registration]
) -> list[NodeView]:
    """A node without its facts gets the scheduler's word on it: the ranks it timed out."""
    lost: dict[str, list[int]] = {}
    for f in files:
        for node, _ in f.timed_out_nodes:
            registered = table.get(node)
            if registered is not None:
                lost.setdefault(_short(registered.host), []).append(registered.rank)
    out = []
    for view in views:
        ranks = sorted(set(lost.get(_short(view.name), ())))
        if ranks and view.state != COMPLETE:
            view = replace(view, why=f"{view.why}; the scheduler timed out {_ranks(ranks)}")
        out.append(view)
    return out


def _clock_notes(clocks: clock.Clocks) -> list[str]:
    moved = sorted(d for d, o in clocks.offsets.items() if not o.consistent)
    if not moved:
        return []
    return [
        f"the clock of {names(moved)} moved during the run (its workers' registrations do "
        "not agree): its offset is taken as the widest of them"
    ]


def _ranks(ranks: Sequence[int]) -> str:
    if not ranks:
        return "no ranks known"
    return f"rank{'s' if len(ranks) > 1 else ''} {rank_ranges(ranks)}"
