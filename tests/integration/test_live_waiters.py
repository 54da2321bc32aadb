"""A rank that only waits for a stopped peer is its victim, not a co-culprit once it goes
quiet too (trial #27: the live root cause widened from `rank 1` to `ranks 0-1`).

fixtures/cpu_kill9_rank1 without msrun's console, written into a directory as it happened:
rank 1 is SIGKILLed after step 4 (its log stops at 19:02:51); rank 0 writes on until
19:02:54 (a peer closed its connection), then waits; the scheduler times out node 0 at
19:03:20 and gives up on the job at 19:03:22. The view names rank 1 hung while rank 0 still
writes (its last line saw a peer go: it outlived rank 1); rank 0 going quiet 2.6 s later,
within run-stalled's quiet_gap_s, does not make it a cause: it reads `waiting` on rank 1 (it
was `training`, as if at work, above a hung headline) until the scheduler gives up, then
`killed`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from msrunwatch.judge.model import Status
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock, Replay, judged, log_time, statuses, watching

KILLED = FIXTURES / "cpu_kill9_rank1" / "msrun_log"
STALL_AFTER_S = 10.0


def at(stamp: str) -> float:
    when = log_time(f"):2026-11-25-{stamp} ".encode())
    assert when is not None
    return when


@pytest.fixture
def replay(tmp_path: Path, rules: list[Rule]) -> Iterator[tuple[Replay, LiveRun, Clock]]:
    with watching(KILLED, tmp_path / "msrun_log", rules, STALL_AFTER_S) as watched:
        yield watched


def test_the_rank_named_first_stays_the_root_cause_when_its_waiter_goes_quiet(
    replay: tuple[Replay, LiveRun, Clock],
) -> None:
    written, live, clock = replay
    written.until(at("19:02:55.000"))
    named = judged(live, clock, at("19:03:01.000"))  # rank 1 quiet 12 s, rank 0 for 9 s
    assert named.root_cause is not None and named.root_cause.ranks == (1,)
    assert statuses(named)[1] is Status.STALLED

    quiet = judged(live, clock, at("19:03:08.000"))  # both quiet past --stall-after
    assert quiet.root_cause is not None and quiet.root_cause.ranks == (1,), quiet.root_cause
    assert "rank(s) 1 went quiet first" in quiet.root_cause.message
    assert statuses(quiet) == {0: Status.WAITING, 1: Status.STALLED}  # a victim, not at work
    assert quiet.ranks[0].waiting_on == (1,)
    assert quiet.ranks[0].status_reason.startswith("quiet since 19:02:54 while another rank")

    written.until(at("19:03:21.000"))  # the scheduler times out node 0, its victim
    timed_out = judged(live, clock, at("19:03:21.500"))
    assert timed_out.root_cause is not None and timed_out.root_cause.ranks == (1,)
    assert statuses(timed_out)[1] is Status.STALLED
    assert timed_out.ranks[0].waiting_on == (1,)

    written.until(at("19:03:30.000"))  # its shutdown finds the abnormal node: the job is over
    ended = judged(live, clock, at("19:03:40.000"))
    assert ended.root_cause is not None and ended.root_cause.ranks == (1,), ended.root_cause
    assert statuses(ended) == {0: Status.KILLED, 1: Status.STALLED}  # msrun stops rank 0


def test_a_view_opened_once_both_are_quiet_names_the_rank_its_peer_saw_go(
    replay: tuple[Replay, LiveRun, Clock],
) -> None:
    """Opened after both went quiet, the view has no earlier verdict, and the files stopped
    2.6 s apart, within a flush (run-stalled's quiet_gap_s): that alone would name both. But
    rank 0's last line says a peer's connection closed (`Client connected end of file!`),
    2.6 s after rank 1's log went silent: rank 0 was alive after rank 1 stopped."""
    written, live, clock = replay
    written.until(at("19:02:55.000"))
    quiet = judged(live, clock, at("19:03:08.000"))
    assert quiet.root_cause is not None and quiet.root_cause.ranks == (1,), quiet.root_cause
    assert "rank(s) 1 went quiet first" in quiet.root_cause.message
