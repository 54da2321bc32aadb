"""The scheduler's "first one timed out" is believed only when it lost that node alone: when
it timed out several in one sweep, each rank's own log decides (an end marker, then the
time its log went silent), and when nothing does, the ranks are tied. The real case:
fixtures/cpu_segv_after_finished without msrun's console, where the scheduler named rank 0
although rank 1 had died and its log went silent 41 ms before rank 0's."""

from __future__ import annotations

import shutil
from pathlib import Path

from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Status
from msrunwatch.judge.rootcause import fallback
from msrunwatch.judge.statuses import rank_statuses
from msrunwatch.judge.sweep import first_lost, swept_with
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Effect, Role
from tests.judge.builders import rank, rule, run, seen
from tests.support import FIXTURES

FIRST = rule("first", role=Role.SYMPTOM, effect=Effect.LOSE_FIRST, category="node-timeout")
LOST = rule("lost", role=Role.SYMPTOM, effect=Effect.LOSE, category="node-timeout")
OOM = rule("oom")
TIMEOUT = rule("timeout", role=Role.SYMPTOM, category="hccl-timeout")


def scheduler(named: int, *timed_out: tuple[int, float]) -> list:  # type: ignore[type-arg]
    """The scheduler's per-node timeouts (rank, time) and its "first one" line after them."""
    found = [seen(LOST, r, t, own=False, line=i) for i, (r, t) in enumerate(timed_out, 1)]
    last = max(t for _, t in timed_out)
    return [*found, seen(FIRST, named, last + 5.0, own=False, line=len(found) + 1)]


ONE_SWEEP = scheduler(0, (0, 41.272612), (1, 41.272625))


def test_one_sweep_is_the_ranks_timed_out_within_milliseconds() -> None:
    assert swept_with(ONE_SWEEP, 0) == [0, 1]
    assert swept_with(scheduler(0, (0, 41.0), (1, 44.0)), 0) == [0]
    assert swept_with(ONE_SWEEP[-1:], 0) == [0]  # no per-node line: nothing to compare


def test_the_log_that_went_silent_first_decides_within_a_sweep() -> None:
    """cpu_segv_after_finished's facts: both ranks printed their end, rank 1's log
    stopped at 10.382, rank 0's at 10.424."""
    facts = run(
        rank(0, finished_line=20, last_time=10.424), rank(1, finished_line=16, last_time=10.382)
    )
    lost = first_lost(ONE_SWEEP, facts)
    assert lost is not None and lost.ranks == (1,)
    assert "ranks 0-1 in one sweep" in lost.why
    assert "rank 1's own log went silent first (42 ms before" in lost.why
    cause = fallback(ONE_SWEEP, [], first_lost(ONE_SWEEP, facts))
    assert cause is not None and cause.ranks == (1,) and "went silent first" in cause.reason


def test_the_scheduler_is_believed_about_a_node_it_lost_alone() -> None:
    facts = run(rank(0, last_time=10.424), rank(1, last_time=10.382))
    apart = scheduler(0, (0, 41.0), (1, 44.0))
    lost = first_lost(apart, facts)
    assert lost is not None and lost.ranks == (0,) and lost.why == ""
    assert first_lost(ONE_SWEEP) is not None and first_lost(ONE_SWEEP).ranks == (0,)  # type: ignore[union-attr]


def test_a_rank_without_its_normal_end_goes_before_one_that_ended() -> None:
    facts = run(rank(0, last_time=10.5), rank(1, finished_line=16, last_time=10.0))
    lost = first_lost(scheduler(1, (1, 41.0), (0, 41.00001)), facts)
    assert lost is not None and lost.ranks == (0,)
    assert "rank(s) 1 logged their normal end" in lost.why


def test_ranks_silent_at_the_same_time_are_tied() -> None:
    facts = run(rank(0, last_time=10.4000), rank(1, last_time=10.4004), rank(2, last_time=12.0))
    found = scheduler(0, (0, 41.0), (1, 41.00002), (2, 41.00004))
    lost = first_lost(found, facts)
    assert lost is not None and lost.ranks == (0, 1) and "ranks 0-1 are tied" in lost.why
    cause = fallback(found, [], first_lost(found, facts))
    assert cause is not None and cause.ranks == (0, 1)


def test_a_log_without_a_time_leaves_the_ranks_tied() -> None:
    facts = run(rank(0, last_time=10.4), rank(1, last_time=None))
    lost = first_lost(ONE_SWEEP, facts)
    assert lost is not None and lost.ranks == (0, 1) and "not every log has a time" in lost.why


def test_ranks_on_clocks_that_cannot_tell_42_ms_apart_are_tied() -> None:
    facts = run(rank(0, last_time=10.424), rank(1, last_time=10.382))
    clocks = {
        ("logs", "worker_0.log"): ("node0", 0.1, True),
        ("logs", "worker_1.log"): ("node1", 0.1, True),
    }
    lost = first_lost(ONE_SWEEP, facts, clocks)
    assert lost is not None and lost.ranks == (0, 1)
    same = dict.fromkeys(clocks, ("node0", 0.1, True))
    assert first_lost(ONE_SWEEP, facts, same).ranks == (1,)  # type: ignore[union-attr]


def test_a_rank_that_only_waited_is_no_suspect() -> None:
    """A timeout of its own (an error, not a cause): it was alive and waiting."""
    facts = run(rank(0, last_time=10.382), rank(1, last_time=10.424))
    found = [seen(TIMEOUT, 0, 9.0), *scheduler(0, (0, 41.272612), (1, 41.272625))]
    lost = first_lost(found, facts)
    assert lost is not None and lost.ranks == (1,)


def test_a_sweep_with_a_ranks_own_fault_keeps_the_schedulers_word() -> None:
    """synth_multinode_no_node_rank: rank 2 raised, node 1's msrun killed rank 3, and the
    scheduler timed out both in one sweep: rank 3 was not lost first, it was stopped."""
    facts = run(rank(2, last_time=10.0), rank(3, last_time=10.5))
    found = [seen(OOM, 2, 9.0), *scheduler(2, (2, 41.0), (3, 41.00003))]
    lost = first_lost(found, facts)
    assert lost is not None and lost.ranks == (2,) and lost.why == ""
    assert rank_statuses(facts, {2: [found[0]]}, found, None, 120.0, lost)[3][0] is Status.KILLED


def test_the_status_of_the_rank_lost_first_says_why() -> None:
    facts = run(rank(0, last_time=10.424), rank(1, last_time=10.382))
    statuses = rank_statuses(facts, {}, ONE_SWEEP, None, 120.0, first_lost(ONE_SWEEP, facts))
    assert statuses[1][0] is Status.FAILED and "went silent first" in statuses[1][1]
    assert statuses[0][0] is Status.KILLED


def test_the_real_run_without_msruns_console_names_rank_1(
    rules: list[Rule], tmp_path: Path
) -> None:
    """fixtures/cpu_segv_after_finished's msrun_log alone (before: `rank 0 finished, with:
    node-timeout`); with the console, msrun's exit code -11 names rank 1 as before."""
    logs = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / "cpu_segv_after_finished" / "msrun_log", logs)
    alone = triage([str(logs)], rules)
    assert alone.outcome == "failed" and alone.root_cause is not None
    assert alone.root_cause.ranks == (1,)
    assert "rank 1's own log went silent first (4" in alone.root_cause.reason
    both = triage([str(FIXTURES / "cpu_segv_after_finished")], rules)
    assert both.root_cause is not None and both.root_cause.ranks == (1,)
    assert both.root_cause.category == "segfault"


def test_before_its_summary_the_scheduler_first_timed_out_rank_is_its_word() -> None:
    """Live, between `The node: N is timed out` and the summary naming the first (4 s in
    fixtures/cpu_2nodes_node1_killed): the first rank it timed out, not no rank at all."""
    facts = run(rank(0, last_time=10.0), rank(1, last_time=10.0))
    lines = scheduler(1, (1, 41.0), (0, 44.0))[:-1]  # no summary yet
    lost = first_lost(lines, facts)
    assert lost is not None and lost.ranks == (1,)
    cause = fallback(lines, [], lost)
    assert cause is not None and cause.ranks == (1,)
