"""Issue 21, defect 15: the live view showed right-to-left overrides (and other invisible
controls) raw, where the text report escapes them. A log line's U+202E reordered what was
read on screen; now every view shows it as `\\u202e`, as triage's text does."""

from __future__ import annotations

import re
from pathlib import Path

from msrunwatch.drivers.triage import triage
from msrunwatch.report import text
from msrunwatch.rules.model import Rule
from msrunwatch.tui import cells
from msrunwatch.tui.screens.rank_detail import RankDetail
from tests.hostile.support import GLOG, log_dir
from tests.tui.tui_scenarios import app, post, snapshot

FORGED = "RuntimeError: payment to \u202egnp.exe\u202c from \u2066evil\u2069 \u200fnow\x1b[2J"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_printable_shows_bidi_controls_as_the_text_report_does() -> None:
    shown = cells.printable(FORGED)
    assert RAW.search(shown) is None
    assert "\\u202egnp.exe\\u202c" in shown and "\\x1b[2J" in shown


async def test_no_bidi_control_reaches_the_live_view(tmp_path: Path, rules: list[Rule]) -> None:
    directory = log_dir(tmp_path, GLOG + FORGED, "Traceback (most recent call last):", FORGED)
    report = triage([str(directory)], rules)
    assert "\\u202e" in text.render(report)  # the text report escapes it
    target = app()
    async with target.run_test(size=(200, 40)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        drawn = [str(target.header.render())]
        drawn += ["".join(s.text for s in target.table.render_line(y)) for y in range(3)]
        body = target.findings.query_one("#findings-body")
        drawn.append(str(body.render()))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(target.screen, RankDetail)
        view = target.screen.view
        drawn += ["".join(s.text for s in view.render_line(y)) for y in range(4)]
    screen = "\n".join(drawn)
    assert RAW.search(screen) is None, screen
    assert "\\u202e" in screen
