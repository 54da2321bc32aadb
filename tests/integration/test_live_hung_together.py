"""Before a collective's own timeout, ranks that stopped at one step are named together
(trial F3): which file stopped growing first is a print's flush, not the hang.

fixtures/cpu_hang_rank1_allreduce_timeout, written into a directory as it happened and judged
live on a clock the test moves: rank 1 blocks after step 3; rank 0 finishes step 3 and waits
in step 4's AllReduce until its receive times out naming rank 1 (18:40:45). Rank 0's file
stops growing 0.9 s before rank 1's (each print is dated by the GLOG line before it). The
trial saw the view name rank 0, the victim, `hung first`: at 1x with --stall-after 10, and
replayed at 0.2x (files 4 s apart) with the default 120 s, for the whole wait (on Ascend,
HCCL's 1800 s). Here, both gaps: the run as it is, and stretched five times (every log time
five times as far from the first: 0.2x). What holds:

* while the waiter is past --stall-after and the hung rank not yet, neither is named alone;
* once both are, `ranks 0-1` (the logs cannot tell them apart);
* at the waiter's timeout, `rank 1`, and it stays so (trial #27: it does not widen again);
* a rank whose last print is one step behind is not named alone: a rank prints a step after
  its collectives, so the other got through that step with it (the re-trial's C1);
* a rank more than a step behind the other is named alone, whichever file stopped first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from msrunwatch.judge.model import Report, Status
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock, Replay, judged, log_time, statuses, watching

HANG = FIXTURES / "cpu_hang_rank1_allreduce_timeout" / "msrun_log"
STAMP = re.compile(rb"(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3})\.(\d{3})")
FORMAT = "%Y-%m-%d-%H:%M:%S.%f"
ORIGIN = "2026-11-25-18:40:00.000"
"""Stretching keeps this time where it is (before the run's first line)."""


def stamp(text: str) -> float:
    when = log_time(f"):2026-11-25-{text} ".encode())
    assert when is not None
    return when


def stretched(source: Path, target: Path, factor: float) -> Path:
    """`source`'s files with every GLOG time `factor` times as far from ORIGIN: the run as
    a replay at 1/factor speed writes it (its steps and its gaps alike slower)."""
    origin = datetime.strptime(ORIGIN, FORMAT)

    def moved(m: re.Match[bytes]) -> bytes:
        when = datetime.strptime(m[1].decode() + m[2].decode(), FORMAT)
        shown = (origin + (when - origin) * factor).strftime(FORMAT)
        return f"{shown[:-3]}.{shown[-3:]}".encode()

    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(STAMP.sub(moved, path.read_bytes()))
    return target


def last_write(replay: Replay, name: str, before: float) -> float:
    """When the replay last writes `name` at or before `before` (its file's mtime then)."""
    return max(t for t, _ in replay.lines[name] if t <= before)


def named(report: Report) -> tuple[int, ...] | None:
    return None if report.root_cause is None else report.root_cause.ranks


@pytest.fixture(params=[1.0, 5.0], ids=["gap-0.9s-stall-10", "gap-4.4s-stall-120"])
def hang(
    request: pytest.FixtureRequest, tmp_path: Path, rules: list[Rule]
) -> Iterator[tuple[Replay, LiveRun, Clock, float]]:
    factor = request.param
    source = HANG if factor == 1.0 else stretched(HANG, tmp_path / "slow", factor)
    stall_after = 10.0 if factor == 1.0 else 120.0
    with watching(source, tmp_path / "msrun_log", rules, stall_after) as (replay, live, clock):
        yield replay, live, clock, stall_after


def test_ranks_stopped_at_one_step_are_named_together_until_the_timeout_names_one(
    hang: tuple[Replay, LiveRun, Clock, float],
) -> None:
    replay, live, clock, stall_after = hang
    timeout = min(t for t, line in replay.lines["worker_0.log"] if b"wait receiving" in line)
    replay.until(timeout - 1)
    waiter = last_write(replay, "worker_0.log", timeout - 1)
    hung = last_write(replay, "worker_1.log", timeout - 1)
    assert 0.5 < hung - waiter < 5.0  # the waiter's file stopped first, within a flush

    between = judged(live, clock, waiter + stall_after + (hung - waiter) / 2)
    assert named(between) in (None, (0, 1)), between.root_cause  # trial: `rank 0 hung first`

    both = judged(live, clock, hung + stall_after + 2)
    assert named(both) == (0, 1), both.root_cause
    assert both.root_cause is not None and "rank(s) 0-1 went quiet first" in both.root_cause.message
    assert "stopped together" in both.root_cause.reason, both.root_cause.reason

    replay.until(timeout + 1)
    timed_out = judged(live, clock, timeout + 2)
    assert named(timed_out) == (1,), timed_out.root_cause
    assert statuses(timed_out)[1] is Status.STALLED

    replay.until(timeout + 100)
    later = judged(live, clock, timeout + 100 + stall_after)
    assert named(later) == (1,), later.root_cause  # #27: not widened again


def behind(tmp_path: Path, steps: bytes) -> Path:
    """The hang run with rank 1's prints of `steps` (a regex alternation) taken out."""
    source = tmp_path / "behind"
    source.mkdir()
    for path in HANG.iterdir():
        text = path.read_bytes()
        if path.name == "worker_1.log":
            text = re.sub(rb"epoch: 1 step: (?:" + steps + rb"), loss is [0-9.]+\n", b"", text)
        (source / path.name).write_bytes(text)
    return source


@pytest.mark.parametrize(
    ("steps", "hung"),
    [(b"3", (0, 1)), (b"2|3", (1,))],
    ids=["one-step-behind-is-a-print-late", "two-steps-behind-is-named-alone"],
)
def test_a_rank_behind_is_named_alone_only_when_more_than_a_step_behind(
    tmp_path: Path, rules: list[Rule], steps: bytes, hung: tuple[int, ...]
) -> None:
    """The same run with rank 1's last print(s) taken out; rank 0's file still stops growing
    first. One step behind is the re-trial's C1 (a job cut at one instant named the rank
    whose step-8 print missed the cut by 0.7 ms): both; two steps behind: rank 1."""
    with watching(behind(tmp_path, steps), tmp_path / "msrun_log", rules, 10.0) as (
        replay,
        live,
        clock,
    ):
        replay.until(stamp("18:40:40.000"))
        waiter = last_write(replay, "worker_0.log", stamp("18:40:40.000"))
        last = last_write(replay, "worker_1.log", stamp("18:40:40.000"))
        assert waiter < last
        between = judged(live, clock, waiter + 10.4)
        assert named(between) != (0,), between.root_cause
        quiet = judged(live, clock, last + 12)
        assert named(quiet) == hung, quiet.root_cause
        said = "went quiet first" if len(hung) == 1 else "stopped together (within a step and"
        assert quiet.root_cause is not None and said in quiet.root_cause.reason
