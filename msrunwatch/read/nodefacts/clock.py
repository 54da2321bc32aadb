"""Every node's clock against the scheduler's, measured from the logs themselves.

A worker connects to the scheduler (`Connect]`, its clock), the scheduler registers it
(`ProcessRegister]`, the scheduler's clock), and the worker then waits for the topology
(`retry(1/`, its clock). Causality puts the registration between the two worker lines in
real time, so (worker clock - scheduler clock) lies in [connect - registered, done -
registered]. The ranks of one host share its clock: their intervals intersect into the
host's offset, whose half-width is the uncertainty of any time read on that host. A host
without a bracket keeps its times and the declared tolerance (`--clock-tolerance`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from msrunwatch.read.facts import FileFacts, FileRole, Registration

REFERENCE_ERROR = 0.0


@dataclass(frozen=True)
class Offset:
    """A clock domain's offset from the scheduler's clock, in seconds."""

    low: float
    high: float
    ranks: int
    """Workers whose brackets gave it."""
    consistent: bool = True
    """False when the brackets did not intersect (the clock moved during the run): the
    interval is then their hull."""

    @property
    def value(self) -> float:
        return (self.low + self.high) / 2

    @property
    def error(self) -> float:
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class Clocks:
    """The offsets found, and how uncertain each domain's times are after correction."""

    offsets: Mapping[str, Offset]
    reference: str | None
    """The domain of the scheduler's clock, when known."""
    tolerance: float

    def error(self, domain: str) -> float:
        """Seconds a time of this domain may be off the reference clock after correction."""
        if domain == self.reference:
            return REFERENCE_ERROR
        found = self.offsets.get(domain)
        return found.error if found is not None else self.tolerance

    def measured(self, domain: str) -> bool:
        return domain == self.reference or domain in self.offsets

    def offset(self, domain: str) -> float | None:
        """This domain's clock minus the reference's (0 for the reference), if measured."""
        if domain == self.reference:
            return 0.0
        found = self.offsets.get(domain)
        return found.value if found is not None else None

    def shift(self, domain: str) -> float:
        found = self.offsets.get(domain)
        return -found.value if found is not None and domain != self.reference else 0.0


def registrations(files: Iterable[FileFacts]) -> dict[str, Registration]:
    """The registration table of the scheduler log that has the most of them."""
    tables = [f.registrations for f in files if f.role is FileRole.SCHEDULER and f.registrations]
    if not tables:
        return {}
    return {r.node: r for r in max(tables, key=len)}


def domain_of(f: FileFacts, table: Mapping[str, Registration]) -> str:
    """Which clock a file's times are on: its host's (facts from a node), else the host
    the scheduler registered its node id on (a shared directory), else its directory's."""
    if f.host is not None:
        return f.host
    registered = table.get(f.node_id) if f.node_id is not None else None
    return f"host:{registered.host}" if registered is not None else f"dir:{f.log_dir}"


def node_key(f: FileFacts) -> str | None:
    """The node id the scheduler registered this worker under: the one its log names, else
    (a worker that never learnt its rank) its file's number, which with `--node_rank` is
    the numeric node id msrun gave it."""
    if f.node_id is not None:
        return f.node_id
    return None if f.rank_from_name is None else str(f.rank_from_name)


def _bracket(f: FileFacts, table: Mapping[str, Registration]) -> tuple[float, float] | None:
    shake = f.handshake
    key = node_key(f)
    registered = table.get(key) if key is not None else None
    if shake is None or registered is None or registered.time is None:
        return None
    if shake.connect is None or shake.done is None or shake.done < shake.connect:
        return None
    return shake.connect - registered.time, shake.done - registered.time


def _intersect(brackets: Sequence[tuple[float, float]]) -> Offset:
    low = max(b[0] for b in brackets)
    high = min(b[1] for b in brackets)
    if low <= high:
        return Offset(low, high, len(brackets))
    hull = (min(b[0] for b in brackets), max(b[1] for b in brackets))
    return Offset(hull[0], hull[1], len(brackets), consistent=False)


def measure(files: Sequence[FileFacts], tolerance: float) -> Clocks:
    """Every domain's offset from its workers' brackets."""
    table = registrations(files)
    brackets: dict[str, list[tuple[float, float]]] = {}
    reference = None
    for f in files:
        domain = domain_of(f, table)
        if f.role is FileRole.SCHEDULER and f.registrations and reference is None:
            reference = domain if f.host is not None else None
        found = _bracket(f, table) if f.role is FileRole.WORKER else None
        if found is not None:
            brackets.setdefault(domain, []).append(found)
    offsets = {d: _intersect(b) for d, b in brackets.items()}
    return Clocks(offsets, reference, tolerance)


def shifted(f: FileFacts, delta: float) -> FileFacts:
    """The file's facts with every log time moved by delta seconds (onto another clock)."""
    if not delta:
        return f

    def t(value: float | None) -> float | None:
        return None if value is None else value + delta

    compile_stats = replace(
        f.compile, first_start=t(f.compile.first_start), last_end=t(f.compile.last_end)
    )
    return replace(
        f,
        first_time=t(f.first_time),
        last_time=t(f.last_time),
        memory=None if f.memory is None else replace(f.memory, time=t(f.memory.time)),
        compile=compile_stats,
        progress=None if f.progress is None else replace(f.progress, time=t(f.progress.time)),
        hits=tuple(replace(h, time=t(h.time)) for h in f.hits),
        registrations=tuple(replace(r, time=t(r.time)) for r in f.registrations),
        timed_out_nodes=tuple((node, t(when)) for node, when in f.timed_out_nodes),
        worker_exits=tuple(replace(e, time=t(e.time)) for e in f.worker_exits),
        kill_all_time=t(f.kill_all_time),
        scheduler_gave_up_time=t(f.scheduler_gave_up_time),
        terminate_all_time=t(f.terminate_all_time),
        handshake=None
        if f.handshake is None
        else replace(f.handshake, connect=t(f.handshake.connect), done=t(f.handshake.done)),
    )
