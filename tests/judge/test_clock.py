"""Is the run over? One row per way the clock is read (judge.clock): a clock on the logs'
own scale, the files' mtimes believed or taken for a copy's reset, the time-zone margin."""

from __future__ import annotations

from dataclasses import replace

import pytest

from msrunwatch.judge.clock import ENDED_WITH_OTHERS, ZONE_MARGIN_S, quiet_for, run_over, stopped
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Status
from msrunwatch.read.facts import Progress
from msrunwatch.read.runstate import RankFacts
from tests.judge.builders import rank, run

LINE = 1_000_000.0
"""The newest log line of the run below, on the logs' scale."""


def dated(number: int, last: float) -> RankFacts:
    r = rank(number)
    return replace(r, files=(replace(r.primary, last_time=last),))


RUN = run(dated(0, LINE - 5.0), dated(1, LINE))

ROWS = [
    # (name, context, quiet seconds and margin)
    ("the clock not consulted (live view)", Context(), None),
    ("--now on the logs' scale", Context(clock=LINE + 30.0, pinned=True), (30.0, 0.0)),
    (
        "an mtime believed",
        Context(clock=LINE + 500.0, written=LINE + 200.0),
        (300.0, 0.0),
    ),
    (
        "an mtime in the future is a reset: the newest line, with the zone margin",
        Context(clock=LINE + 500.0, written=LINE + 900.0),
        (500.0, ZONE_MARGIN_S),
    ),
    (
        "an mtime a day after the newest line is a copy's reset",
        Context(clock=LINE + 2 * ZONE_MARGIN_S, written=LINE + ZONE_MARGIN_S + 10.0),
        (2 * ZONE_MARGIN_S, ZONE_MARGIN_S),
    ),
    (
        "no mtime: the newest line, with the zone margin",
        Context(clock=LINE + 10.0),
        (10.0, ZONE_MARGIN_S),
    ),
]


@pytest.mark.parametrize(("name", "ctx", "quiet"), ROWS, ids=[r[0] for r in ROWS])
def test_quiet_for(name: str, ctx: Context, quiet: tuple[float, float] | None) -> None:
    assert quiet_for(RUN, ctx) == quiet


def test_an_undated_run_is_not_judged_by_the_clock() -> None:
    undated = run(rank(0))
    assert quiet_for(undated, Context(clock=LINE, pinned=True)) is None
    assert quiet_for(undated, Context(clock=LINE)) is None
    assert quiet_for(undated, Context(clock=LINE, written=LINE - 500.0)) == (500.0, 0.0)


def test_over_only_past_the_stall_threshold_and_its_margin() -> None:
    inside = Context(clock=LINE + 100.0, pinned=True, stall_after_s=120.0)
    past = replace(inside, clock=LINE + 121.0)
    assert run_over(RUN, inside) is None
    over = run_over(RUN, past)
    assert over is not None and over.quiet_s == 121.0
    assert "120 s" in over.why
    copied = Context(clock=LINE + 3600.0)  # only log lines tell it: a day's margin
    assert run_over(RUN, copied) is None
    assert run_over(RUN, Context(finished=True)) is not None


def test_ranks_without_an_end_are_stopped_unless_they_ended_with_the_others() -> None:
    finished = replace(dated(0, LINE), files=(replace(dated(0, LINE).primary, finished_line=9),))
    late = run(finished, dated(1, LINE - 1.0), dated(2, LINE - 600.0), dated(3, LINE))
    statuses = {
        0: (Status.FINISHED, ""),
        1: (Status.TRAINING, ""),
        2: (Status.TRAINING, ""),
        3: (Status.FAILED, "oom"),
    }
    over = run_over(late, Context(finished=True))
    result = stopped(statuses, over, late, 120.0)
    assert result[1] == (Status.FINISHED, ENDED_WITH_OTHERS)
    assert result[2][0] is Status.STOPPED and "--finished" in result[2][1]
    assert result[3] == (Status.FAILED, "oom")
    assert stopped(statuses, None, late, 120.0) == statuses


def stepped(number: int, last: float, step: int, epoch: int | None = 1) -> RankFacts:
    r = dated(number, last)
    return replace(r, files=(replace(r.primary, progress=Progress(step=step, epoch=epoch)),))


def test_a_rank_behind_the_finished_ones_stopped_however_close_its_last_line() -> None:
    """A rank whose log stops 15 steps before the ranks that ended normally did not end with
    them, even though its last line is within the window of theirs (a new user's replay: it
    was `finished`, and the run OK)."""
    done = stepped(0, LINE, 20)
    done = replace(done, files=(replace(done.primary, finished_line=90),))
    late = run(done, stepped(1, LINE - 11.0, 5), stepped(2, LINE - 1.0, 20), dated(3, LINE))
    statuses = {0: (Status.FINISHED, "")} | dict.fromkeys((1, 2, 3), (Status.TRAINING, ""))
    result = stopped(statuses, run_over(late, Context(finished=True)), late, 120.0)
    assert result[1] == (
        Status.STOPPED,
        "its log stops without an end marker at epoch 1 step 5, behind the ranks that ended "
        "normally (epoch 1 step 20), and the run is over: --finished says so",
    )
    assert result[2] == (Status.FINISHED, ENDED_WITH_OTHERS)  # at their step
    assert result[3] == (Status.FINISHED, ENDED_WITH_OTHERS)  # no progress of its own


def test_an_earlier_epoch_is_behind_a_higher_step_number_is_not() -> None:
    """LossMonitor counts steps within an epoch: epoch 2 step 1 is further than epoch 1 step 9."""
    done = stepped(0, LINE, 1, epoch=2)
    done = replace(done, files=(replace(done.primary, finished_line=90),))
    late = run(done, stepped(1, LINE, 9, epoch=1), stepped(2, LINE, 1, epoch=2))
    statuses = {0: (Status.FINISHED, "")} | dict.fromkeys((1, 2), (Status.TRAINING, ""))
    result = stopped(statuses, run_over(late, Context(finished=True)), late, 120.0)
    assert result[1][0] is Status.STOPPED and "epoch 1 step 9" in result[1][1]
    assert result[2] == (Status.FINISHED, ENDED_WITH_OTHERS)
