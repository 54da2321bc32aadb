"""How the live view looks: SVG snapshots at a fixed size, frozen clock, no cursor blink.

The verdicts are made by hand (tui_scenarios), so these change when the UI does, not when
the engine's verdict on a fixture does; the pilot tests cover real verdicts.

Accept a change only after reading the report: `pytest tests/tui --snapshot-update`
rewrites tests/tui/__snapshots__/ and the diff of the SVGs is what a reviewer checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from msrunwatch.judge.model import FirstError, Report, RootCause, Status
from msrunwatch.live.run import LiveRun, Update
from msrunwatch.rules.loader import load_rules
from msrunwatch.tui.messages import TargetsAwaited
from tests.tui.tui_scenarios import (
    NOW,
    app,
    finding,
    healthy,
    oom_with_timeouts,
    post,
    snapshot,
    synthetic,
    with_stalled,
)

SIZES = [(80, 24), (200, 50)]
"""The smallest terminal the view is laid out for, and a large one."""
SnapCompare = Callable[..., bool]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def feeding(update: Update, *keys: str) -> Callable[[Pilot[int]], object]:
    """A run_before that posts one snapshot, stops the input's cursor blinking, presses keys."""

    async def run_before(pilot: Pilot[int]) -> None:
        for widget in pilot.app.query(Input):
            widget.cursor_blink = False
        post(pilot.app, update)  # type: ignore[arg-type]
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


@sizes
class TestMainScreen:
    def test_healthy_eight_ranks(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """Pipeline-parallel Ascend run that finished: memory bars, compile times, no faults."""
        update = snapshot(healthy(8))
        assert snap_compare(app(), terminal_size=size, run_before=feeding(update))

    def test_oom_with_hccl_timeouts(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """Rank 3 ran out of memory; the seven others timed out in HCCL (EI0006) minutes later."""
        update = snapshot(oom_with_timeouts())
        assert snap_compare(app(), terminal_size=size, run_before=feeding(update))

    def test_stalled_rank(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """Rank 5 has written nothing for 5 minutes while 15 others train."""
        report, silence = with_stalled(synthetic(16), rank=5, silent_s=312)
        update = snapshot(report, silence=silence)
        assert snap_compare(app(), terminal_size=size, run_before=feeding(update))

    def test_empty_directory(
        self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path
    ) -> None:
        """Watching a directory msrun has not written to yet."""
        live = LiveRun([str(tmp_path)], load_rules())
        update = dataclasses.replace(live.tick(), time=NOW)
        live.close()
        target = app(targets=("output/msrun_log",))
        assert snap_compare(target, terminal_size=size, run_before=feeding(update))

    def test_1024_ranks_sorted_worst_first(
        self, snap_compare: SnapCompare, size: tuple[int, int]
    ) -> None:
        """1,024 ranks, one OOM and 40 HCCL timeouts, sorted by status: the faults on top."""
        update = snapshot(many_ranks_failing(), behind=12)

        async def run_before(pilot: Pilot[int]) -> None:
            await feeding(update)(pilot)  # type: ignore[misc]
            pilot.app.table.sort_by("status")  # type: ignore[attr-defined]
            await pilot.pause()

        assert snap_compare(app(), terminal_size=size, run_before=run_before)


@sizes
class TestScreens:
    def test_rank_detail(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """Enter on the root-cause rank: figures, its findings, its log at the first fault."""
        update = snapshot(oom_with_timeouts())
        run_before = feeding(update, "c", "enter")  # it opens at the OOM line
        assert snap_compare(app(), terminal_size=size, run_before=run_before)

    def test_timeline(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """`t`: every rank's warnings and errors by log time, filtered to errors."""
        update = snapshot(oom_with_timeouts())
        run_before = feeding(update, "t", "l")
        assert snap_compare(app(), terminal_size=size, run_before=run_before)

    def test_help(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """`?` lists every key and the memory legend."""
        update = snapshot(synthetic(8))
        run_before = feeding(update, "question_mark")
        assert snap_compare(app(), terminal_size=size, run_before=run_before)


def test_waiting_for_the_log_directory(snap_compare: SnapCompare) -> None:
    """`msrunwatch job/msrun_log` before msrun created it."""

    async def run_before(pilot: Pilot[int]) -> None:
        pilot.app.post_message(TargetsAwaited(("job/msrun_log",), 12.5, False))
        await pilot.pause()

    target = app(targets=("job/msrun_log",))
    assert snap_compare(target, terminal_size=(80, 24), run_before=run_before)


def many_ranks_failing() -> Report:
    """1,024 training ranks; rank 517 ran out of memory, 40 ranks timed out waiting on it."""
    base = synthetic(1024)
    oom = FirstError("oom", "oom-memory-not-enough", "worker_517.log", 2210, NOW - 95)
    ranks = list(base.ranks)
    ranks[517] = dataclasses.replace(ranks[517], status=Status.FAILED, first_error=oom)
    timed_out = list(range(512, 517)) + list(range(518, 553))
    for r in timed_out:
        late = FirstError(
            "hccl-timeout", "cann-ei0006", f"worker_{r}.log", 2300, NOW - 20 + r / 100
        )
        ranks[r] = dataclasses.replace(ranks[r], status=Status.TIMED_OUT, first_error=late)
    cause = finding(
        "oom-memory-not-enough", [517], "Out of memory: could not allocate 1342177280 B"
    )
    cause = dataclasses.replace(cause, role="root-cause", category="oom")
    symptom = finding(
        "cann-ei0006", timed_out, "EI0006: building the HCCL socket timed out", first=530
    )
    root = RootCause(
        (517,),
        "oom",
        "oom-memory-not-enough",
        "msrun_log",
        "worker_517.log",
        2210,
        NOW - 95,
        "Out of memory: could not allocate 1342177280 B",
        "the earliest fault a rank logged about itself",
    )
    return dataclasses.replace(
        base, ranks=tuple(ranks), outcome="failed", root_cause=root, findings=(cause, symptom)
    )
