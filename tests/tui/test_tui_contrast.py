"""Every text the view draws on a status colour or under a cursor reads at WCAG AA contrast
(4.5:1), in the theme the view runs with: measured on the segments actually drawn (the third
trial read the first error at 1.4:1 and a yellow status at 2.8:1 on the selected row)."""

from __future__ import annotations

import dataclasses

from rich.color import Color as RichColor
from rich.style import Style
from textual.color import Color
from textual.strip import Strip

from msrunwatch.judge.model import Report, Status
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.screens.rank_detail import RankDetail
from tests.tui.test_tui_viewer import contrast
from tests.tui.tui_scenarios import app, fixture_report, post, snapshot

AA = 4.5


def _color(value: RichColor | None, default: Color) -> Color:
    return default if value is None or value.is_default else Color.from_rich_color(value)


def low_contrast(strip: Strip, base: Style) -> list[tuple[str, float]]:
    """(text, ratio) of every segment with visible text below AA."""
    fg0 = _color(base.color, Color(255, 255, 255))
    bg0 = _color(base.bgcolor, Color(0, 0, 0))
    out = []
    for segment in strip:
        style = segment.style or Style()
        if not segment.text.strip() or segment.control:
            continue
        fg, bg = _color(style.color, fg0), _color(style.bgcolor, bg0)
        if style.reverse:
            fg, bg = bg, fg
        ratio = contrast(fg, bg)
        if ratio < AA:
            out.append((segment.text.strip(), round(ratio, 2)))
    return out


def every_status() -> Report:
    """The OOM run with one rank in each status (and the root cause's own colours)."""
    report = fixture_report("synth_hccl_ei0006_after_oom_8p")
    statuses = list(Status)
    ranks = tuple(
        dataclasses.replace(r, status=statuses[i % len(statuses)])
        for i, r in enumerate(report.ranks)
    )
    more = tuple(
        dataclasses.replace(report.ranks[0], rank=8 + k, status=s)
        for k, s in enumerate(statuses[len(ranks) :])
    )
    return dataclasses.replace(report, ranks=ranks + more)


async def test_every_row_and_the_selected_one_read_at_aa() -> None:
    target = app()
    async with target.run_test(size=(200, 30)) as pilot:
        post(target, snapshot(every_status()))
        await pilot.pause()
        table = target.table
        rows = len(table.model.order)
        assert rows >= len(Status)
        failures = {}
        for focused in (True, False):
            if not focused:
                target.findings.focus()
                await pilot.pause()
            for cursor in range(rows):
                table.move_to(cursor)
                for y in range(1, rows + 1):
                    bad = low_contrast(table.render_line(y), table.rich_style)
                    if bad:
                        failures[(focused, cursor, y)] = bad
            table.focus()
        assert not failures, failures


async def test_the_log_viewer_cursor_and_fault_lines_read_at_aa() -> None:
    target: MsrunwatchApp = app()
    async with target.run_test(size=(160, 40)) as pilot:
        post(target, snapshot(fixture_report("cpu_dp2_oom_alloc_failed")))
        await pilot.pause()
        await pilot.press("down", "enter")  # rank 1, the OOM
        await pilot.pause()
        screen = target.screen
        assert isinstance(screen, RankDetail)
        view = screen.view
        failures = {}
        for line in range(min(len(screen.doc), 40)):
            view.go_to(line)
            await pilot.pause()
            for y in range(view.size.height):
                bad = low_contrast(view.render_line(y), view.rich_style)
                if bad:
                    failures[(line, y)] = bad
        assert not failures, failures
