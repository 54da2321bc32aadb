"""A rank goes silent and its peer finishes: the live view's header and rows still agree. A
new user replayed a real healthy run (fixtures/cpu_sigterm_msrun_only) with rank 1's log cut
after step 5 while rank 0 trained on and ended normally; once rank 0 had written its end, the
view said `RUNNING  no faults so far` above rank 1's `stalled` row (run-stalled waited for
every rank, the finished one included, to be quiet for --stall-after).
"""

from __future__ import annotations

from pathlib import Path

from msrunwatch.judge.model import Status
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, judged, log_time, statuses, watching

SOURCE = FIXTURES / "cpu_sigterm_msrun_only" / "msrun_log"
CUT = {"worker_1.log": 61, "scheduler.log": 23}
"""Rank 1's log ends after `epoch: 1 step: 5`; the scheduler's lines on its leaving are gone."""


def _cut_copy(target: Path) -> Path:
    target.mkdir()
    for path in SOURCE.iterdir():
        lines = path.read_bytes().splitlines(keepends=True)
        (target / path.name).write_bytes(b"".join(lines[: CUT.get(path.name, len(lines))]))
    return target


def test_a_silent_rank_stays_the_cause_after_its_peer_finished(
    tmp_path: Path, rules: list[Rule]
) -> None:
    silent_from = log_time(b"):2026-11-25-19:03:43.736 ")
    assert silent_from is not None
    source = _cut_copy(tmp_path / "source")
    with watching(source, tmp_path / "msrun_log", rules, 5.0) as (replay, live, clock):
        for after in (4, 8, 12, 16, 40):
            replay.until(silent_from + after)
            report = judged(live, clock, silent_from + after + 0.5)
            assert statuses(report) == {0: Status.FINISHED, 1: Status.STALLED}, after
            cause = report.root_cause
            assert cause is not None and cause.ranks == (1,) and cause.category == "stalled", after
