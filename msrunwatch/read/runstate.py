"""Assemble the facts of every file into ranks, the scheduler's view and msrun's view.

A rank is one worker process. Its number comes from what its log says (`This node <id>
rank id: <r>`, DryRun's `RANK_ID`), else from its file name; two files of the same
process (msrun's `worker_N.log` and glog's own files) share a pid and are merged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from msrunwatch.read.facts import FileFacts, FileRole, Hit, Progress, Registration, WorkerExit

MAX_RANKS = 1 << 20
"""More ranks than any job has (a million cards): a larger expected count is not believed."""


@dataclass(frozen=True)
class RankFacts:
    """One worker process, possibly read from several files."""

    rank: int
    files: tuple[FileFacts, ...]
    exit_code: int | None = None
    """From msrun's console: the worker's return code (negative: killed by a signal)."""
    exit_line: int | None = None

    @property
    def primary(self) -> FileFacts:
        """The file reports name: msrun's worker log when there is one."""
        return self.files[0]

    @property
    def pid(self) -> int | None:
        return next((f.pid for f in self.files if f.pid is not None), None)

    @property
    def hits(self) -> list[tuple[FileFacts, Hit]]:
        """Every hit of every file of this rank, with the file it came from."""
        return [(f, h) for f in self.files for h in f.hits]

    @property
    def last_time(self) -> float | None:
        return max((f.last_time for f in self.files if f.last_time is not None), default=None)

    @property
    def first_time(self) -> float | None:
        return min((f.first_time for f in self.files if f.first_time is not None), default=None)

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def progress(self) -> Progress | None:
        """Its training progress: that of the first of its files that logged any."""
        return next((f.progress for f in self.files if f.progress), None)

    @property
    def finished_line(self) -> int | None:
        return next((f.finished_line for f in self.files if f.finished_line), None)

    def first(self, attribute: str) -> object:
        """The first non-empty value of a FileFacts attribute across this rank's files."""
        return next((getattr(f, attribute) for f in self.files if getattr(f, attribute)), None)


@dataclass(frozen=True)
class RunFacts:
    """All files of a run, grouped."""

    log_dirs: tuple[str, ...]
    ranks: tuple[RankFacts, ...]
    schedulers: tuple[FileFacts, ...] = ()
    consoles: tuple[FileFacts, ...] = ()
    unreadable: tuple[FileFacts, ...] = ()
    expected_ranks: int | None = None
    registrations: tuple[Registration, ...] = ()
    unregistered: frozenset[int] = field(default_factory=frozenset)
    """Ranks the scheduler saw leave normally."""
    kill_all_time: float | None = None
    all_workers_ok: bool = False
    scheduler_gave_up_time: float | None = None
    """When the scheduler's shutdown found abnormal nodes (FileFacts.scheduler_gave_up_time):
    the job is over, as when msrun says it kills the workers (kill_all_time)."""
    terminate_all_time: float | None = None
    """When msrun, stopped from outside, said it terminates every worker: the run is over."""
    warnings: tuple[str, ...] = ()
    """What assembling found odd: two processes' logs claiming one rank."""

    def rank(self, number: int) -> RankFacts | None:
        """The rank with this number (indexed once: the verdict asks for every rank)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {r.rank: r for r in reversed(self.ranks)}
            object.__setattr__(self, "_index", index)
        return index.get(number)


def _merge_by_process(workers: Sequence[FileFacts]) -> list[list[FileFacts]]:
    """Group files written by the same process: same (host, pid) and no conflicting rank.

    A file joins the earliest group of its process whose first file has its rank or no rank
    (a file without a rank joins the earliest group of its process). Each lookup is a dict
    access, not a scan of the process's groups: when every node's workers have the same
    pids (containers), a scan made grouping quadratic in the ranks."""
    groups: list[list[FileFacts]] = []
    by_process: dict[tuple[str | None, int], _Process] = {}
    for facts in sorted(workers, key=_primary_first):
        process = by_process.get((facts.host, facts.pid)) if facts.pid is not None else None
        group = process.group_for(facts.rank) if process is not None else None
        if group is not None:
            group.append(facts)
            continue
        groups.append([facts])
        if facts.pid is not None:
            process = by_process.setdefault((facts.host, facts.pid), _Process())
            process.add(len(groups) - 1, groups[-1], facts.rank)
    return groups


class _Process:
    """The groups of one (host, pid), indexed by the rank of their first file."""

    __slots__ = ("by_rank", "first", "unranked")

    def __init__(self) -> None:
        self.by_rank: dict[int, tuple[int, list[FileFacts]]] = {}
        self.unranked: tuple[int, list[FileFacts]] | None = None
        """The earliest group whose first file has no rank."""
        self.first: list[FileFacts] | None = None

    def add(self, order: int, group: list[FileFacts], rank: int | None) -> None:
        if self.first is None:
            self.first = group
        if rank is None:
            self.unranked = self.unranked or (order, group)
        else:
            self.by_rank.setdefault(rank, (order, group))

    def group_for(self, rank: int | None) -> list[FileFacts] | None:
        """The earliest group a file of this rank may join (None: it starts its own)."""
        if rank is None:
            return self.first
        candidates = [c for c in (self.by_rank.get(rank), self.unranked) if c is not None]
        return min(candidates, key=lambda c: c[0])[1] if candidates else None


def _one_group_per_rank(
    groups: list[list[FileFacts]],
) -> tuple[list[list[FileFacts]], list[str]]:
    """Groups of different processes that claim the same rank (`worker_1.log` beside
    `worker_01.log`, a restarted worker with a new pid) are read as one rank, every file
    kept, with a warning: the verdict has one row per rank, and no file's faults are lost."""
    by_rank: dict[int, list[FileFacts]] = {}
    merged: list[list[FileFacts]] = []
    warnings = []
    for group in groups:
        number = next((f.rank for f in group if f.rank is not None), None)
        if number is None:
            merged.append(group)
            continue
        first = by_rank.get(number)
        if first is None:
            by_rank[number] = group
            merged.append(group)
            continue
        first.extend(group)
        warnings.append(
            f"rank {number} has logs from two processes: {_shown(first[0])} and "
            f"{_shown(group[0])}; both are read as rank {number}"
        )
    return merged, warnings


def _shown(facts: FileFacts) -> str:
    return f"{facts.log_dir.rstrip('/')}/{facts.path}"


def _primary_first(facts: FileFacts) -> tuple[int, str, str]:
    """msrun's own worker logs first, then glog's files, in path order."""
    return (
        0 if facts.rank_from_name is not None and facts.path.endswith(".log") else 1,
        facts.log_dir,
        facts.path,
    )


def _exits(consoles: Sequence[FileFacts]) -> dict[int, WorkerExit]:
    return {e.pid: e for c in consoles for e in c.worker_exits}


def assemble(log_dirs: Sequence[str], files: Sequence[FileFacts]) -> RunFacts:
    """Group every file's facts into a run."""
    readable = [f for f in files if f.error is None]
    workers = [f for f in readable if f.role is FileRole.WORKER]
    schedulers = tuple(f for f in readable if f.role is FileRole.SCHEDULER)
    consoles = tuple(f for f in readable if f.role in (FileRole.CONSOLE, FileRole.MSRUN))
    exits = _exits(consoles)
    groups, warnings = _one_group_per_rank(_merge_by_process(workers))
    ranks = []
    for index, group in enumerate(groups):
        number = next((f.rank for f in group if f.rank is not None), None)
        pid = next((f.pid for f in group if f.pid is not None), None)
        gone = exits.get(pid) if pid is not None else None
        ranks.append(
            RankFacts(
                rank=number if number is not None else -1 - index,
                files=tuple(group),
                exit_code=gone.code if gone else None,
                exit_line=gone.line if gone else None,
            )
        )
    registrations = tuple(r for s in schedulers for r in s.registrations)
    by_node = {r.node: r.rank for r in registrations}
    unregistered = frozenset(
        by_node[n] for s in schedulers for n in s.unregistered_nodes if n in by_node
    )
    return RunFacts(
        log_dirs=tuple(log_dirs),
        ranks=tuple(sorted(ranks, key=lambda r: (r.rank < 0, r.rank, r.primary.log_dir))),
        schedulers=schedulers,
        consoles=consoles,
        unreadable=tuple(f for f in files if f.error is not None),
        expected_ranks=_expected(ranks, registrations, consoles),
        registrations=registrations,
        unregistered=unregistered,
        kill_all_time=next((c.kill_all_time for c in consoles if c.kill_all_time), None),
        all_workers_ok=any(c.all_workers_ok for c in consoles),
        terminate_all_time=min(
            (t for c in consoles if (t := c.terminate_all_time) is not None), default=None
        ),
        scheduler_gave_up_time=min(
            (t for s in schedulers if (t := s.scheduler_gave_up_time) is not None), default=None
        ),
        warnings=tuple(warnings),
    )


def _expected(
    ranks: Sequence[RankFacts],
    registrations: Sequence[Registration],
    consoles: Sequence[FileFacts],
) -> int | None:
    """How many ranks the job has: the scheduler's expectation, DryRun's RANK_SIZE (a count
    no job has, which a forged line can claim, is not believed: every expected rank gets a
    row)."""
    expected = [r.expected for r in registrations if 0 < r.expected <= MAX_RANKS]
    if expected:
        return max(expected)
    sizes = [f.world_size for r in ranks for f in r.files if f.world_size]
    sizes = [size for size in sizes if 0 < size <= MAX_RANKS]
    simulated_single = len(ranks) == 1 and any(f.sim_level is not None for f in ranks[0].files)
    if sizes and not simulated_single:
        return max(sizes)
    starts = {rank for c in consoles for rank, _ in c.worker_starts if rank >= 0}
    return len(starts) if starts else None
