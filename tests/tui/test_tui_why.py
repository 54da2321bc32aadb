"""The view says why, as triage does (the trial's A1), and where a first error is, whole.

GIVEN a kill -9 of rank 1 read without msrun's console, the header says `rank 1 failed
first` above `the scheduler saw worker 0 go first`; THEN the root cause's entry says why
(the scheduler named rank 0, but rank 0 saw a peer go after rank 1 went silent), and rank 1's
first error says it is its last line, where its log stops, not an error location. At 80
columns the detail's first error keeps its line number (N10 read `oom msrun_log/worker_3.lo…`).
"""

from __future__ import annotations

from msrunwatch.drivers.triage import triage
from msrunwatch.rules.loader import load_rules
from msrunwatch.tui import cells
from msrunwatch.tui.figures import figures
from tests.tui.tui_scenarios import app, fixture_report, post, snapshot

KILL9 = "fixtures/cpu_kill9_rank1/msrun_log"


async def test_the_root_cause_says_why_as_triage_does() -> None:
    report = triage([KILL9], load_rules())
    assert report.root_cause is not None
    target = app([KILL9])
    async with target.run_test(size=(200, 40)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        body = str(target.findings.query_one("#findings-body").render()).splitlines()
    assert body[0].startswith("▶ ROOT CAUSE")
    said = " ".join(line.strip() for line in body[2:4])
    assert said == f"why: {report.root_cause.reason}"
    assert "the scheduler named rank 0 first, but rank 0 saw a peer go" in said
    assert not body[4].strip().startswith(("why", "logged", "saw")), "the next entry follows"


async def test_a_long_why_is_cut_at_its_fourth_line_at_80_columns() -> None:
    report = triage([KILL9], load_rules())
    target = app([KILL9])
    async with target.run_test(size=(60, 40)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        body = str(target.findings.query_one("#findings-body").render()).splitlines()
    why = body[2:6]
    assert why[0].strip().startswith("why: the scheduler")
    assert why[3].endswith("…") and not body[6].startswith("     ")


def test_a_lost_rank_points_at_its_last_line_and_says_so() -> None:
    rank = triage([KILL9], load_rules()).ranks[1]
    assert rank.first_error is not None and rank.first_error.at_end
    assert cells.first_error(rank) == "node-timeout, last line worker_1.log:83"
    assert cells.first_error_within(rank, 30) == "node-timeout worker_1.log:83"
    assert "first error node-timeout, last line 83" in figures(rank).plain


def test_the_detail_keeps_the_line_of_the_first_error() -> None:
    rank = fixture_report("synth_hccl_ei0006_after_oom_8p").ranks[3]
    assert rank.first_error is not None and not rank.first_error.at_end
    assert "first error oom at line 24" in figures(rank).plain
    assert cells.first_error(rank) == "oom msrun_log/worker_3.log:24"
