"""Small hand-made runs for table-driven judge tests: rules by their declared semantics,
ranks by their facts, sightings by rule and time."""

from __future__ import annotations

from msrunwatch.judge.model import Occurrence
from msrunwatch.judge.sightings import Sighting
from msrunwatch.read.facts import FileFacts, FileRole, Hit
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.vocab import Blame, Effect, Role, Severity


def rule(
    rule_id: str,
    role: Role = Role.CAUSE,
    severity: Severity = Severity.ERROR,
    effect: Effect | None = None,
    blame: Blame = Blame.FIRST,
    category: str = "oom",
) -> Rule:
    """A line rule with the effect its role and severity give unless one is declared."""
    return Rule(
        id=rule_id,
        title=rule_id,
        category=category,
        severity=severity,
        scope=Scope.LINE,
        message=rule_id,
        role=role,
        blame=blame,
        effect=effect if effect is not None else Effect.default(role, severity, True),
    )


def rank(
    number: int,
    lines: int = 10,
    finished_line: int | None = None,
    exit_code: int | None = None,
    first_time: float | None = 0.0,
    last_time: float | None = None,
) -> RankFacts:
    facts = FileFacts(
        path=f"worker_{number}.log",
        log_dir="logs",
        role=FileRole.WORKER,
        lines=lines,
        rank_from_name=number,
        first_time=first_time,
        last_time=last_time,
        finished_line=finished_line,
    )
    return RankFacts(number, (facts,), exit_code=exit_code)


def run(*ranks: RankFacts, unregistered: frozenset[int] = frozenset()) -> RunFacts:
    return RunFacts(log_dirs=("logs",), ranks=ranks, unregistered=unregistered)


def seen(
    r: Rule, rank_number: int, time: float, own: bool = True, line: int = 1, text: str = ""
) -> Sighting:
    """Rule r fired on a line of rank_number's log (or, own=False, another process's)."""
    hit = Hit(r.id, line, 0, time, True, r.message, r.id, (), text or r.id)
    path = f"worker_{rank_number}.log" if own else "scheduler.log"
    occ = Occurrence(rank_number, "logs", path, line, time, True, text, 1, r.message)
    return Sighting(hit, r, rank_number, own, occ)
