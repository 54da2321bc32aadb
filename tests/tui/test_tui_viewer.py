"""The log viewer, the findings' evidence, the timeline, and how the view ends.

GIVEN a verdict posted to the app, WHEN keys are pressed, THEN the screens say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.color import ColorSystem
from textual.color import Color
from textual.pilot import Pilot

from msrunwatch.report import fmt
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.messages import TargetsAwaited
from msrunwatch.tui.screens.rank_detail import RankDetail, editor_command
from msrunwatch.tui.screens.timeline import TimelineScreen
from tests.tui.tui_scenarios import (
    all_killed,
    app,
    fixture_report,
    oom_with_timeouts,
    post,
    screen_text,
    snapshot,
    synthetic,
)

SIZE = (120, 40)


async def test_the_detail_log_is_a_viewer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.press("c", "enter")
        await pilot.pause()
        screen = target.screen
        assert isinstance(screen, RankDetail)
        view = screen.view
        assert view.wrap and view.condensed
        # line 24, the OOM: its first error-severity finding, not the warnings before it
        # (free memory < half on line 14, the pool that could not grow)
        assert view.cursor == 23
        await pilot.pause()
        # near the top, its traceback below in view (the trial's N7: at the pane's bottom)
        assert round(view.scroll_offset.y) == view.cursor - 3
        assert view.text(23).startswith("07:12:39.214 ERROR #umsg#Memory not enough")
        assert view.source.gutter(23) == "24 "
        await pilot.press("e")
        assert view.cursor == 24  # the traceback
        await pilot.press("E")
        assert view.cursor == 23
        await pilot.press("slash", *"file", "enter")
        assert "File" in screen.doc.line(view.cursor) and view.cursor > 23
        first = view.cursor
        await pilot.press("n")
        assert view.cursor > first
        await pilot.press("N")
        assert view.cursor == first
        await pilot.press("w")
        assert not view.wrap
        await pilot.press("x")
        assert view.text(23).startswith("[ERROR] RUNTIME_FRAMEWORK(")
        await pilot.press("q")
        assert not isinstance(target.screen, RankDetail) and target.is_running


async def test_o_opens_the_editor_at_the_cursor_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "args"
    editor = tmp_path / "editor"
    editor.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.press("c", "enter")
        await pilot.pause()
        await pilot.press("o")  # it opens at the OOM, line 24
        await pilot.pause()
    path = "fixtures/synth_hccl_ei0006_after_oom_8p/msrun_log/worker_3.log"
    assert record.read_text().split() == ["+24", path]


@pytest.mark.parametrize(
    ("env", "command"),
    [
        ({"EDITOR": "code -g"}, ["code", "-g", "+7", "x.log"]),
        ({"VISUAL": "vim", "EDITOR": "nano"}, ["vim", "+7", "x.log"]),
        ({}, ["less", "+7g", "x.log"]),
        ({"PAGER": "more"}, ["more", "+7", "x.log"]),
    ],
)
def test_editor_command(env: dict[str, str], command: list[str]) -> None:
    assert editor_command("x.log", 7, env) == command


async def test_enter_on_a_finding_opens_its_evidence_at_the_line() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        target.findings.focus()
        await pilot.press("enter")  # the root cause comes first
        await pilot.pause()
        screen = target.screen
        assert isinstance(screen, RankDetail) and screen.rank.rank == 3
        assert screen.view.cursor == 23
        await pilot.press("escape", "down", "enter")  # EI0006, first seen on rank 7
        await pilot.pause()
        assert isinstance(target.screen, RankDetail) and target.screen.rank.rank == 7


async def timeline_of(target: MsrunwatchApp, pilot: Pilot[Any], scenario: str) -> TimelineScreen:
    """The timeline of a fixture's verdict, once its logs are merged."""
    post(target, snapshot(fixture_report(scenario)))
    await pilot.pause()
    await pilot.press("t")
    await pilot.pause()
    screen = target.screen
    assert isinstance(screen, TimelineScreen)
    await screen.workers.wait_for_complete()
    await pilot.pause()
    return screen


async def test_the_timeline_merges_every_rank_by_log_time() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        screen = await timeline_of(target, pilot, "synth_hccl_ei0006_after_oom_8p")
        shown = screen.source.shown
        assert len(shown) > 100 and {e.rank for e in shown} == {None, *range(8)}
        times = [e.time for e in shown if e.time is not None]
        assert times == sorted(times)
        assert all(e.level in ("E", "W") for e in shown)
        await pilot.press("l")  # errors only
        assert {e.level for e in screen.source.shown} == {"E"}
        await pilot.press("f", "3", "enter")
        assert {e.rank for e in screen.source.shown} == {3}
        await pilot.press("enter")
        await pilot.pause()
        detail = target.screen
        assert isinstance(detail, RankDetail) and detail.rank.rank == 3
        assert detail.view.cursor + 1 == screen.source.shown[0].line


async def test_the_levels_key_comes_back_to_the_same_filters_after_every_line() -> None:
    """The trial's N20: after `every line`, `l` showed 934 lines as `errors and warnings`
    and plain prints as `errors` (a line with no level matched every filter)."""
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        screen = await timeline_of(target, pilot, "cpu_dp4_hang_rank2_allreduce_timeout")
        first = [len(screen.source.shown)]
        await pilot.press("l")
        first.append(len(screen.source.shown))
        await pilot.press("l")  # every line: read again
        await pilot.pause()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        every = len(screen.source.shown)
        await pilot.press("l")
        again = [len(screen.source.shown)]
        assert {e.level for e in screen.source.shown} <= {"E", "W"}
        await pilot.press("l")
        again.append(len(screen.source.shown))
        assert {e.level for e in screen.source.shown} == {"E"}
        assert again == first and every > first[0] > first[1]


async def test_exit_when_done_ends_the_view_with_triage_code() -> None:
    target = app()
    target.exit_when_done = True
    async with target.run_test(size=SIZE) as pilot:
        running = synthetic(4)
        post(target, snapshot(running))
        await pilot.pause()
        assert target.is_running
        ended = all_killed(running)
        post(target, snapshot(ended))
        await pilot.pause()
    assert target.return_value == 1


async def test_after_the_run_the_header_says_so_and_ages_are_on_the_log_clock() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        report = oom_with_timeouts()
        post(target, snapshot(report))
        await pilot.pause()
        header = str(target.header.render())
        assert "run ended" in header and "● live" not in header
        assert "last line 07:59:58.000" in header  # the log's time of the last line
        end = max(r.last_time for r in report.ranks if r.last_time)
        assert target.table.model.silence == {
            r.rank: end - r.last_time for r in report.ranks if r.last_time
        }


async def test_the_waiting_screen_and_giving_up() -> None:
    target = app(targets=("job/msrun_log",))
    async with target.run_test(size=(80, 24)) as pilot:
        target.post_message(TargetsAwaited(("job/msrun_log",), 12, False))
        await pilot.pause()
        header = str(target.header.render())
        assert "WAITING" in header and "for job/msrun_log to appear" in header and "12s" in header
        target.post_message(TargetsAwaited(("job/msrun_log",), 60, True))
        await pilot.pause()
    assert target.return_value == 2 and target.gave_up


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG 2 contrast ratio."""
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_the_cursor_row_reads_at_4_5_to_1(theme: str) -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        target.theme = theme
        post(target, snapshot(synthetic(8)))
        await pilot.pause()
        for name in ("cursor", "cursor-blurred"):
            style = target.table.get_component_rich_style(f"rank-table--{name}", partial=False)
            assert style.color is not None and style.bgcolor is not None
            for system in (ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT):  # tmux: 256
                foreground = Color(*style.color.downgrade(system).get_truecolor())
                background = Color(*style.bgcolor.downgrade(system).get_truecolor())
                assert contrast(foreground, background) >= 4.5, (theme, name, system)


async def test_z_shows_the_log_alone_and_the_oom_size_stays_in_the_header() -> None:
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        assert str(target.header.render()).splitlines()[1].endswith("could not allocate 1.2 GiB")
        await pilot.press("c", "enter")
        await pilot.pause()
        screen = target.screen
        assert isinstance(screen, RankDetail)
        top = screen.query_one("#detail-top")
        before = screen.view.size.height
        assert top.display
        await pilot.press("z")
        await pilot.pause()
        assert not top.display and screen.view.size.height > before + 5
        assert screen.view.cursor == 23  # the line it was on stays under the cursor
        await pilot.press("z")
        await pilot.pause()
        assert top.display and screen.view.size.height == before


async def test_a_search_with_no_more_matches_says_so_in_one_toast() -> None:
    """The trial's N12 at 80x24: each `n` past the last match stacked one more toast
    (`'Register' not found below`), three of them over 9 rows of the log. Each answer now
    replaces the one before: one toast, saying the newest answer."""
    target = app()
    async with target.run_test(size=(80, 24), notifications=True) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.press("c", "enter")
        await pilot.press("slash", *"Register", "enter")
        await pilot.press("n", "n", "n")
        await pilot.pause()
        screen = screen_text(target)
        assert sum("'Register' not found below" in row for row in screen) == 1, "\n".join(screen)
        await pilot.press("N", "N", "N", "N")
        await pilot.pause()
        screen = screen_text(target)
    assert sum("not found" in row for row in screen) == 1, screen
    assert any("'Register' not found above" in row for row in screen)


async def test_msruns_line_about_a_workers_exit_is_in_that_ranks_row() -> None:
    """The trial's N11: msrun's console line `Worker process 9606 exit with exception. Error
    code: -9.` had RANK `-`, though 9606 is rank 1's pid (the table shows EXIT -9 on rank 1).
    It is rank 1's line now, on screen and for the rank filter; enter still opens the console."""
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        screen = await timeline_of(target, pilot, "cpu_kill9_rank1")
        await pilot.press("l")  # errors only: the exit line is on the first screen
        await pilot.pause()
        row = next(r for r in screen_text(target) if "Worker process 9606 exit" in r)
        assert row.split()[1:3] == ["1", "msrun_console"], row
        await pilot.press("f", "1", "enter")
        await pilot.pause()
        exits = [e for e in screen.source.shown if "Worker process 9606" in e.text]
        assert [(e.rank, e.line) for e in exits] == [(1, 131)]
        screen.view.go_to(screen.source.shown.index(exits[0]))
        await pilot.press("enter")
        await pilot.pause()
        detail = target.screen
        assert (
            isinstance(detail, RankDetail)
            and detail.path == "fixtures/cpu_kill9_rank1/msrun_console.txt"
        )
        assert detail.view.cursor == 130


async def _detail_top(scenario: str, size: tuple[int, int]) -> dict[str, str]:
    """The detail screen of the root cause's rank: its labelled rows above the log."""
    target = app()
    async with target.run_test(size=size) as pilot:
        post(target, snapshot(fixture_report(scenario)))
        await pilot.press("c", "enter")
        await pilot.pause()
        screen = screen_text(target)
    top = screen[1 : next(i for i, row in enumerate(screen) if " line " in row and " of " in row)]
    return {row.split()[0]: row.rstrip() for row in top if row.strip()}


@pytest.mark.parametrize(
    ("scenario", "status", "times"),
    [
        ("synth_hccl_ei0006_after_oom_8p", "failed — oom at line 24", "07:10:14.647-07:12:42.055"),
        (
            "cpu_kill9_rank1",
            "killed — Worker pid 9606 was killed by SIGKILL",
            "19:02:38.302-19:02:51.415",
        ),
    ],
)
async def test_at_80x24_the_detail_status_and_log_lines_are_whole(
    scenario: str, status: str, times: str
) -> None:
    """The trial's N10: at 80x24 the detail cut `status failed — oom at msrun_log…` and
    `log 07:10:14.647-07:12:42.055…`. The status and why take the screen's width (a
    location in the rank's own log is `line 24`, as the first error says it); the log's
    line says what fits whole."""
    rows = await _detail_top(scenario, (80, 24))
    assert rows["status"] == f" status      {status}"
    assert rows["log"].split()[1] == times and "…" not in rows["log"]


async def test_a_wide_detail_says_the_logs_lines_and_file_too() -> None:
    rows = await _detail_top("synth_hccl_ei0006_after_oom_8p", (200, 50))
    assert "07:10:14.647-07:12:42.055  72 lines  worker_3.log" in rows["log"]


async def test_at_80x24_the_detail_figures_keep_the_pid_and_whole_times() -> None:
    """The trial's N10: at 80x24 the detail's figures cut the pid (`pid 411…`) and every
    time (`07:12:…`, `05:34:25…`). The pid, the log's first and last times and each
    finding's time on the rank's own log (`line 24  07:50:00.000`) are whole now."""
    report = oom_with_timeouts()
    [rank] = [r for r in report.ranks if r.rank == 3]
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(report))
        await pilot.press("c", "enter")
        await pilot.pause()
        screen = screen_text(target)[:9]
    rows = {row.split()[0]: row for row in screen if row.strip()}
    assert f"pid {rank.pid} " in rows["host"], screen
    first, last = fmt.when(rank.first_time, True), fmt.when(rank.last_time, True)
    assert f"{first}-{last}" in rows["log"], screen
    seen = [o for f in report.findings for o in f.occurrences if o.rank == 3 and o.time]
    assert seen and all(
        any(f"line {o.line}  {fmt.when(o.time, o.time_exact)}" in row for row in screen)
        for o in seen
    ), screen
