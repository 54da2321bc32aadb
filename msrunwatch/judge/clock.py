"""Is the run over? msrun stopped with Ctrl+C or SIGTERM says so in its console, and that
ends every rank at once, live or post mortem. A whole job stopped from outside (a batch
system's cancel, a time limit, a container stopped) leaves no word in any log: every log
just stops. Only the clock tells it from a run still going: when nothing was written for
longer than the stall threshold, the run is not running any more.

When the files were last written is their newest mtime, read on this host's clock. A copy
(scp, an archive unpacked, a checkout) resets mtimes to the time of the copy: an mtime a
day or more after the newest log line, or after the clock itself, is such a reset, and the
newest log line is used instead. Log lines carry the writing host's local time, whose zone
is not known here: the line must then be older than the threshold plus ZONE_MARGIN_S. A
clock given on the logs' own scale (--now) is compared with the newest line as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Status
from msrunwatch.read.runstate import RankFacts, RunFacts

ZONE_MARGIN_S = 24 * 3600.0
"""How far a log line's local time may be from this host's: any two time zones, and more."""
RESET_SLACK_S = 60.0
"""An mtime this far after the clock is not a write but a reset (or another host's clock)."""
STOPPABLE = (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.WAITING)
"""Statuses of a rank that has not ended: `stopped` when the run is over. A stalled rank
stays stalled (others named it), an unknown one unknown (nothing is known of it)."""


@dataclass(frozen=True)
class Over:
    """Why the run is taken to be over (said without the time, nor which of the files'
    times or their lines told it, so a verdict reads the same whenever and from whichever
    copy it is made), and how long it has been quiet (None: not known)."""

    why: str
    quiet_s: float | None


def newest_line(run: RunFacts) -> float | None:
    """The newest time any of the run's files logged."""
    times = [
        f.last_time
        for f in (*(f for r in run.ranks for f in r.files), *run.schedulers, *run.consoles)
        if f.last_time is not None
    ]
    return max(times, default=None)


def quiet_for(run: RunFacts, ctx: Context) -> tuple[float, float] | None:
    """How long nothing was written, in seconds, and the margin its measure needs (the
    zone margin when only log lines, in a zone not known here, tell it against this host's
    clock); None when the clock is not consulted or nothing is dated."""
    if ctx.clock is None:
        return None
    line = newest_line(run)
    if ctx.pinned:
        return None if line is None else (ctx.clock - line, 0.0)
    written = ctx.written
    believed = written is not None and written <= ctx.clock + RESET_SLACK_S
    if believed and written is not None and (line is None or written <= line + ZONE_MARGIN_S):
        return ctx.clock - written, 0.0
    return None if line is None else (ctx.clock - line, ZONE_MARGIN_S)


TERMINATED = "msrun was stopped and terminated every worker"
"""Why the run is over when msrun says so (RunFacts.terminate_all_time), live or after."""


def run_over(run: RunFacts, ctx: Context) -> Over | None:
    """Whether the run is over: msrun said it terminates every worker (it was stopped with
    Ctrl+C or SIGTERM: none goes on, whatever the clock), the user said so, or the clock
    says so; else None."""
    if ctx.finished:
        return Over("--finished says so", None)
    quiet = quiet_for(run, ctx)
    if run.terminate_all_time is not None:
        return Over(TERMINATED, None if quiet is None else quiet[0])
    if quiet is None or quiet[0] <= ctx.stall_after_s + quiet[1]:
        return None
    return Over(f"nothing was written for longer than {ctx.stall_after_s:g} s", quiet[0])


def stopped(
    statuses: dict[int, tuple[Status, str]], over: Over | None, run: RunFacts, window_s: float
) -> dict[int, tuple[Status, str]]:
    """Ranks that had not ended, in a run that is over: stopped, with why. A rank whose log
    ends with those of ranks that ended normally (within `window_s` of the last of them, and
    at their last step) ended with them: many scripts print their end on rank 0 only, and a
    rank stopped mid-run leaves the others waiting on it in their next collective, not
    finishing. A rank whose progress stopped at an earlier step than theirs did not finish
    with them, however close its last line: it stopped."""
    if over is None:
        return statuses
    ended = [r for r in run.ranks if statuses.get(r.rank, (None,))[0] is Status.FINISHED]
    last_end = max((t for r in ended if (t := r.last_time) is not None), default=None)
    furthest = max((p for r in ended if (p := _position(r)) is not None), default=None)
    reason = f"its log stops without an end marker, and the run is over: {over.why}"
    result = dict(statuses)
    for rank in run.ranks:
        status = statuses.get(rank.rank, (Status.UNKNOWN, ""))[0]
        if status not in STOPPABLE:
            continue
        last, position = rank.last_time, _position(rank)
        if furthest is not None and position is not None and position < furthest:
            result[rank.rank] = (Status.STOPPED, _behind_reason(position, furthest, over))
        elif last_end is not None and last is not None and last >= last_end - window_s:
            result[rank.rank] = (Status.FINISHED, ENDED_WITH_OTHERS)
        else:
            result[rank.rank] = (Status.STOPPED, reason)
    return result


def _position(rank: RankFacts) -> tuple[int, int] | None:
    """Where the rank's training got to, as (epoch, step), by its last progress line; None
    when it logged none (many scripts log progress on one rank only)."""
    progress = rank.progress
    return None if progress is None else (progress.epoch or 0, progress.step)


def _behind_reason(position: tuple[int, int], furthest: tuple[int, int], over: Over) -> str:
    return (
        f"its log stops without an end marker at {_said(position)}, behind the ranks that "
        f"ended normally ({_said(furthest)}), and the run is over: {over.why}"
    )


def _said(position: tuple[int, int]) -> str:
    epoch, step = position
    return f"epoch {epoch} step {step}" if epoch else f"step {step}"


ENDED_WITH_OTHERS = (
    "its log ends with those of the ranks that ended normally (no end marker of its own)"
)
