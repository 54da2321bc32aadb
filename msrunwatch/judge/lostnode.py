"""A node lost whole: the root cause names every rank of it, not the one seen first.

When a host dies (power, kernel panic, SIGKILL of its msrun and workers, a network
partition) its ranks stop together, mid-line, and its msrun with them: nothing on it logs
a fault, finishes or reports an exit code. The others then name one of its ranks, the
one their ring waited on or the one the scheduler timed out first, and which one is
chance. Naming only that rank sends the user to one log of a machine that is gone whole.

This step reads facts only (which host each rank ran on, which ranks logged a fault of
their own, their statuses and exit codes): no category or message is looked at, so it
applies to whatever rule found the silent rank.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from msrunwatch.judge.model import RootCause, Status
from msrunwatch.rules.template import rank_ranges

STOPPED = frozenset({Status.FAILED, Status.KILLED, Status.TIMED_OUT, Status.STALLED})
"""Statuses of a rank that stopped (a finished, still running or waiting rank did not)."""


def _said_something(
    rank: int, plain: Mapping[int, Status], spoke: Collection[int], exits: Mapping[int, int | None]
) -> bool:
    """A fault, an end, a life (still running) or an exit code of its own."""
    return rank in spoke or plain.get(rank) not in STOPPED or exits.get(rank) is not None


def lost_node(
    cause: RootCause | None,
    host_of: Mapping[int, str | None],
    plain: Mapping[int, Status],
    spoke: Collection[int],
    exit_codes: Mapping[int, int | None],
    blind: Collection[int] = (),
) -> RootCause | None:
    """The root cause widened to every rank of its node, when that node was lost whole:
    the cause names ranks of one host (of at least two) that logged no fault of their own,
    and no rank of that host logged a fault, finished, is still running or has an exit
    code (its msrun would have reported one had it lived)."""
    if cause is None or not cause.ranks:
        return cause
    hosts = {host_of.get(r) for r in cause.ranks}
    if len(hosts) != 1 or None in hosts or len(set(host_of.values()) - {None}) < 2:
        return cause
    (host,) = hosts
    node = sorted(r for r, h in host_of.items() if h == host)
    if len(node) <= len(cause.ranks) or any(r in blind for r in node):
        return cause
    if any(_said_something(r, plain, spoke, exit_codes) for r in node):
        return cause
    reason = (
        f"{cause.reason}; every rank of its node {host} (ranks {rank_ranges(node)}) stopped "
        "with no fault, exit code or end of its own: the node was lost whole"
    )
    return replace(cause, ranks=tuple(node), reason=reason)
