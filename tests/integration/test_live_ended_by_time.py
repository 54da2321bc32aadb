"""An ended run's verdict is judged again while time alone can still change it.

The engine stops judging a run that has ended until a line comes (at 512 ranks a verdict a
second cost 13% of a core). That shortcut must give what judging afresh gives: rules that
wait for every rank to be quiet for --stall-after (cause-not-in-logs, run-stalled) can fire
only after the run ended. Here two ranks log their timeouts and nothing else: when they have
just written, no rule may say the cause is elsewhere; --stall-after later it must, as a
watcher started then says at once.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from msrunwatch.judge.model import Report
from msrunwatch.live.run import LiveRun, run_ended
from msrunwatch.rules.model import Rule
from tests.support import Clock, judged

WRITTEN = datetime(2026, 11, 21, 8, 32, 58, 401102).timestamp()
"""When the files were written: at their last line's time (local, as GLOG writes it). A
file time far after its lines is a copy's, and a copied run is judged by its lines, as
triage judges it (judge.clock): over long ago."""
STALL_AFTER_S = 30.0
HEADER = "DISTRIBUTED({pid},ffff9b2c1120,python):2026-11-21-08:00:00.000.000"
TIMEOUT = (
    "[ERROR] HCCL_ADPT({pid},ffff9b2c1120,python):2026-11-21-08:32:58.401.102 [mindspore/ccsrc/"
    "plugin/device/ascend/hal/hccl_adapter/hccl_adapter.cc:380] HcclAllReduce] HcclAllReduce "
    "failed, ret:9\n"
)


def _timed_out_run(target: Path) -> Path:
    """Two of four ranks' logs, each ending in the same collective's timeout (the rule
    cause-not-in-logs's own case)."""
    target.mkdir()
    for rank in (0, 1):
        path = target / f"worker_{rank}.log"
        head = f"[WARNING] {HEADER.format(pid=5117 + rank)} [cluster_context.cc:300] "
        head += "BuildCluster] RANK_SIZE: 4\n"
        path.write_text(
            head + f"epoch: 1 step: 8, loss is 2.{rank}\n" + TIMEOUT.format(pid=5117 + rank)
        )
        os.utime(path, (WRITTEN, WRITTEN))
    return target


def _rules_fired(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def test_an_ended_run_is_judged_as_afresh_once_quiet(tmp_path: Path, rules: list[Rule]) -> None:
    target = _timed_out_run(tmp_path / "msrun_log")
    clock = Clock()
    live = LiveRun([str(target)], rules, stall_after_s=STALL_AFTER_S, clock=clock)
    try:
        just = judged(live, clock, WRITTEN + 1)
        assert run_ended(just) and "cause-not-in-logs" not in _rules_fired(just)
        later = judged(live, clock, WRITTEN + 3 * STALL_AFTER_S)
    finally:
        live.close()
    fresh_clock = Clock()
    fresh = LiveRun([str(target)], rules, stall_after_s=STALL_AFTER_S, clock=fresh_clock)
    try:
        afresh = judged(fresh, fresh_clock, WRITTEN + 3 * STALL_AFTER_S)
    finally:
        fresh.close()
    assert "cause-not-in-logs" in _rules_fired(afresh)
    assert _rules_fired(later) == _rules_fired(afresh)
    assert later.root_cause == afresh.root_cause
