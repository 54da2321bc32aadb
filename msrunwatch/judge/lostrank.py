"""A root-cause rank whose own log says nothing of its end: it was lost.

The scheduler timed it out (or its node was lost whole, judge.lostnode), msrun reported no
exit code for it, and its log just stops: no fault, no end, no traceback. Its row then
showed `killed` or `failed` with an empty first error, as if nothing were known. What is
known is that it was lost, what named it (the root cause), and when its log stopped: the
row says so, and its first error points at the last line it wrote (where to start reading),
under the root cause's category (or at the line that names it, when that line is in its
own file: a launcher's summary pasted with its output).

This reads facts only (the root cause's ranks, statuses, exit codes, own errors): no
category or message decides.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from msrunwatch.judge.model import FirstError, RootCause, Status
from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.statuses import Statuses, format_clock
from msrunwatch.read.runstate import RunFacts
from msrunwatch.rules.vocab import Severity

STOPPED = (Status.FAILED, Status.KILLED)
"""Statuses of a rank that stopped; a hung (`stalled`) rank says what is known already."""


def lost_ranks(
    cause: RootCause | None,
    gone: Collection[int],
    statuses: Statuses,
    run: RunFacts,
    own: Mapping[int, Sequence[Sighting]],
) -> dict[int, FirstError]:
    """The root cause's ranks that were lost (`gone`: the scheduler lost them, or their node
    was lost whole) and stopped with no error, exit code or end of their own, each with what
    is known of it as its first error: the cause's category at its last line."""
    if cause is None:
        return {}
    lost = {}
    for n in set(cause.ranks) & set(gone):
        rank = run.rank(n)
        if rank is None or not rank.lines or rank.exit_code is not None or rank.finished_line:
            continue
        if statuses.get(n, (None, ""))[0] not in STOPPED:
            continue
        if any(s.rule.severity is Severity.ERROR for s in own.get(n, ())):
            continue
        f = rank.primary
        if (cause.log_dir, cause.file) == (f.log_dir, f.path) and cause.line:  # a pasted log
            lost[n] = FirstError(cause.category, cause.rule, f.path, cause.line, cause.time)
        else:
            lost[n] = FirstError(cause.category, cause.rule, f.path, f.lines, rank.last_time, True)
    return lost


def as_lost(
    statuses: Statuses, lost: Mapping[int, FirstError], hosts: Mapping[int, str | None]
) -> Statuses:
    """Lost ranks are `failed` alike: of a node lost whole, only the rank the scheduler
    named read `failed` (with its word), the others `killed` as if msrun had stopped them."""
    out = dict(statuses)
    for n, where in lost.items():
        if out[n][0] is Status.FAILED:
            continue  # the scheduler's word on it, which says why already
        host = hosts.get(n)
        node = f" with its node {host}" if host else ""
        why = (
            f"lost{node}: its log stops at {format_clock(where.time)} "
            "with no fault, exit code or end of its own"
        )
        out[n] = (Status.FAILED, why)
    return out
