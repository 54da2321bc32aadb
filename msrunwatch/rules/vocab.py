"""The words rules speak: how bad a finding is, what it says about the rank, which ranks
it blames, and the category vocabulary of the report."""

from __future__ import annotations

from enum import StrEnum


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


class Blame(StrEnum):
    """Which ranks a root cause names when several ranks report it."""

    FIRST = "first"
    """Only the rank(s) that reported it first: runtime faults."""
    ALL = "all"
    """Every rank that reported it: deterministic configuration errors."""


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
)
"""The fixed category vocabulary of the JSON report."""
