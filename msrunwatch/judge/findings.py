"""Attribute every hit to the rank it is about, and group equal hits across ranks.

A hit in a worker's own log is about that rank. A hit in msrun's console that captured
a `pid` is about the rank with that pid; a scheduler hit that captured a `node` is
about the rank registered as that node. Hits with the same rule and fingerprint (the
message with numbers masked) are one finding listing all their ranks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from msrunwatch.judge.model import Occurrence
from msrunwatch.read.facts import FileFacts, Hit
from msrunwatch.read.runstate import RunFacts
from msrunwatch.rules.model import Rule

INFINITY = float("inf")


@dataclass(frozen=True, slots=True)
class Sighting:
    """A hit, the rank it is about and whether that rank logged it itself."""

    hit: Hit
    rule: Rule
    rank: int | None
    own: bool
    """Logged by the rank itself (or msrun about its process), not by the scheduler."""
    occurrence: Occurrence

    @property
    def sort_key(self) -> tuple[float, int, int]:
        rank = self.rank if self.rank is not None else 1 << 30
        return (self.hit.time if self.hit.time is not None else INFINITY, rank, self.hit.line)


def _occurrence(facts: FileFacts, hit: Hit, rank: int | None) -> Occurrence:
    return Occurrence(
        rank=rank,
        log_dir=facts.log_dir,
        file=facts.path,
        line=hit.line,
        time=hit.time,
        time_exact=hit.time_exact,
        text=hit.text,
        count=hit.count,
        message=hit.message,
    )


def sightings(run: RunFacts, rules: Mapping[str, Rule]) -> list[Sighting]:
    """Every hit of the run, attributed, earliest first."""
    by_pid = {r.pid: r.rank for r in run.ranks if r.pid is not None}
    by_node = {g.node: g.rank for g in run.registrations}
    found: list[Sighting] = []

    def add(facts: FileFacts, hit: Hit, rank: int | None, own: bool) -> None:
        rule = rules.get(hit.rule)
        if rule is not None:
            found.append(Sighting(hit, rule, rank, own, _occurrence(facts, hit, rank)))

    for rank in run.ranks:
        for facts, hit in rank.hits:
            add(facts, hit, rank.rank, True)
    for facts in run.schedulers:
        for hit in facts.hits:
            node = hit.capture("node") or hit.capture("first")
            add(facts, hit, by_node.get(node) if node is not None else None, False)
    for facts in run.consoles:
        for hit in facts.hits:
            pid = hit.capture("pid")
            subject = by_pid.get(int(pid)) if pid is not None and pid.isdigit() else None
            add(facts, hit, subject, subject is not None)
    found.sort(key=lambda s: s.sort_key)
    return found


def group(found: list[Sighting]) -> dict[tuple[str, str], list[Sighting]]:
    """Sightings by (rule, fingerprint), in order of first appearance."""
    groups: dict[tuple[str, str], list[Sighting]] = {}
    for s in found:
        groups.setdefault((s.hit.rule, s.hit.fingerprint), []).append(s)
    return groups
