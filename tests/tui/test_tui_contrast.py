"""Every text the view draws on a status colour or under a cursor reads at WCAG AA contrast
(4.5:1), in the theme the view runs with: measured on the segments actually drawn (the third
trial read the first error at 1.4:1 and a yellow status at 2.8:1 on the selected row).

Measured twice: in true colour, and as a 256-colour terminal shows it (tmux without `Tc`,
TERM=screen-256color), where Rich itself downgrades each colour to the xterm palette
(`rich.color.Color.downgrade`): the fourth trial read the selected row at 4.53:1 in true
colour and 3.85:1 there."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from rich.style import Style
from textual.color import Color
from textual.strip import Strip

from msrunwatch.judge.model import Report, Status
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.screens.rank_detail import RankDetail
from tests.tui.test_tui_viewer import contrast
from tests.tui.tui_scenarios import app, fixture_report, post, snapshot

AA = 4.5
Shown = Callable[[RichColor], RichColor]
"""How a terminal shows a colour the view asks for."""


def true_colour(value: RichColor) -> RichColor:
    return value


def palette_256(value: RichColor) -> RichColor:
    """The xterm-256 colour Rich writes instead, on a terminal of 256 colours."""
    return value.downgrade(ColorSystem.EIGHT_BIT)


TERMINALS = pytest.mark.parametrize("shown", [true_colour, palette_256], ids=["true", "256"])


def _color(value: RichColor | None, default: Color, shown: Shown) -> Color:
    if value is None or value.is_default:
        return default
    return Color(*shown(value).get_truecolor())


def low_contrast(strip: Strip, base: Style, shown: Shown = true_colour) -> list[tuple[str, float]]:
    """(text, ratio) of every segment with visible text below AA, as the terminal shows it."""
    fg0 = _color(base.color, Color(255, 255, 255), shown)
    bg0 = _color(base.bgcolor, Color(0, 0, 0), shown)
    out = []
    for segment in strip:
        style = segment.style or Style()
        if not segment.text.strip() or segment.control:
            continue
        fg, bg = _color(style.color, fg0, shown), _color(style.bgcolor, bg0, shown)
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


@TERMINALS
async def test_every_row_and_the_selected_one_read_at_aa(shown: Shown) -> None:
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
                    bad = low_contrast(table.render_line(y), table.rich_style, shown)
                    if bad:
                        failures[(focused, cursor, y)] = bad
            table.focus()
        assert not failures, failures


@TERMINALS
async def test_the_log_viewer_cursor_and_fault_lines_read_at_aa(shown: Shown) -> None:
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
                bad = low_contrast(view.render_line(y), view.rich_style, shown)
                if bad:
                    failures[(line, y)] = bad
        assert not failures, failures
