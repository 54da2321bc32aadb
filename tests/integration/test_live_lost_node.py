"""Live, the scheduler's first `The node: N is timed out` names that rank at once.

fixtures/cpu_2nodes_node1_killed (a real MindSpore 2.10.0 run on two msrun nodes), written
as it happened: node 1 (ranks 2-3) was killed whole at step 5; the scheduler logs `The node:
3 is timed out` at 08:40:18.097 and only at 08:40:22.348, when it gives up, its summary
naming `worker 3 ... the first one timed out`. In those 4 s the view said `FAILED the job
failed: node-timeout` (the earliest error, about no rank) before `rank 3 failed first`
(trial s29b, "Two nodes live"): now the rank the scheduler timed out is named from the first
line, and the summary confirms it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from msrunwatch.judge.model import Report
from msrunwatch.live.run import LiveRun
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock, Replay, judged, log_time

RUN = FIXTURES / "cpu_2nodes_node1_killed"


def at(stamp: str) -> float:
    when = log_time(f"):2026-11-28-{stamp} ".encode())
    assert when is not None
    return when


Nodes = tuple[list[Replay], LiveRun, Clock]


@pytest.fixture
def nodes(tmp_path: Path, rules: list[Rule]) -> Iterator[Nodes]:
    yield from _nodes(tmp_path, rules, 120.0)


@pytest.fixture
def nodes_15s(tmp_path: Path, rules: list[Rule]) -> Iterator[Nodes]:
    yield from _nodes(tmp_path, rules, 15.0)


def _nodes(tmp_path: Path, rules: list[Rule], stall_after_s: float) -> Iterator[Nodes]:
    replays = []
    for node in ("node0", "node1"):
        (tmp_path / node).mkdir()
        replays.append(Replay(RUN / node / "msrun_log", tmp_path / node / "msrun_log"))
    clock = Clock()
    targets = [str(r.target) for r in replays]
    live = LiveRun(targets, rules, stall_after_s=stall_after_s, clock=clock)
    try:
        yield replays, live, clock
    finally:
        live.close()


def verdict(nodes: Nodes, stamp: str) -> Report:
    replays, live, clock = nodes
    for replay in replays:
        replay.until(at(stamp))
    return judged(live, clock, at(stamp))


def test_the_first_timeout_names_its_rank_before_the_summary(nodes: Nodes) -> None:
    assert verdict(nodes, "08:40:10.000").outcome != "failed"  # node 1 gone, not yet noticed
    first = verdict(nodes, "08:40:20.000")  # `The node: 3 is timed out`, no summary yet
    assert first.root_cause is not None and first.root_cause.ranks == (3,)
    assert fmt.headline(first).startswith("rank 3 failed first: node-timeout")
    later = verdict(nodes, "08:40:23.000")  # the summary: `worker 3 is the first`
    assert later.root_cause is not None and 3 in later.root_cause.ranks
    assert not fmt.headline(later).startswith("the job")


def test_once_the_scheduler_timed_a_rank_out_the_silences_do_not_overrule_it(
    nodes_15s: Nodes,
) -> None:
    """With --stall-after 15 the view names ranks 2-3 hung (their logs went quiet first),
    then the scheduler's rank 3; it went back to `rank 2 hung first: stalled` (run-stalled:
    the rank an earlier verdict held hung) 9 s later. The scheduler's word now stands."""
    assert verdict(nodes_15s, "08:40:10.000").root_cause is not None  # hung, so far
    after = [verdict(nodes_15s, f"08:40:{s:02d}.500") for s in range(19, 40, 2)]
    causes = {r.root_cause.rule for r in after if r.root_cause is not None}
    assert "run-stalled" not in causes, causes
    assert all(r.root_cause is not None and 3 in r.root_cause.ranks for r in after)
