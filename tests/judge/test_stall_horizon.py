"""The live view judges an ended run again until every file has been quiet longer than any
silence a rule compares with (live.run.time_horizon). That horizon and the rules' own
threshold come from one figure, `stall_cadences`: a rule that judged silence against its
own literal multiple of the cadence could outlast the horizon, and the view would stop
judging before the rule could fire."""

from __future__ import annotations

import re

from msrunwatch.live.run import time_horizon
from msrunwatch.read.facts import FileFacts, FileRole, Progress
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.model import Rule
from msrunwatch.rules.variables import STALL_CADENCES, RankState, RunFigures, values

LITERAL_FACTOR = re.compile(r"\d\s*\*\s*(?:median_)?cadence_s|(?:median_)?cadence_s\s*\*\s*\d")


def _run(cadence_s: float) -> RunFacts:
    progress = Progress(step=40, lines=40, cadence_s=cadence_s)
    facts = FileFacts(
        path="worker_0.log", log_dir="logs", role=FileRole.WORKER, lines=40, progress=progress
    )
    return RunFacts(log_dirs=("logs",), ranks=(RankFacts(0, (facts,)),))


def test_no_rule_compares_silence_with_its_own_multiple_of_the_cadence(rules: list[Rule]) -> None:
    cadenced = [r for r in rules if r.when is not None and "cadence_s" in r.when.source]
    assert {r.id for r in cadenced} >= {"rank-stalled", "run-stalled"}
    for rule in cadenced:
        assert rule.when is not None
        assert not LITERAL_FACTOR.search(rule.when.source), (rule.id, rule.when.source)
        assert "stall_cadences" in rule.when.source, rule.id


def test_rank_stalled_fires_only_past_the_live_horizon(rules: list[Rule]) -> None:
    """A rank writing a step every 30 s with --stall-after 10: the horizon is 300 s, and
    rank-stalled fires past it, not before."""
    horizon = time_horizon(_run(30.0), 10.0)
    assert horizon == STALL_CADENCES * 30.0
    (stalled,) = [r for r in rules if r.id == "rank-stalled"]
    assert stalled.when is not None

    def fires(silence_s: float) -> bool:
        state = RankState(
            rank=0, status="training", silence_s=silence_s, cadence_s=30.0, ranks_writing_after=1
        )
        figures = RunFigures(stall_after_s=10.0, ranks_writing=1)
        return bool(stalled.when.truth({**values(state), **values(figures)}))  # type: ignore[union-attr]

    assert not fires(horizon - 1) and fires(horizon + 1)
