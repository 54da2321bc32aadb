"""Each rank's status from its own faults, its exit code and how its log ends."""

from __future__ import annotations

import signal
from collections.abc import Sequence

from msrunwatch.judge.findings import Sighting
from msrunwatch.judge.model import Status
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.vocab import Role, Severity

KILL_SIGNALS = (signal.SIGKILL, signal.SIGTERM)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def phase(rank: RankFacts) -> Status:
    """Where a rank that has not ended got to."""
    compile_stats = rank.primary.compile
    if any(f.progress for f in rank.files):
        return Status.TRAINING
    if compile_stats.in_progress:
        return Status.COMPILING
    if compile_stats.count or any(f.training_started for f in rank.files):
        return Status.TRAINING
    # A log with no GLOG line at all (empty, or bytes that are not a log) says nothing.
    return Status.STARTING if rank.first_time is not None else Status.UNKNOWN


def _at(s: Sighting) -> str:
    return f"{s.rule.category} at {s.occurrence.file}:{s.hit.line}"


def rank_status(
    rank: RankFacts,
    own: Sequence[Sighting],
    run: RunFacts,
    run_failed: bool,
    lost_first: bool = False,
    writing: bool = False,
) -> tuple[Status, str]:
    """Status and a short reason, strongest evidence first.

    lost_first: the scheduler lost this rank before any other (and its log says nothing).
    writing: the live view saw its log grow just now, so it has not been killed (yet).
    """
    errors = [s for s in own if s.rule.severity is Severity.ERROR]
    causes = [s for s in errors if s.rule.role is Role.CAUSE]
    if causes:
        first = causes[0]
        if first.rule.category == "worker-killed":
            return Status.KILLED, first.hit.message
        return Status.FAILED, _at(first)
    victim = next((s for s in own if s.rule.role is Role.VICTIM), None)
    if victim is not None:
        return Status.KILLED, victim.hit.message
    code = rank.exit_code
    if code is not None and code < 0:
        name = _signal_name(code)
        if -code in KILL_SIGNALS:
            return Status.KILLED, f"msrun reports exit by {name}"
        return Status.FAILED, f"msrun reports exit by {name}"
    if errors:
        return Status.TIMED_OUT, _at(errors[0])
    if code is not None and code > 0:
        return Status.FAILED, f"msrun reports exit code {code}"
    if rank.finished_line:
        return Status.FINISHED, f"ended normally at {rank.primary.path}:{rank.finished_line}"
    if rank.rank in run.unregistered or run.all_workers_ok:
        return Status.FINISHED, "the scheduler saw it leave normally"
    if lost_first:
        return (
            Status.FAILED,
            "the scheduler lost it first; its log shows no fault (a crash or kill)",
        )
    if run_failed and rank.lines and not writing:
        return Status.KILLED, "its log stops after another rank failed"
    return phase(rank), ""
