"""Streams into nodes: each host's files once, and whether its facts are whole.

A host may send several streams (facts collected twice, a live snapshot and a final one)
and a shared directory is read by several shards: for each file the most complete copy
wins, whatever order the streams came in. A node's facts are `complete` when one of its
streams came whole (its `end`, and every record before it), `partial` otherwise; the shards
of one shared directory are complete when every shard is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from msrunwatch.read.cluster import Group
from msrunwatch.read.facts import FileFacts
from msrunwatch.read.nodefacts.reader import Stream
from msrunwatch.read.timestamps import parse_iso

COMPLETE, PARTIAL, MISSING = "complete", "partial", "missing"


@dataclass(frozen=True)
class NodeFacts:
    """What one node (or one shared directory, read in shards) sent."""

    name: str
    """The host, or `shared:<dir>` for a directory read in shards."""
    state: str
    why: str
    """What is missing, for a partial node."""
    files: tuple[FileFacts, ...]
    rules_digests: tuple[str, ...]
    tz_offset_s: int | None = None
    shards: tuple[int, int] | None = None
    """(shards received whole, shards in all) for a shared directory."""
    collected_s: float | None = None
    """When its newest stream was collected, on its logs' scale (the node's local wall-clock
    time read as UTC, as the logs' naive times are); None when no stream says when, or in
    which time zone."""


@dataclass(frozen=True)
class Collected:
    nodes: tuple[NodeFacts, ...]
    groups: tuple[Group, ...]
    warnings: tuple[str, ...]


def _files(stream: Stream, groups: dict[str, Group], shared: bool) -> list[FileFacts]:
    """The stream's files with their hits, table and groups put back."""
    out = []
    for fid, entry in sorted(stream.files.items()):
        table = stream.tables.get(fid, {})
        registrations = tuple(r for _, (_, part) in sorted(table.items()) for r in part)
        joined = tuple(groups[d] for _, d in entry.groups if d in groups)
        out.append(
            replace(
                entry.facts,
                hits=stream.hits_of(fid, entry),
                registrations=registrations or entry.facts.registrations,
                timed_out_nodes=stream.timed_out.get(fid, entry.facts.timed_out_nodes),
                groups=joined,
                host=None if shared else stream.host,
            )
        )
    return out


def _why(stream: Stream) -> str:
    if stream.end is None:
        return f"no end record ({len(stream.seen):,} records came)"
    expected = int(stream.end["records"]) + 1
    return f"{len(stream.seen):,} of {expected:,} records came"


def _completeness(streams: Sequence[Stream]) -> tuple[str, str]:
    if any(s.complete for s in streams):
        return COMPLETE, ""
    return PARTIAL, "; ".join(sorted({_why(s) for s in streams}))


def _best(copies: Iterable[tuple[Stream, FileFacts]]) -> FileFacts:
    """The most complete copy of one file: from a whole stream, the longest, then by
    stream id (so the choice never depends on the order the streams came in)."""
    _, facts = max(copies, key=lambda c: (c[0].complete, c[1].size, c[1].lines, c[0].stream))
    return facts


def _node(
    name: str, streams: Sequence[Stream], groups: dict[str, Group], shared: bool
) -> NodeFacts:
    copies: dict[tuple[str, str], list[tuple[Stream, FileFacts]]] = {}
    for stream in streams:
        for f in _files(stream, groups, shared):
            copies.setdefault((f.log_dir, f.path), []).append((stream, f))
    files = tuple(_best(c) for _, c in sorted(copies.items()))
    state, why = _completeness(streams)
    digests = tuple(sorted({s.node["rules_digest"] for s in streams if s.node}))
    zones = [s.node.get("tz_offset_s") for s in streams if s.node]
    zone = next((z for z in zones if z is not None), None)
    return NodeFacts(name, state, why, files, digests, zone, None, _collected(streams))


def _collected(streams: Sequence[Stream]) -> float | None:
    times = []
    for stream in streams:
        node = stream.node or {}
        stamp, zone = parse_iso(str(node.get("collected_at_utc", ""))), node.get("tz_offset_s")
        if stamp is not None and isinstance(zone, int):
            times.append(stamp + zone)
    return max(times, default=None)


def quiet_when_collected(nodes: Sequence[NodeFacts]) -> float | None:
    """How long the run had been quiet when its facts were collected: the least, over the
    nodes with dated lines, of the collection time less the node's newest line. Both are on
    that node's own clock, so no offset between nodes enters. None when a node with dated
    lines does not say when it was collected (facts carry no file times to judge by)."""
    quiet = []
    for node in nodes:
        newest = max((f.last_time for f in node.files if f.last_time is not None), default=None)
        if newest is None:
            continue
        if node.collected_s is None:
            return None
        quiet.append(node.collected_s - newest)
    return min(quiet, default=None)


def _shard_of(stream: Stream) -> tuple[tuple[str, ...], int, int] | None:
    shard = stream.node.get("shard") if stream.node else None
    if not shard:
        return None
    return tuple(stream.node["log_dirs"]) if stream.node else (), int(shard[0]), int(shard[1])


def _shared(
    key: tuple[tuple[str, ...], int], streams: list[tuple[int, Stream]], groups: dict[str, Group]
) -> NodeFacts:
    dirs, count = key
    whole = {k for k, s in streams if s.complete}
    node = _node(f"shared:{','.join(dirs)}", [s for _, s in streams], groups, shared=True)
    missing = sorted(set(range(count)) - whole)
    state = COMPLETE if not missing else PARTIAL
    why = (
        "" if not missing else f"shard(s) {', '.join(str(k) for k in missing)} of {count} not whole"
    )
    return replace(node, state=state, why=why, shards=(len(whole), count))


def split_conflicts(by_host: dict[str, list[Stream]]) -> tuple[dict[str, list[Stream]], list[str]]:
    """Streams of one host name whose files disagree (another node id or start in the same
    file: two machines with one hostname) are kept apart as `host~<stream>`."""
    out: dict[str, list[Stream]] = {}
    warnings = []
    for host, streams in by_host.items():
        kept: list[list[Stream]] = []
        for stream in sorted(streams, key=lambda s: s.stream):
            home = next((k for k in kept if not _disagree(k, stream)), None)
            if home is None:
                kept.append([stream])
            else:
                home.append(stream)
        out[host] = kept[0]
        for other in kept[1:]:
            name = f"{host}~{other[0].stream[:6]}"
            out[name] = other
            warnings.append(
                f"two nodes call themselves {host!r}: their logs differ (node ids or start "
                f"times), so one is shown as {name!r}"
            )
    return out, warnings


def _identity(stream: Stream) -> dict[tuple[str, str], tuple[str | None, float | None]]:
    return {
        (e.facts.log_dir, e.facts.path): (e.facts.node_id, e.facts.first_time)
        for e in stream.files.values()
    }


def _disagree(streams: list[Stream], stream: Stream) -> bool:
    mine = _identity(stream)
    for other in streams:
        theirs = _identity(other)
        for key, ident in mine.items():
            if key in theirs and theirs[key] != ident:
                return True
    return False


def collect(streams: Iterable[Stream]) -> Collected:
    """Every node's files, once, from every stream read."""
    streams = list(streams)
    groups = {d: g for s in streams for d, g in s.groups.items()}
    by_host: dict[str, list[Stream]] = {}
    shards: dict[tuple[tuple[str, ...], int], list[tuple[int, Stream]]] = {}
    for stream in streams:
        shard = _shard_of(stream)
        if shard is None:
            by_host.setdefault(stream.host, []).append(stream)
        else:
            dirs, k, n = shard
            shards.setdefault((dirs, n), []).append((k, stream))
    hosts, warnings = split_conflicts(by_host)
    nodes = [_node(h, s, groups, shared=False) for h, s in sorted(hosts.items())]
    nodes += [_shared(key, s, groups) for key, s in sorted(shards.items())]
    newer = sorted({s.host for s in streams if s.schema > 1})
    if newer:
        warnings.append(
            f"facts of {names(newer)} use a newer schema than this msrunwatch reads (1): "
            "fields it does not know are ignored"
        )
    return Collected(tuple(nodes), tuple(groups.values()), tuple(warnings))


def names(hosts: Sequence[str], most: int = 8) -> str:
    shown = ", ".join(hosts[:most])
    return shown + (f" and {len(hosts) - most} more" if len(hosts) > most else "")
