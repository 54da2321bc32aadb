"""Teardown noise: what a rank's log says after it ended normally is a note (issue 18)."""

from __future__ import annotations

from dataclasses import replace

from msrunwatch.judge.sightings import sightings
from msrunwatch.read.facts import FileRole, Hit
from msrunwatch.rules.vocab import Effect, Role, Severity
from tests.judge.builders import rank, rule, run


def _hit(rule_id: str, line: int) -> Hit:
    return Hit(rule_id, line, 0, float(line), True, rule_id, rule_id, (), rule_id)


def test_a_fault_after_the_logs_normal_end_is_a_note() -> None:
    crash = rule("native-crash-signal", category="segfault")
    ended = rank(0, lines=9, finished_line=5)
    worker = replace(ended.files[0], hits=(_hit(crash.id, 3), _hit(crash.id, 7)))
    found = sightings(run(replace(ended, files=(worker,))), {crash.id: crash})
    before, after = sorted(found, key=lambda s: s.hit.line)
    assert (before.rule.role, before.rule.effect, before.rule.severity) == (
        Role.CAUSE,
        Effect.FAIL,
        Severity.ERROR,
    )
    assert (after.rule.role, after.rule.effect, after.rule.severity) == (
        Role.NOTE,
        Effect.NONE,
        Severity.WARNING,
    )
    assert after.rule.title.endswith("(after the log's normal end: teardown)")
    assert after.rule.category == "segfault"


def test_a_victim_after_the_end_stays_a_victim() -> None:
    """fixtures/cpu_scheduler_killed: rank 1 finished, then the cluster's callback stopped it
    (killed-by-cluster-callback, a victim): that is said as it was."""
    stopped = rule("killed-by-cluster-callback", role=Role.VICTIM, severity=Severity.WARNING)
    ended = rank(1, lines=205, finished_line=195)
    worker = replace(ended.files[0], hits=(_hit(stopped.id, 205),))
    (seen,) = sightings(run(replace(ended, files=(worker,))), {stopped.id: stopped})
    assert seen.rule is stopped


def test_without_a_normal_end_or_in_msruns_console_a_fault_stays_one() -> None:
    crash = rule("native-crash-signal", category="segfault")
    going = rank(0, lines=9)
    worker = replace(going.files[0], hits=(_hit(crash.id, 7),))
    (seen,) = sightings(run(replace(going, files=(worker,))), {crash.id: crash})
    assert seen.rule is crash
    console = replace(worker, role=FileRole.CONSOLE, finished_line=5)
    (seen,) = sightings(run(replace(going, files=(console,))), {crash.id: crash})
    assert seen.rule is crash
