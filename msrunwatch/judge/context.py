"""What the driver knows beyond the logs: the clock (live), the config's stages, budget
and estimate, the stall threshold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from msrunwatch.judge.model import RankEstimate


@dataclass(frozen=True)
class Context:
    """What the driver knows beyond the logs."""

    now: float | None = None
    """Current time on the logs' clock (live view); None in triage."""
    stage_of: Callable[[int], int] | None = None
    """Pipeline stage of a rank, when a config says how many stages there are."""
    stages: int = 1
    limit_mb: int | None = None
    """Usable device memory from the config (max_device_memory), MiB."""
    estimates: tuple[RankEstimate, ...] = ()
    """Given a config: the memory estimate of each pipeline stage, in stage order."""
    estimate_from: str | None = None
    """The config file the estimates come from."""
    quiet_s: Mapping[tuple[str, str], float] | None = None
    """Live view: seconds since each file (log_dir, path) last grew, by the wall clock."""
    stall_after_s: float = 120.0
    """A rank silent longer than this (and than 10 of its steps) while others write is stalled."""
    caught_up: bool = True
    """Live view: every file was read to its end (until then, silences mean nothing)."""
    clocks: Mapping[tuple[str, str], tuple[str, float, bool]] | None = None
    """Facts from several nodes (times moved onto the scheduler's clock): each file's
    (log_dir, path) clock, how many seconds its times may still be off, and whether that
    was measured (else it is the declared tolerance). Two faults on different clocks closer
    than that are a tie: their order is not known."""
    clock: float | None = None
    """Post mortem (triage): now on the logs' scale (this host's local time, or --now);
    None: the clock is not consulted (the live view judges silences instead)."""
    pinned: bool = False
    """The clock was given on the logs' own clock (--now): it is compared with the newest
    log line as it is, and the files' mtimes (this host's clock) are not used."""
    written: float | None = None
    """Post mortem: when the files were last written (their newest mtime, this host's
    local time); None when not known."""
    finished: bool = False
    """The user says the run is over (--finished): a rank without an end marker stopped."""
    blind: frozenset[int] = frozenset()
    """Facts from several nodes: ranks of nodes that sent no facts, or not all of them, and
    whose files are missing. Nothing is known of them: they are never taken for the silent
    rank others waited on; the verdict says where the cause may be instead."""

    def stage(self, rank: int) -> int:
        """The pipeline stage of a rank (0 when unknown, or for a rank without a number)."""
        return self.stage_of(rank) if self.stage_of is not None and rank >= 0 else 0

    def estimate(self, rank: int) -> RankEstimate | None:
        """The estimate for a rank's stage, when a config gave one."""
        stage = self.stage(rank)
        return self.estimates[stage] if stage < len(self.estimates) else None
