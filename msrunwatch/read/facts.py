"""What one log file says, reduced to the facts triage and the live view need."""

from __future__ import annotations

from dataclasses import field

from msrunwatch.core.compat import StrEnum, dataclass
from msrunwatch.read.cluster import Group, Handshake


class FileRole(StrEnum):
    """What kind of file a log is, which decides how it is read."""

    WORKER = "worker"
    SCHEDULER = "scheduler"
    CONSOLE = "console"
    MSRUN = "msrun"
    """A GLOG file written by the msrun launcher process itself."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One rule firing on one line of one file."""

    rule: str
    line: int
    offset: int
    time: float | None
    time_exact: bool
    message: str
    fingerprint: str
    captures: tuple[tuple[str, str], ...]
    text: str
    count: int = 1
    """How many lines of this file fired with the same fingerprint."""
    subject: str | None = None
    """The rule's subject capture: the rank (node id, pid or number) the line is about when
    another process logged it."""
    overrides: tuple[tuple[str, str], ...] = ()
    """A lookup table's refinements of the rule for this line (category, role, title, hint)."""

    def capture(self, name: str) -> str | None:
        """The value of a named capture, if the rule had one."""
        for key, value in self.captures:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class MemorySummary:
    """The device-memory block MindSpore prints at teardown (sizes in MiB)."""

    device_mb: int | None
    used_mb: int | None
    base_address: str | None
    peak_used_mb: int | None
    peak_actual_mb: int | None
    line: int
    time: float | None


@dataclass(frozen=True, slots=True)
class CompileStats:
    """Graph compilation as one rank logged it."""

    count: int = 0
    """Graphs whose compilation finished (`Finish compiling` or `[PROF]compile_graph`)."""
    total_ms: float = 0.0
    """Sum of `[PROF]compile_graph` costs."""
    started: int = 0
    """`Start compiling` markers seen."""
    stages: tuple[tuple[str, float], ...] = ()
    """Total milliseconds per `[PROF]<stage>`, largest first."""
    first_start: float | None = None
    last_end: float | None = None
    end_line: int | None = None
    """The line where the last compilation finished."""

    @property
    def in_progress(self) -> bool:
        """A compilation started and has not finished."""
        return self.started > self.count


@dataclass(frozen=True, slots=True)
class Progress:
    """Training progress as the last progress line showed it."""

    step: int
    epoch: int | None = None
    loss: float | None = None
    step_time_ms: float | None = None
    line: int = 0
    time: float | None = None
    lines: int = 0
    """Progress lines seen."""
    cadence_s: float | None = None
    """Median seconds between recent progress lines: how often this rank reports."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A worker registered with the scheduler."""

    node: str
    rank: int
    """The rank the scheduler gave the node (its reassignment, when msrun had no
    `--node_rank`)."""
    host: str
    expected: int
    device: int | None = None
    ip: str | None = None
    time: float | None = None
    """When the scheduler registered it, on the scheduler's clock."""


@dataclass(frozen=True, slots=True)
class WorkerExit:
    """msrun's `Worker process <pid> exit with exception. Error code: <rc>.`"""

    pid: int
    code: int | None
    line: int
    time: float | None


@dataclass(frozen=True, slots=True)
class FileFacts:
    """Everything one log file says, reduced to what triage and the live view need."""

    path: str
    """Path relative to the log directory it was found in."""
    log_dir: str
    role: FileRole
    size: int = 0
    lines: int = 0
    rank_from_name: int | None = None
    rank_from_log: int | None = None
    """`This node <id> rank id: <r>` or DryRun's `Process's RANK_ID: <r>`."""
    node_id: str | None = None
    world_size: int | None = None
    sim_level: int | None = None
    pid: int | None = None
    """The pid most of this file's GLOG lines carry."""
    first_time: float | None = None
    last_time: float | None = None
    memory: MemorySummary | None = None
    compile: CompileStats = field(default_factory=CompileStats)
    progress: Progress | None = None
    finished_line: int | None = None
    """A line that shows this process ended normally."""
    training_started: bool = False
    """A marker that the training loop began (Megatron's `[before the start of training step]`)."""
    pipeline_stages: int | None = None
    """Pipeline stages the log announces (MindFormers)."""
    meta_connect_failures: int = 0
    """Attempts to reach the scheduler that failed (a few are normal while it starts)."""
    meta_server_url: str | None = None
    """Where this worker looked for the scheduler."""
    last_fault: tuple[int, str] | None = None
    """(line, text) of the fault the log ends in: a traceback's exception, a fatal signal or
    an ERROR line with no progress and no normal end after it."""
    hits: tuple[Hit, ...] = ()
    registrations: tuple[Registration, ...] = ()
    unregistered_nodes: tuple[str, ...] = ()
    timed_out_nodes: tuple[tuple[str, float | None], ...] = ()
    """Scheduler: the node ids it timed out (`The node: <id> is timed out.`), each with when
    it first said so."""
    worker_starts: tuple[tuple[int, str], ...] = ()
    """Console: (rank, log file) of each `Start worker process` line."""
    worker_exits: tuple[WorkerExit, ...] = ()
    kill_all_time: float | None = None
    all_workers_ok: bool = False
    scheduler_gave_up_time: float | None = None
    """Scheduler: when its shutdown found nodes that left without unregistering (`There are
    N abnormal compute graph nodes.`); it then exits with an exception and msrun stops the
    workers left: the job is over, whether or not msrun's console is read."""
    terminate_all_time: float | None = None
    """Console: when msrun, itself stopped (Ctrl+C, SIGTERM), said it terminates every worker
    (`msrun process received SIGINT (Ctrl+C), terminating all workers.`): the run is over."""
    error: str | None = None
    """Why the file could not be read, if it could not."""
    encodings: tuple[tuple[str, int], ...] = ()
    """Lines read that were not UTF-8, by how they were read ("gb18030", or "invalid":
    neither, shown with U+FFFD)."""
    warnings: tuple[str, ...] = ()
    """What was read only in part (lines a rule gave up on), for the report's warnings."""
    host: str | None = None
    """The host whose facts these are, when they came from another node (`msrunwatch facts`):
    a process is a (host, pid), never a pid alone (every container has pid 1)."""
    handshake: Handshake | None = None
    """A worker's registration with the scheduler, on its own clock (read.cluster)."""
    groups: tuple[Group, ...] = ()
    """The communicator groups the rank joined."""

    @property
    def rank(self) -> int | None:
        """The rank this file belongs to: what the log says, else its name."""
        return self.rank_from_log if self.rank_from_log is not None else self.rank_from_name
