"""The words rules speak: how bad a finding is, what it says about the rank (its role
in the root cause and its effect on the rank's status), which ranks it blames, and the
category vocabulary of the report."""

from __future__ import annotations

from msrunwatch.core.compat import StrEnum


class Severity(StrEnum):
    """How bad a finding is; ordered by `rank`."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is worse, so severities sort and compare."""
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Role(StrEnum):
    """A rule's hint for root-cause analysis."""

    CAUSE = "cause"
    """The rank's own fault: an OOM, a crash, a bad strategy."""
    SYMPTOM = "symptom"
    """A consequence of another rank's fault: a timeout, a lost peer."""
    VICTIM = "victim"
    """A rank stopped because another failed: killed by msrun."""
    NOTE = "note"
    """Context, not a fault: settings and figures worth knowing (heartbeats off, memory
    imbalance, msrun's record of an exit)."""


class Blame(StrEnum):
    """Which ranks a root cause names when several ranks report it."""

    FIRST = "first"
    """Only the rank(s) that reported it first: runtime faults."""
    ALL = "all"
    """Every rank that reported it: deterministic configuration errors."""


class Effect(StrEnum):
    """What a finding does to the status of the rank it is about."""

    FAIL = "fail"
    """The rank failed on its own."""
    KILL = "kill"
    """The rank was stopped (by msrun, the cluster, or a signal from outside)."""
    TIME_OUT = "time-out"
    """The rank gave up waiting for others."""
    STALL = "stall"
    """The rank hangs: silent while others write."""
    LEAVE = "leave"
    """The rank left the cluster while others still needed it: it ended without a fault (it
    stays `finished`), and the finding's message is its reason."""
    LOSE = "lose"
    """The scheduler lost the rank (its heartbeat stopped)."""
    LOSE_FIRST = "lose-first"
    """The scheduler names the rank the first it lost."""
    NONE = "none"
    """No effect on the rank's status."""

    @staticmethod
    def default(role: Role, severity: Severity, line_scope: bool) -> Effect:
        """A line rule's effect when it does not declare one; rank and run rules have none."""
        if not line_scope:
            return Effect.NONE
        if role is Role.VICTIM:
            return Effect.KILL
        if severity is not Severity.ERROR:
            return Effect.NONE
        return Effect.FAIL if role is Role.CAUSE else Effect.TIME_OUT


class Witness(StrEnum):
    """What a line is its rank's word on about another rank (judge.peergone)."""

    PEER_GONE = "peer-gone"
    """A peer went away (its connection closed): the logging rank was alive after a peer
    stopped, so it is not the rank that stopped first."""


class Refers(StrEnum):
    """What a capture naming another rank holds."""

    NODE = "node"
    """A scheduler node id: the rank it registered with (a numeric id is the rank itself)."""
    PID = "pid"
    """A worker's process id, as msrun reports it."""
    RANK = "rank"
    """A rank number."""


CATEGORIES: tuple[str, ...] = (
    "oom",
    "malloc-failed",
    "memory-over-budget",
    "hccl-timeout",
    "node-timeout",
    "cluster-init-timeout",
    "worker-killed",
    "segfault",
    "python-exception",
    "strategy-mismatch",
    "device-num-mismatch",
    "pipeline-stage-mismatch",
    "shape-mismatch",
    "unsupported-feature",
    "compile-error",
    "config-error",
    "stalled",
    # categories v2
    "device-error",
    "collective-error",
    "host-oom",
    "nan-loss",
    "early-exit",
    "job-stopped",
    "io-error",
    "network-error",
    "environment-error",
    "unclassified",
)
"""The category vocabulary of the JSON report (README: "Categories"). User rules may add
their own with an `x-` prefix."""
