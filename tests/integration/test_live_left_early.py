"""A rank that leaves the cluster early is named so live, not its waiting peer as hung.

fixtures/cpu_early_exit_rank1_sysexit0 (a real MindSpore 2.10.0 run), written into a directory
as it happened: rank 1 calls sys.exit(0) after step 3 (its log stops at 18:47:04.208, the
scheduler logs `Node 1 has unregistered.` at 18:47:04.733); rank 0 waits in the step-4
AllReduce, logs that a peer closed its connection at 18:47:07.504, and times out at
18:47:34.163 naming rank 1. The live view said `rank 0 hung first` (run-stalled) from
--stall-after after rank 0 went quiet until rank 0's own timeout: 30 s on CPU, 30 minutes
under HCCL's default. Healthy runs, whose ranks all unregister at their end, never read so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from msrunwatch.judge.model import Report, Status
from msrunwatch.live.run import LiveRun
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from tests.integration.test_live_waiters import at
from tests.support import FIXTURES, Clock, Replay, judged, statuses, watching

EARLY = FIXTURES / "cpu_early_exit_rank1_sysexit0" / "msrun_log"
HEALTHY = FIXTURES / "cpu_dp2_success_glog2" / "msrun_log"
STALL_AFTER_S = 10.0


@pytest.fixture
def early(tmp_path: Path, rules: list[Rule]) -> Iterator[tuple[Replay, LiveRun, Clock]]:
    with watching(EARLY, tmp_path / "msrun_log", rules, STALL_AFTER_S) as watched:
        yield watched


def left_early(report: Report) -> None:
    """Rank 1 named as the rank that left early, rank 0 as waiting on it."""
    cause = report.root_cause
    assert cause is not None and cause.ranks == (1,), cause
    assert cause.category == "early-exit", cause
    assert cause.reason.startswith(  # the rule's why, not "read from rank 1's whole log"
        "the scheduler saw rank 1 leave the cluster with no fault and no normal end"
    ), cause.reason
    assert statuses(report) == {0: Status.WAITING, 1: Status.FINISHED}
    one = report.ranks[1]
    assert one.status_reason.startswith("Rank 1 left the cluster"), one.status_reason
    assert "after its last line at 18:47:04, at step 3, while rank(s) 0" in one.status_reason
    assert report.ranks[0].waiting_on == (1,)
    assert "after another rank left the cluster; waiting on rank 1" in (
        report.ranks[0].status_reason
    )
    assert fmt.cause_verb(report) not in ("hung", "hung first")


def test_the_rank_that_left_is_named_while_its_peer_waits(
    early: tuple[Replay, LiveRun, Clock],
) -> None:
    written, live, clock = early
    written.until(at("18:47:05.000"))  # rank 1 gone; rank 0 may still be finishing
    leaving = judged(live, clock, at("18:47:05.500"))
    assert leaving.root_cause is None
    assert statuses(leaving) == {0: Status.TRAINING, 1: Status.FINISHED}

    written.until(at("18:47:08.000"))  # rank 0: a peer closed its connection
    for now in ("18:47:18.000", "18:47:25.000", "18:47:33.000"):  # quiet past --stall-after
        left_early(judged(live, clock, at(now)))


def test_its_peer_timing_out_keeps_the_same_rank_and_category(
    early: tuple[Replay, LiveRun, Clock],
) -> None:
    written, live, clock = early
    written.until(at("18:47:08.000"))
    left_early(judged(live, clock, at("18:47:20.000")))
    written.until(at("18:47:40.000"))  # rank 0's AllReduce times out naming rank 1
    named = judged(live, clock, at("18:47:41.000"))
    cause = named.root_cause
    assert cause is not None and cause.ranks == (1,) and cause.category == "early-exit", cause
    assert statuses(named) == {0: Status.TIMED_OUT, 1: Status.FINISHED}
    assert named.ranks[1].status_reason.startswith(  # as post mortem: the row says why too
        "left early: Ring ReduceScatter waited for rank 1 and gave up (worker_0.log:62)"
    ), named.ranks[1].status_reason


def test_a_healthy_run_whose_ranks_leave_seconds_apart_reads_healthy(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """cpu_dp2_success_glog2: the scheduler sees one rank unregister 2 s before the other."""
    with watching(HEALTHY, tmp_path / "msrun_log", rules, STALL_AFTER_S) as (written, live, clock):
        end = max(t for dated in written.lines.values() for t, _ in dated if t)
        for now in range(int(end) - 8, int(end) + 30, 2):
            written.until(now)
            report = judged(live, clock, now + 0.5)
            assert report.root_cause is None, (now - end, report.root_cause)
            assert not any(r.status_reason.startswith("Rank ") for r in report.ranks)
