"""The status logic, one row per kind of evidence: what each declared effect, exit code
and log ending makes of a rank, strongest evidence first."""

from __future__ import annotations

import pytest

from msrunwatch.judge.model import Status
from msrunwatch.judge.statuses import (
    EMPTY_LIVE,
    rank_status,
    rank_statuses,
    silent_ranks,
    with_rank_effects,
)
from msrunwatch.judge.sweep import first_lost
from msrunwatch.rules.vocab import Effect, Role, Severity
from tests.judge.builders import rank, rule, run, seen

OOM = rule("oom")
SIGKILL = rule("sigkill", effect=Effect.KILL, category="worker-killed")
KILLED_BY_MSRUN = rule("killed", role=Role.VICTIM, severity=Severity.WARNING)
TIMEOUT = rule("timeout", role=Role.SYMPTOM, category="hccl-timeout")
WARNING_CAUSE = rule("slow", severity=Severity.WARNING)
STALL = rule("stalled", effect=Effect.STALL, category="stalled")

ROWS = [
    # (name, own sightings, rank kwargs, run_failed, lost_first, writing, status)
    ("own fault fails it", [seen(OOM, 0, 1.0)], {}, True, False, False, Status.FAILED),
    (
        "a kill it suffered on its own",
        [seen(SIGKILL, 0, 1.0)],
        {},
        True,
        False,
        False,
        Status.KILLED,
    ),
    ("a victim finding", [seen(KILLED_BY_MSRUN, 0, 1.0)], {}, True, False, False, Status.KILLED),
    (
        "cause beats an earlier victim",
        [seen(KILLED_BY_MSRUN, 0, 1.0), seen(OOM, 0, 2.0)],
        {},
        True,
        False,
        False,
        Status.FAILED,
    ),
    ("timeout alone", [seen(TIMEOUT, 0, 1.0)], {}, True, False, False, Status.TIMED_OUT),
    ("SIGKILL from msrun's console", [], {"exit_code": -9}, True, False, False, Status.KILLED),
    ("SIGSEGV from msrun's console", [], {"exit_code": -11}, True, False, False, Status.FAILED),
    (
        "a signal beats its own timeout",
        [seen(TIMEOUT, 0, 1.0)],
        {"exit_code": -11},
        True,
        False,
        False,
        Status.FAILED,
    ),
    ("exit code 1", [], {"exit_code": 1}, True, False, False, Status.FAILED),
    (
        "a timeout beats exit code 1",
        [seen(TIMEOUT, 0, 1.0)],
        {"exit_code": 1},
        True,
        False,
        False,
        Status.TIMED_OUT,
    ),
    ("ended normally", [], {"finished_line": 9}, False, False, False, Status.FINISHED),
    ("lost first by the scheduler", [], {}, True, "lost first", False, Status.FAILED),
    ("quiet after another failed", [], {}, True, False, False, Status.KILLED),
    ("still writing after another failed", [], {}, True, False, True, Status.STARTING),
    (
        "a warning cause changes nothing",
        [seen(WARNING_CAUSE, 0, 1.0)],
        {},
        False,
        False,
        False,
        Status.STARTING,
    ),
    ("no line at all", [], {"lines": 0, "first_time": None}, False, False, False, Status.UNKNOWN),
    (
        "prints but no GLOG line yet (GLOG_v=3)",
        [],
        {"lines": 1, "first_time": None},
        False,
        False,
        False,
        Status.STARTING,
    ),
]


@pytest.mark.parametrize(
    ("own", "facts", "run_failed", "lost_first", "writing", "status"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_rank_status(own, facts, run_failed, lost_first, writing, status) -> None:  # type: ignore[no-untyped-def]
    r = rank(0, **facts)
    got, reason = rank_status(r, own, run(r), run_failed, lost_first, writing)
    assert got is status
    assert reason or got in (Status.STARTING, Status.UNKNOWN)


def test_the_scheduler_losing_a_rank_fails_the_run_and_names_the_first() -> None:
    lost = rule("lost", role=Role.SYMPTOM, effect=Effect.LOSE_FIRST, category="node-timeout")
    ranks = (rank(0), rank(1))
    found = [seen(lost, 1, 5.0, own=False)]
    statuses = rank_statuses(run(*ranks), {}, found, None, 120.0, first_lost(found))
    assert statuses[1][0] is Status.FAILED
    assert statuses[0][0] is Status.KILLED


def test_expected_ranks_without_a_log_are_unknown_or_finished() -> None:
    r0 = rank(0, finished_line=3)
    facts = run(r0, unregistered=frozenset({2}))
    facts = type(facts)(**{**facts.__dict__, "expected_ranks": 3})
    statuses = rank_statuses(facts, {}, [], None, 120.0, None)
    assert statuses[1][0] is Status.UNKNOWN and statuses[2][0] is Status.FINISHED


def test_an_empty_log_is_starting_only_while_watched_and_nothing_failed() -> None:
    """msrun opens a worker's log as it starts the process; the first line comes seconds
    later (MindSpore's import). Watched, such a rank is `starting`, not `unknown`; after the
    run, once another rank failed, or past --stall-after, an empty log is `unknown`."""
    empty, busy = rank(0, lines=0, first_time=None), rank(1)
    facts = run(empty, busy)
    watched = rank_statuses(facts, {}, [], {0: 1.0, 1: 0.5}, 120.0, None)
    assert watched[0] == (Status.STARTING, EMPTY_LIVE)
    assert rank_statuses(facts, {}, [], None, 120.0, None)[0][0] is Status.UNKNOWN  # triage
    assert rank_statuses(facts, {}, [], {0: 121.0, 1: 0.5}, 120.0, None)[0][0] is Status.UNKNOWN
    failed = rank_statuses(facts, {1: [seen(OOM, 1, 1.0)]}, [], {0: 1.0, 1: 0.5}, 120.0, None)
    assert failed[0][0] is Status.UNKNOWN and failed[1][0] is Status.FAILED


def test_silent_ranks_are_the_quiet_ones_while_others_timed_out() -> None:
    plain = {0: Status.TIMED_OUT, 1: Status.TRAINING, 2: Status.FINISHED}
    assert silent_ranks(plain, None) == [1]
    assert silent_ranks({0: Status.TRAINING}, None) == []
    assert silent_ranks(plain, {1: 3.0}) == []  # live: still writing, about to time out


def test_a_rank_rules_effect_applies_only_to_a_rank_that_has_not_ended() -> None:
    statuses = {0: (Status.TRAINING, ""), 1: (Status.FAILED, "oom")}
    own = {0: [seen(STALL, 0, 9.0)], 1: [seen(STALL, 1, 9.0)]}
    out = with_rank_effects(statuses, own)
    assert out[0][0] is Status.STALLED and out[1][0] is Status.FAILED


def test_live_a_quiet_rank_waits_until_msrun_says_it_kills_the_workers() -> None:
    r = rank(0)
    live_run = run(r)
    status, reason = rank_status(r, [], live_run, run_failed=True, live=True)
    assert status is Status.WAITING and reason.startswith("quiet since")
    confirmed = type(live_run)(**{**live_run.__dict__, "kill_all_time": 5.0})
    assert rank_status(r, [], confirmed, run_failed=True, live=True)[0] is Status.KILLED
    assert rank_status(r, [], live_run, run_failed=True, live=False)[0] is Status.KILLED


def test_live_a_quiet_rank_waits_until_the_scheduler_gives_up_on_the_job() -> None:
    """Without msrun's console (seldom inside --log_dir), the scheduler's shutdown with
    abnormal nodes says the job is over: it exits, and msrun stops every worker left."""
    r = rank(0)
    live_run = run(r)
    over = type(live_run)(**{**live_run.__dict__, "scheduler_gave_up_time": 5.0})
    status, reason = rank_status(r, [], over, run_failed=True, live=True)
    assert status is Status.KILLED and reason == "its log stops after another rank failed"
    writing = rank_status(r, [], over, run_failed=True, writing=True, live=True)
    assert writing[0] is Status.STARTING  # still writing (in its phase): not stopped yet


def test_a_rank_that_hung_before_msrun_stopped_it_hung_first() -> None:
    """fixtures/cpu_rank1_never_registers: rank 1 hung before init(), then msrun killed it;
    the headline read `rank 1 was killed first: stalled` (its status was `killed`)."""
    statuses = {0: (Status.KILLED, "stopped"), 1: (Status.KILLED, "stopped")}
    ranked = {0: [seen(STALL, 0, 9.0)], 1: [seen(STALL, 1, 9.0)]}
    own = {1: [seen(OOM, 1, 8.0)]}  # a fault of its own says how it ended
    out = with_rank_effects(statuses, ranked, own)
    assert out[0] == (Status.STALLED, f"{STALL.message}; then stopped")
    assert out[1][0] is Status.KILLED
    assert with_rank_effects(statuses, ranked)[0][0] is Status.KILLED  # own lines not known
