"""The triage verdict: what every renderer (text, JSON, Markdown, CI formats) prints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from msrunwatch.core.compat import StrEnum, dataclass
from msrunwatch.read.facts import CompileStats, MemorySummary, Progress
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity

if TYPE_CHECKING:
    from msrunwatch.read.nodefacts.merge import NodeView


class Status(StrEnum):
    """Per-rank status, as the JSON report spells it."""

    STARTING = "starting"
    """It has written (GLOG lines, or prints only) and neither compiles nor trains yet; live,
    also a log msrun has opened that is still empty (statuses._empty)."""
    COMPILING = "compiling"
    TRAINING = "training"
    FINISHED = "finished"
    FAILED = "failed"
    KILLED = "killed"
    TIMED_OUT = "timed-out"
    STALLED = "stalled"
    WAITING = "waiting"
    """Live view: quiet after another rank failed, not yet confirmed killed; or quiet past
    --stall-after while the root cause is a rank named hung (statuses.waiting_on_hang)."""
    STOPPED = "stopped"
    """Its log stops without an end marker or a fault, and the run is over: post mortem,
    nothing was written for longer than --stall-after, or --finished; live or post mortem,
    msrun said it terminates every worker (it was stopped with Ctrl+C or SIGTERM)."""
    UNKNOWN = "unknown"
    """No log for it, or an empty log after the run (or empty past --stall-after)."""


@dataclass(frozen=True, slots=True)
class Occurrence:
    """Where one rank (or the scheduler, or msrun) showed a finding first."""

    rank: int | None
    log_dir: str | None
    file: str | None
    line: int | None
    time: float | None
    time_exact: bool
    text: str
    count: int = 1
    message: str = ""
    """The rule's message for this occurrence (numbers differ between ranks)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule's finding, grouped across every rank that showed it."""

    rule: str
    title: str
    category: str
    severity: Severity
    role: str
    """root-cause, victim or symptom."""
    message: str
    ranks: tuple[int, ...]
    occurrences: tuple[Occurrence, ...]
    """The first occurrence per rank and file, earliest first."""
    count: int
    hint: str = ""
    fingerprint: str = ""
    restated_by: tuple[str, ...] = ()
    """Rules whose findings only repeated this one and were folded into it."""
    cause_ranks: tuple[int, ...] = ()
    """The root cause's ranks, when its evidence was seen on others (a waiter's timeout
    naming the rank it waited for, the scheduler's word on one rank of a node lost whole):
    the row called root cause names the ranks the verdict names."""

    @property
    def first(self) -> Occurrence | None:
        return self.occurrences[0] if self.occurrences else None

    @classmethod
    def of(
        cls,
        rule: Rule,
        role: str,
        message: str,
        ranks: tuple[int, ...],
        occurrences: tuple[Occurrence, ...],
        count: int,
        fingerprint: str,
        hint: str | None = None,
    ) -> Finding:
        """A rule's finding: its id, title, category, severity and hint come from the rule."""
        return cls(
            rule.id,
            rule.title,
            rule.category,
            rule.counts_as,
            role,
            message,
            ranks,
            occurrences,
            count,
            rule.hint if hint is None else hint,
            fingerprint,
        )


@dataclass(frozen=True, slots=True)
class RootCause:
    """The fault the run died of, and the rank(s) that had it."""

    ranks: tuple[int, ...]
    category: str
    rule: str
    log_dir: str | None
    file: str | None
    line: int | None
    time: float | None
    message: str
    reason: str
    """Why these ranks: how the verdict was reached."""
    time_exact: bool = True
    """False when the line had no timestamp and was dated by the line before it."""


@dataclass(frozen=True, slots=True)
class FirstError:
    """A rank's earliest error."""

    category: str
    rule: str
    file: str
    line: int
    time: float | None
    at_end: bool = False
    """The line is where the rank's log stops, not an error: a rank lost with no fault of
    its own (judge.lostrank) is pointed at its last line, where to start reading."""


@dataclass(frozen=True, slots=True)
class RankEstimate:
    """What the config's memory estimate expects of a rank's stage."""

    stage: int
    used_mb: float | None
    actual_mb: float | None


@dataclass(frozen=True, slots=True)
class RankReport:
    """One rank's line in the report."""

    rank: int
    log_dir: str | None
    file: str | None
    status: Status
    status_reason: str = ""
    pid: int | None = None
    host: str | None = None
    memory: MemorySummary | None = None
    compile: CompileStats | None = None
    progress: Progress | None = None
    first_error: FirstError | None = None
    first_time: float | None = None
    last_time: float | None = None
    lines: int = 0
    exit_code: int | None = None
    estimate: RankEstimate | None = None
    """Given a config: the estimate for this rank's pipeline stage."""
    waiting_on: tuple[int, ...] = ()
    """A waiting rank: the ranks of the root cause it waits on (since its last_time)."""


@dataclass(frozen=True, slots=True)
class Report:
    """The verdict on a run."""

    log_dirs: tuple[str, ...]
    outcome: str
    root_cause: RootCause | None
    ranks: tuple[RankReport, ...]
    findings: tuple[Finding, ...]
    warnings: tuple[str, ...] = ()
    """Problems reading the input (unreadable files, rule patterns that timed out)."""
    files: int = 0
    bytes: int = 0
    version: int = 1
    nodes: tuple[NodeView, ...] = ()
    """Facts from several nodes: each node, its state, ranks and clock (empty otherwise)."""
    clocks: Mapping[tuple[str, str], tuple[float | None, float]] = field(default_factory=dict)
    """Facts from several nodes: each file's (log_dir, path) clock minus the scheduler's
    (None when not measured) and how many seconds its corrected times may be off."""
    clock_reference: str | None = None
    """Facts from several nodes: the host whose clock the report's times are on (the
    scheduler's), when its facts came."""
    consoles: tuple[str, ...] = ()
    """msrun's console files read as consoles (paths as given): `-v` says which, and a
    console beside a log directory given alone is pointed at when none was read."""

    @property
    def has_errors(self) -> bool:
        """Faults found: error findings, or ranks that failed, were killed or timed out."""
        return self.outcome == "failed"
