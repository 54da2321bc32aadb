"""What a log says about the cluster it belongs to, beyond its own rank.

Two things a verdict over many nodes needs and one node's facts did not keep:

- the registration handshake, which brackets the node's clock against the scheduler's:
  a worker logs its connection to the scheduler (`tcp_comm.cc ... Connect]`) before it
  registers and `Topology build timed out., retry(1/...)` (or `Cluster is successfully
  initialized.`) after, and the scheduler logs the registration in between, so
  (worker clock - scheduler clock) lies in [connect - registered, done - registered];
- the communicator groups a rank joined (`Create collective communication group: <name>
  [const vector]{0, 8, 16}`), which turn a group-local peer rank into a global one.

The scheduler's side (registration times, devices, addresses, the ranks it assigns when
msrun had no `--node_rank`) is kept in its `Registration`s.
"""

from __future__ import annotations

import re

from msrunwatch.core.compat import dataclass
from msrunwatch.read import patterns as P

MAX_GROUPS = 64
"""Distinct groups kept per file (a rank joins a handful: world, TP, PP, DP, EP ...)."""
MAX_MEMBERS = 1 << 20
"""Members read of one group (as many as ranks a job can have)."""
_NUMBER = re.compile(r"\d{1,18}")


@dataclass(frozen=True, slots=True)
class Handshake:
    """A worker's registration with the scheduler, on the worker's own clock."""

    connect: float | None
    """The last connection to the scheduler opened before it registered."""
    done: float | None
    """The first line that shows the registration had happened."""


@dataclass(frozen=True, slots=True)
class Group:
    """A communicator group a rank joined: its members' global ranks, in group order."""

    name: str
    members: tuple[tuple[int, int], ...]
    """Runs of consecutive global ranks (first, last), in the order the log lists them:
    member i of the group (its group-local rank i) is the i-th rank of the runs."""

    @property
    def size(self) -> int:
        return sum(last - first + 1 for first, last in self.members)

    def global_rank(self, local: int) -> int | None:
        """The global rank of the group's member `local`, None when there is none."""
        if local < 0:
            return None
        for first, last in self.members:
            if local <= last - first:
                return first + local
            local -= last - first + 1
        return None


def runs(ranks: list[int]) -> tuple[tuple[int, int], ...]:
    """Consecutive ascending ranks folded into (first, last) runs, order kept."""
    out: list[tuple[int, int]] = []
    for rank in ranks:
        if out and rank == out[-1][1] + 1:
            out[-1] = (out[-1][0], rank)
        else:
            out.append((rank, rank))
    return tuple(out)


class ClusterLines:
    """The cluster lines of one worker's log, fed GLOG messages in order."""

    __slots__ = ("_connect", "_done", "_groups")

    def __init__(self) -> None:
        self._connect: float | None = None
        self._done: float | None = None
        self._groups: dict[str, Group] = {}

    def message(self, msg: str, when: float | None) -> None:
        """A worker's GLOG message (only those P.CLUSTER_FACTS could match reach here)."""
        if self._done is None:
            if P.CONNECTED.search(msg):
                self._connect = when
                return
            if P.TOPOLOGY_WAIT.search(msg) or P.CLUSTER_BUILT.search(msg):
                self._done = when
                return
        if (m := P.GROUP_CREATED.search(msg)) and len(self._groups) < MAX_GROUPS:
            name = m["name"]
            if name not in self._groups:
                members = [int(n) for n in _NUMBER.findall(m["members"], 0)][:MAX_MEMBERS]
                self._groups[name] = Group(name, runs(members))

    def absorb(self, later: ClusterLines) -> None:
        """Continue with what a reader of the rest of the file found (see read.pieces)."""
        if self._done is None:
            self._connect = later._connect if later._connect is not None else self._connect
            self._done = later._done
        for name, group in later._groups.items():
            if name not in self._groups and len(self._groups) < MAX_GROUPS:
                self._groups[name] = group

    def handshake(self) -> Handshake | None:
        if self._connect is None and self._done is None:
            return None
        return Handshake(self._connect, self._done)

    def groups(self) -> tuple[Group, ...]:
        return tuple(self._groups.values())
