"""Root-cause preferences, one row per rule of preference: an own cause first, ties and
blame, then a run-level cause, the scheduler's word, and the earliest error."""

from __future__ import annotations

from dataclasses import replace

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.rootcause import fallback, from_causes
from msrunwatch.judge.sweep import first_lost
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.vocab import Blame, Effect, Role, Severity
from tests.judge.builders import rule, seen

OOM = rule("oom")
STRATEGY = rule("strategy", blame=Blame.ALL, category="strategy-mismatch")
TIMEOUT = rule("timeout", role=Role.SYMPTOM, category="hccl-timeout")
LOST = rule("lost", role=Role.SYMPTOM, effect=Effect.LOSE_FIRST, category="node-timeout")


def test_the_earliest_own_cause_wins_over_earlier_symptoms() -> None:
    found = [seen(TIMEOUT, 0, 1.0), seen(OOM, 1, 2.0), seen(OOM, 0, 3.0)]
    cause = from_causes(found)
    assert cause is not None and cause.ranks == (1,) and cause.rule == "oom"
    assert "rank(s) 0 hit the same fault later" in cause.reason


def test_faults_within_a_millisecond_name_every_rank() -> None:
    cause = from_causes([seen(OOM, 2, 5.0), seen(OOM, 3, 5.0004), seen(OOM, 4, 6.0)])
    assert cause is not None and cause.ranks == (2, 3)


def test_blame_all_names_every_rank_that_reported_a_config_error() -> None:
    cause = from_causes([seen(STRATEGY, r, 1.0 + r) for r in range(4)])
    assert cause is not None and cause.ranks == (0, 1, 2, 3)


def test_a_scheduler_line_is_never_an_own_cause() -> None:
    assert from_causes([seen(OOM, 1, 1.0, own=False)]) is None


def test_symptoms_only_fall_back_to_the_scheduler_then_the_earliest_error() -> None:
    found = [seen(TIMEOUT, 0, 1.0), seen(LOST, 3, 2.0, own=False)]
    named = fallback(found, [], first_lost(found))
    assert named is not None and named.ranks == (3,)
    assert named.reason == "lost (no rank logged a fault of its own)"  # LOST's title says who
    timeouts = [seen(TIMEOUT, 0, 1.0), seen(TIMEOUT, 1, 1.5)]
    earliest = fallback(timeouts, [], first_lost(timeouts))
    assert earliest is not None and earliest.ranks == (0, 1) and "earliest error" in earliest.reason


def test_a_run_level_cause_comes_before_the_scheduler() -> None:
    silent = Rule("silent", "Ranks went silent", "stalled", Severity.ERROR, Scope.RUN, "m")
    found = [seen(LOST, 3, 2.0, own=False)]
    cause = fallback(found, [Synthetic(silent, (2,), "rank 2 silent", ())], first_lost(found))
    assert cause is not None and cause.ranks == (2,) and cause.file is None


def test_nothing_wrong_means_no_cause() -> None:
    assert from_causes([]) is None and fallback([], [], first_lost([])) is None


def test_the_scheduler_is_not_believed_about_a_rank_that_timed_out_itself() -> None:
    """The scheduler names the first rank whose heartbeat stopped; a rank that logged its
    own timeout was alive and waiting, so it is a victim, never the root cause."""
    found = [seen(TIMEOUT, 0, 1.0), seen(LOST, 0, 2.0, own=False)]
    cause = fallback(found, [], first_lost(found))
    assert cause is not None and cause.rule == "timeout"  # the earliest error, not the scheduler
    other = [seen(TIMEOUT, 1, 1.0), seen(LOST, 0, 2.0, own=False)]
    believed = fallback(other, [], first_lost(other))
    assert believed is not None and believed.rule == "lost" and believed.ranks == (0,)


def test_a_rule_that_says_why_it_decides_is_quoted_not_a_stock_phrase() -> None:
    """A rule's `why` (filled from the state that made it fire) is the verdict's `why:`;
    what the verdict adds about other ranks still follows it."""
    pool = replace(OOM, why="the pool ran dry")
    cause = from_causes([seen(pool, 1, 1.0), seen(pool, 0, 3.0)])
    assert cause is not None
    assert cause.reason == "the pool ran dry; rank(s) 0 hit the same fault later"
    silent = Rule("silent", "Ranks went silent", "stalled", Severity.ERROR, Scope.RUN, "m")
    quiet = Synthetic(silent, (2,), "m", (), why="rank 2 went quiet first")
    named = fallback([], [quiet], first_lost([]))
    assert named is not None and named.reason == "rank 2 went quiet first"
