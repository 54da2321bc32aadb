"""The live view's behaviour, driven by keys, with snapshots posted by hand (no threads).

Each test: GIVEN an app fed hand-made snapshots, WHEN keys are pressed, THEN the table,
header, panel and screens say what a user would read.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from msrunwatch.judge.model import Severity, Status
from msrunwatch.live.run import Update
from msrunwatch.report import fmt
from msrunwatch.tui import cells
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.messages import (
    FilesRestarted,
    FindingsRaised,
    LogsFound,
    SnapshotUpdated,
    TargetsAwaited,
)
from msrunwatch.tui.screens.help import HelpScreen
from msrunwatch.tui.screens.rank_detail import RankDetail
from msrunwatch.tui.widgets.findings_panel import describe
from msrunwatch.tui.widgets.rank_table import RankTable
from tests.tui.tui_scenarios import (
    NOW,
    all_killed,
    app,
    finding,
    fixture_report,
    oom_with_timeouts,
    post,
    rank_report,
    screen_text,
    snapshot,
    synthetic,
    with_stalled,
)

SIZE = (160, 40)


def line(table: RankTable, y: int) -> str:
    """The text of one line of the table as drawn (0 is the column titles)."""
    return "".join(segment.text for segment in table.render_line(y))


def shown_ranks(table: RankTable) -> list[int]:
    return [table.model.rows[i].rank for i in table.model.order]


def header_text(target: MsrunwatchApp) -> str:
    return str(target.header.render())


async def test_shows_every_rank_and_the_verdict() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("synth_ascend_glog1_pp2_memory_8p")))
        await pilot.pause()
        assert shown_ranks(target.table) == list(range(8))
        titles = line(target.table, 0)
        for title in ("RANK", "HOST", "STATUS", "PHASE", "COMPILE", "STEP", "LOSS", "STEP MS"):
            assert title in titles
        for title in ("PEAK", "ACTUAL", "LIMIT", "DEVICE", "OF LIMIT", "SILENT", "FIRST ERROR"):
            assert title in titles
        assert "ascend-910b-node01 finished" in line(target.table, 1)
        assert "40.1 GiB 42.5 GiB 56.8 GiB 64.0 GiB" in line(target.table, 1)
        assert "75%" in line(target.table, 1)  # of the usable limit, not of the card
        assert "OK" in header_text(target) and "8 finished" in header_text(target)
        assert target.verdict_code == 0


async def test_root_cause_shows_in_the_header_and_the_table() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("cpu_dp2_oom_alloc_failed")))
        await pilot.pause()
        text = header_text(target)
        assert "FAILED" in text and "rank 1 failed first: oom" in text
        assert "msrun_log/worker_1.log:20" in text and "2 ranks" in text
        assert "oom msrun_log/worker_1.log:20" in line(target.table, 2)
        await pilot.press("c")
        assert target.table.cursor_rank == 1
        assert target.verdict_code == 1


async def test_keys_move_the_cursor_and_sort() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(64)))
        await pilot.pause()
        await pilot.press("down", "j", "j")
        assert target.table.cursor_rank == 3
        await pilot.press("k")
        assert target.table.cursor_rank == 2
        await pilot.press("end")
        assert target.table.cursor_rank == 63
        assert target.table.scroll_y > 0
        await pilot.press("home")
        assert target.table.cursor_rank == 0 and target.table.scroll_y == 0
        await pilot.press("r")
        assert shown_ranks(target.table)[:3] == [63, 62, 61]
        assert "RANK▼" in line(target.table, 0)
        assert target.table.cursor_rank == 63, "a new sort starts at the top"
        await pilot.press("s")
        assert target.table.model.sort_key == "host"
        assert "HOST▲" in line(target.table, 0)
        await pilot.press("s", "s")
        assert target.table.model.sort_key == "phase"
        assert "sort phase" in str(target.filter_bar.query_one("#view-summary").render())


async def test_new_data_reorders_rows_but_the_cursor_keeps_its_rank() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(8)))
        await pilot.pause()
        target.table.sort_by("step", reverse=True)
        await pilot.press("down", "down")
        assert target.table.cursor_rank == 2
        ranks = [rank_report(r, step=100 + (r == 6) * 50) for r in range(8)]
        post(target, snapshot(dataclasses.replace(synthetic(8), ranks=tuple(ranks))))
        await pilot.pause()
        assert shown_ranks(target.table)[0] == 6, "rank 6 took the lead"
        assert target.table.cursor_rank == 2


async def test_mouse_sorts_by_a_clicked_title_and_opens_a_double_clicked_rank() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        status_x = line(target.table, 0).index("STATUS")
        await pilot.click(RankTable, offset=(status_x, 0))
        assert target.table.model.sort_key == "status"
        assert shown_ranks(target.table)[0] == 3
        await pilot.click(RankTable, offset=(status_x, 0))
        assert target.table.model.reverse
        await pilot.click(RankTable, offset=(2, 3), times=2)
        await pilot.pause()
        assert isinstance(target.screen, RankDetail)
        assert target.screen.rank.rank == shown_ranks(target.table)[2]


async def test_filter_by_status_cycles_all_problems_and_each_status() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        await pilot.press("f")
        assert target.table.model.status_filter == "problems"
        assert shown_ranks(target.table) == list(range(8))
        await pilot.press("f")
        assert target.table.model.status_filter == "failed"
        assert shown_ranks(target.table) == [3]
        await pilot.press("f")
        assert shown_ranks(target.table) == [0, 1, 2, 4, 5, 6, 7]
        await pilot.press("f")
        assert target.table.model.status_filter == "all"


async def test_filter_by_typed_text_and_rank_lists() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(64)))
        await pilot.pause()
        await pilot.press("slash", *"node002")
        assert isinstance(target.focused, Input)
        assert shown_ranks(target.table) == list(range(16, 24))
        await pilot.press("enter")
        assert target.focused is target.table
        await pilot.press("down")
        assert target.table.cursor_rank == 17
        await pilot.press("slash", *["backspace"] * 7, *"5-7,40")
        assert shown_ranks(target.table) == [5, 6, 7, 40]
        await pilot.press("escape")
        assert shown_ranks(target.table) == list(range(64))
        assert target.focused is target.table
        await pilot.press("slash", *"no such rank")
        assert shown_ranks(target.table) == []
        assert "no rank matches the filter" in line(target.table, 1)


async def test_detail_screen_opens_on_enter_and_closes_on_escape() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("cpu_dp2_oom_alloc_failed")))
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        screen = target.screen
        assert isinstance(screen, RankDetail) and screen.rank.rank == 1
        # its first error line (:20, the OOM), not the allocation warning before it (:19)
        assert len(screen.doc) == 55 and screen.view.cursor == 19
        findings = str(screen.query_one("#detail-findings").render())
        assert "oom-memory-not-enough" in findings and "line 20  05:34:25.600" in findings
        assert "failed" in str(screen.query_one("#detail-status", Static).render())
        await pilot.press("q")  # back, not quit
        assert not isinstance(target.screen, RankDetail)
        assert target.focused is target.table
        assert target.is_running


async def test_a_stalled_rank_shows_as_stalled() -> None:
    report, silence = with_stalled(synthetic(16), rank=5, silent_s=312)
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report, silence=silence))
        await pilot.pause()
        row = line(target.table, 6)
        assert row.split()[:4] == ["5", "node000", "stalled", "train"]
        assert "5m12s" in row and "stalled worker_5.log:1100" in row
        assert "1 stalled" in header_text(target)
        await pilot.press("f", "f")
        assert target.table.model.status_filter == "stalled"
        assert shown_ranks(target.table) == [5]


async def test_a_thousand_snapshots_fold_to_the_last_and_keys_still_work() -> None:
    target = CountingApp()
    base = synthetic(256)
    async with target.run_test(size=SIZE) as pilot:
        for step in range(1000):
            ranks = (rank_report(0, step=step), *base.ranks[1:])
            report = dataclasses.replace(base, ranks=ranks)
            target.post_message(SnapshotUpdated(snapshot(report)))
            if step % 100 == 0:
                raised = finding(f"rule-{step}", [step % 256], f"finding {step}")
                target.post_message(FindingsRaised((raised,), None))
        await pilot.pause()
        await pilot.press("down")
        assert target.table.cursor_rank == 1
        assert target.table.model.rows[0].progress is not None
        assert target.table.model.rows[0].progress.step == 999
        assert target.applied < 100, "a backlog is folded, not replayed"
        rules = {f.rule for f in target.findings.ordered()}
        assert rules == {f"rule-{step}" for step in range(0, 1000, 100)}, "no finding is lost"


async def test_pause_stops_the_table_but_not_the_findings() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(8, step=10)))
        await pilot.pause()
        await pilot.press("p")
        post(target, snapshot(synthetic(8, step=11), new_findings=()))
        raised = finding("cann-ei0006", [0, 1, 2, 3, 4, 5, 6, 7], "EI0006", first=6)
        target.post_message(FindingsRaised((raised,), None))
        await pilot.pause()
        assert target.table.model.rows[0].progress.step == 10  # type: ignore[union-attr]
        assert [f.rule for f in target.findings.ordered()] == ["cann-ei0006"]
        assert "paused · 1 update waiting" in header_text(target)
        await pilot.press("p")
        assert target.table.model.rows[0].progress.step == 11  # type: ignore[union-attr]
        assert "live" in header_text(target)


async def test_findings_are_grouped_across_ranks_root_cause_first() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        later = finding("late-rule", [1], "a later finding")
        target.post_message(FindingsRaised((later,), None))
        await pilot.pause()
        ordered = [f.rule for f in target.findings.ordered()]
        assert ordered[:2] == ["oom-memory-not-enough", "late-rule"]
        body = str(target.findings.query_one("#findings-body").render())
        assert "cann-ei0006 on ranks 0-2, 4-7 (7); first on rank 7" in body
        assert "ROOT CAUSE" in body


async def test_the_root_cause_row_names_the_rank_the_verdict_names() -> None:
    """The trial's N2: in the hang, rank 0's timeout is the evidence and rank 1 the hung
    rank; the ROOT CAUSE row named rank 0 under a header naming rank 1."""
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("cpu_hang_rank1_allreduce_timeout")))
        await pilot.pause()
        assert "rank 1 hung first" in header_text(target)
        body = str(target.findings.query_one("#findings-body").render())
        root = next(line for line in body.splitlines() if "ROOT CAUSE" in line)
        assert "collective-wait-failed on rank 1 (evidence on rank 0)" in root


async def test_when_the_run_ends_every_row_shows_its_silence_on_the_log_clock() -> None:
    """The trial's N5: rows that did not change in the last verdict kept the wall-clock
    SILENT they had when the run ended (38s, frozen), while rows that changed showed the
    log clock's. Every row is repainted when silences switch to the log's clock."""
    report = fixture_report("cpu_dp2_oom_alloc_failed")
    rank0, rank1 = report.ranks
    running = dataclasses.replace(rank1, status=Status.TRAINING)
    before = dataclasses.replace(report, ranks=(rank0, running))
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(before, silence={0: 38.0, 1: 38.0}))  # live, caught up
        await pilot.pause()
        assert sum(" 38s " in row for row in screen_text(target) if " vm " in row) == 2
        post(target, snapshot(report, silence={}, behind=0))  # rank 1 changed, rank 0 not
        await pilot.pause()
        assert target.last is not None and target.last.ended
        rows = [row for row in screen_text(target) if " vm " in row]
        assert len(rows) == 2 and not any(" 38s " in row for row in rows)
        end = max(fmt.log_times(report))  # msrun's console, 29 s after the ranks' last lines
        said = [f" {cells.ago(end - r.last_time)} " for r in report.ranks if r.last_time]
        assert all(s in row for s, row in zip(said, rows)) and " 29s " in rows[0]


async def test_an_exception_header_at_80_columns_keeps_its_class_and_file_line() -> None:
    """The trial's N17 on a single worker log at 80x24: one cut, between words."""
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(fixture_report("cpu_dp2_exception_rank1")))
        await pilot.pause()
        said = next(row for row in screen_text(target) if "RuntimeError" in row)
    assert said.count("…") == 1 and " … " in said
    assert "RuntimeError: " in said
    assert "rank 1 at step 3 (at train_dense.py:79 in on_train_step_end)" in said  # #28: figures


async def test_the_header_verb_agrees_with_the_counts_under_it() -> None:
    """The trial: `FAILED rank 1 failed first: worker-killed` above `2 ranks  2 killed`."""
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("cpu_kill9_rank1")))
        await pilot.pause()
        header = header_text(target)
    assert "rank 1 was killed first: worker-killed" in header and "2 killed" in header
    assert "failed" not in header.split("\n")[0]


async def test_one_rank_is_one_rank() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(1)))
        await pilot.pause()
        assert "1 rank " in header_text(target) and "1 ranks" not in header_text(target)


async def test_a_finding_the_verdict_drops_stays_but_is_marked_undone() -> None:
    """Half-way through catching up, a rank looks silent; once its log is read, it is not."""
    report = oom_with_timeouts()
    silent = dataclasses.replace(
        finding("silent-rank", [5], "Rank(s) 5 logged no fault"), role="root-cause"
    )
    early = dataclasses.replace(report, findings=(silent,), root_cause=None)
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(early, behind=3))
        await pilot.pause()
        assert "so far: faults, no root cause" in header_text(target)
        post(target, snapshot(report))
        await pilot.pause()
        assert target.findings.ordered()[0].rule == "oom-memory-not-enough"
        assert target.findings.ordered()[-1].rule == "silent-rank"
        body = str(target.findings.query_one("#findings-body").render())
        assert body.count("ROOT CAUSE") == 1
        assert "  undone by later lines:  error   silent-rank on rank 5" in body
        assert str(target.findings.border_title).endswith(", 1 undone)")


async def test_findings_of_a_run_before_a_restart_say_so_not_withdrawn() -> None:
    """The trial: after a restart in place, the earlier attempt's OOM read `withdrawn (no
    longer in the verdict)`, as if it had been a false alarm."""
    failed = fixture_report("cpu_dp2_oom_alloc_failed")
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(failed))
        await pilot.pause()
        target.post_message(FilesRestarted(("msrun_log/worker_0.log", "msrun_log/worker_1.log")))
        post(target, snapshot(fixture_report("cpu_dp2_success_glog2")))
        await pilot.pause()
        body = str(target.findings.query_one("#findings-body").render())
        oom = next(line for line in body.splitlines() if "oom-memory-not-enough" in line)
        assert oom.startswith("  from before the logs restarted:  error   oom-memory-not-enough")
        assert "withdrawn" not in body and "undone" not in body
        title = str(target.findings.border_title)
        assert title.endswith(f", {len(failed.findings)} from before the restart)")


async def test_a_truncated_log_is_announced() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        target.post_message(FilesRestarted(("msrun_log/worker_0.log",)))
        await pilot.pause()
        notes = [n.message for n in target._notifications]
        assert any("worker_0.log" in note and "new run" in note for note in notes)


async def test_help_lists_the_keys_and_closes() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(target.screen, HelpScreen)
        text = str(target.screen.query_one("Static").render())
        for key in ("enter", "/", "p, space", "q, ctrl+c", "escape"):
            assert key in text
        await pilot.press("escape")
        assert not isinstance(target.screen, HelpScreen)


async def test_q_quits_with_the_verdicts_exit_code() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(fixture_report("cpu_dp2_oom_alloc_failed")))
        await pilot.pause()
        await pilot.press("q")
    assert target.return_value == 1


async def test_an_empty_directory_waits_for_logs() -> None:
    """Until the directory is listed the view looks; it waits only when none is there."""
    target = app(targets=("empty_dir",))
    async with target.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "looking for rank logs" in line(target.table, 1)
        assert "STARTING" in header_text(target) and "empty_dir" in header_text(target)
        target.post_message(LogsFound(0))
        await pilot.pause()
        assert "waiting for rank logs" in line(target.table, 1)


async def test_a_directory_that_appears_full_is_read_not_awaited() -> None:
    """The trial's N8: msrun_log appeared with 513 logs at once; the screen kept saying
    `WAITING for msrun_log to appear / not there yet` for 9 s while they were read."""
    target = app(targets=("msrun_log",))
    async with target.run_test(size=SIZE) as pilot:
        target.post_message(TargetsAwaited(("msrun_log",), 3.9, expired=False))
        await pilot.pause()
        assert "WAITING" in header_text(target) and "not there yet" in header_text(target)
        target.post_message(LogsFound(513))
        await pilot.pause()
        shown = "\n".join(screen_text(target))
        assert "WAITING" not in shown and "not there yet" not in shown and "appear" not in shown
        assert "READING" in shown and "reading 513 logs…" in shown


class CountingApp(MsrunwatchApp):
    """Counts the snapshots it applies."""

    def __init__(self) -> None:
        super().__init__(None, ("msrun_log",), clock=lambda: 0.0)
        self.applied = 0

    def apply(self, update: Update) -> None:
        self.applied += 1
        super().apply(update)


def findings_on_screen(target: MsrunwatchApp) -> list[str]:
    """The findings panel's lines as the terminal shows them (under its title)."""
    lines = screen_text(target)
    top = next(n for n, row in enumerate(lines) if "Findings (" in row)
    return lines[top + 1 : -1]  # the footer is the last line


async def test_at_80x24_the_findings_show_the_oom_size_and_the_first_error() -> None:
    """The trial: the panel's message line was cut at its end, where the OOM's size is
    (`…_backbone-LlamaForCausalL…`); the header kept it, the panel did not."""
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(fixture_report("synth_hccl_ei0006_after_oom_8p")))
        await pilot.pause()
        shown = findings_on_screen(target)
        assert "ROOT CAUSE  error   oom-memory-not-enough on rank 3" in shown[0]
        assert shown[1].rstrip().endswith("could not allocate 1.2 GiB")
        assert "Out of memory: 1_Default/" in shown[1] and "…" in shown[1]
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        wide = findings_on_screen(target)[1].rstrip()  # cut again to the new width
        assert len(wide) > 190 and wide.endswith("MatMul-op2213 could not allocate 1.2 GiB")


async def test_a_newer_warning_does_not_push_the_first_error_off_an_80x24_screen() -> None:
    """No root cause yet, 16 ranks: the panel has room for three findings; the error comes
    first although three warnings came after it."""
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(synthetic(16)))
        error = finding("hccl-collective-failed", [3], "HCCL AllReduce failed with ret 9")
        target.post_message(FindingsRaised((error,), None))
        for n in range(3):
            warned = finding(f"warned-{n}", [n], f"a warning {n}")
            warned = dataclasses.replace(warned, severity=Severity.WARNING)
            target.post_message(FindingsRaised((warned,), None))
        await pilot.pause()
        shown = findings_on_screen(target)
        assert "error   hccl-collective-failed on rank 3" in shown[0]
        assert [f.rule for f in target.findings.ordered()][:2] == [
            "hccl-collective-failed",
            "warned-2",
        ]


async def test_the_exit_codes_triage_shows_are_in_the_table_at_80_columns() -> None:
    """The trial's #31: triage showed each rank's exit code (msrun's console), the view none."""
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(fixture_report("cpu_kill9_rank1")))
        await pilot.pause()
        screen = screen_text(target)
    titles = next(row for row in screen if row.startswith("RANK"))
    assert "EXIT" in titles and "FIRST ERROR" in titles
    at = titles.index("EXIT") + len("EXIT")
    rows = {row.split()[0]: row[:at].split()[-1] for row in screen if row[:5].strip().isdigit()}
    assert rows == {"0": "-", "1": "-9"}  # rank 0's code was not logged: unknown, not 0


async def test_no_exit_column_until_some_rank_has_an_exit_code() -> None:
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(8)))
        await pilot.pause()
        assert "EXIT" not in line(target.table, 0)


async def test_no_file_ages_until_the_logs_there_were_are_read() -> None:
    """The trial's #32: while `reading logs: N files behind`, SILENT and `last line ... ago`
    showed file ages, which on a copied or finished run are not the ranks' silences. They
    read `…` until the first catch-up; a later burst (behind again) keeps its true ages."""
    report = synthetic(4)
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report, behind=3))
        await pilot.pause()
        assert [line(target.table, y).split()[-1] for y in (1, 2, 3, 4)] == ["…"] * 4
        assert "last line" not in header_text(target)
        assert "4 training" in header_text(target)
        assert "⟳ reading logs" in header_text(target)
        post(target, snapshot(report))
        await pilot.pause()
        assert [line(target.table, y).split()[-1] for y in (1, 2, 3, 4)] == [
            "2.0s", "3.0s", "4.0s", "5.0s"
        ]  # fmt: skip
        assert "last line 2.0s ago" in header_text(target)
        post(target, snapshot(report, behind=1))
        await pilot.pause()
        assert line(target.table, 1).split()[-1] == "2.0s"
        assert "⟳ reading logs: 1 file behind" in header_text(target)  # a burst, later


async def test_so_far_is_said_once_while_reading() -> None:
    """Seen in tmux at 512 ranks while catching up: `RUNNING  so far: no faults so far`."""
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(synthetic(4), behind=3))
        await pilot.pause()
        first = header_text(target).split("\n")[0]
    assert first.count("so far") == 1 and "no faults so far" in first


async def test_the_first_read_says_reading_not_a_verdict() -> None:
    """The engine names no verdict before every log there was is read (re-trial A15: `FAILED
    so far: rank 37 failed first: node-timeout`, then oom); the header says it reads, not
    `UNKNOWN so far: no verdict yet`. Once read, the verdict."""
    ranks = synthetic(4).ranks
    unread = tuple(dataclasses.replace(r, status=Status.UNKNOWN) for r in ranks[2:])
    reading = dataclasses.replace(synthetic(4, outcome="unknown"), ranks=(*ranks[:2], *unread))
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(reading, behind=2))
        await pilot.pause()
        first = header_text(target).split("\n")[0]
        assert "READING  verdict once every log is read" in first and "so far" not in first
        assert "2 not read yet" in header_text(target)
        post(target, snapshot(oom_with_timeouts()))
        await pilot.pause()
        assert "rank 3 failed first: oom" in header_text(target).split("\n")[0]


async def test_ranks_not_read_yet_are_not_called_unknown_while_reading() -> None:
    """Seen in tmux at 512 ranks: `512 ranks  502 unknown  1 compiling  9 training` while the
    first catch-up read logs that were all there."""
    ranks = synthetic(4).ranks
    unread = [dataclasses.replace(r, status=Status.UNKNOWN) for r in ranks[2:]]
    report = dataclasses.replace(synthetic(4), ranks=(*ranks[:2], *unread))
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report, behind=2))
        await pilot.pause()
        assert "2 not read yet" in header_text(target) and "unknown" not in header_text(target)
        assert [line(target.table, y).split()[2] for y in (1, 2, 3, 4)] == [
            "training", "training", "…", "…"
        ]  # fmt: skip
        post(target, snapshot(report))
        await pilot.pause()
        assert "2 unknown" in header_text(target)
        assert line(target.table, 3).split()[2] == "unknown"


@pytest.mark.parametrize(
    "name", ["cpu_2nodes_node1_killed", "cpu_2nodes_no_node_rank_node1_killed"]
)
async def test_a_first_error_too_long_for_80_columns_keeps_its_line_number(name: str) -> None:
    """The trial's N15: the table ran past the screen's edge, which cut `worker_2.log:118`
    to `worker_2.log:11`, a line number that still looks like one. The cell now fits the
    screen, cut in the middle: its file:line stays whole."""
    report = fixture_report(name)
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        screen = screen_text(target)
    rows = {int(row.split()[0]): row.rstrip() for row in screen if row[:5].strip().isdigit()}
    where = {
        r.rank: f"{Path(r.first_error.file).name}:{r.first_error.line}"
        for r in report.ranks
        if r.first_error is not None
    }
    assert where and all(len(rows[rank]) <= 80 for rank in where), rows
    assert {rank: rows[rank].endswith(place) for rank, place in where.items()} == dict.fromkeys(
        where, True
    )


async def test_at_80_columns_the_root_causes_place_keeps_its_line_and_whole_time() -> None:
    """The trial's N10: `▊ at fixtures/synth_hccl_ei0006_after_oom_8p/msrun_log/worker_3.log:24
    07:12:…` kept the whole path and lost the time. At 80 columns the file is named as the
    table names it, from its log directory, with its line and the time to the millisecond."""
    report = fixture_report("synth_hccl_ei0006_after_oom_8p")
    assert report.root_cause is not None and report.root_cause.time is not None
    stamp = fmt.when(report.root_cause.time, report.root_cause.time_exact)
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        at = next(row for row in screen_text(target) if " at " in row and "worker_3" in row)
    assert f"at msrun_log/worker_3.log:24  {stamp}" in at and "…" not in at, at
    target = app()
    async with target.run_test(size=(200, 50)) as pilot:  # wide: the path as typed, whole
        post(target, snapshot(report))
        await pilot.pause()
        wide = screen_text(target)
    assert any(
        f"at fixtures/synth_hccl_ei0006_after_oom_8p/msrun_log/worker_3.log:24  {stamp}" in row
        for row in wide
    )


async def test_the_runs_length_grows_while_live_and_is_the_logs_span_once_ended() -> None:
    """The trial's N7: `run 5.5s ● live` was the logs' span, standing still beside rows
    `SILENT 27s`, then jumping. Live it is `running`, from the first line to now (the span
    and the silence since the newest line, which grows with the clock); ended, `ran` and
    the logs' span; while the first catch-up reads, no length (the logs are not all read)."""
    now = [NOW]
    report = synthetic(4)  # lines from NOW - 600 to NOW - 2 (598 s), quiet 2 s at NOW
    target = MsrunwatchApp(None, ("msrun_log",), clock=lambda: now[0])
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report, behind=3))
        await pilot.pause()
        assert "running" not in header_text(target) and "ran " not in header_text(target)
        post(target, snapshot(report))
        await pilot.pause()
        assert "running 10m00s  ● live" in header_text(target).split("\n")[0]
        now[0] += 25  # no new line: rows say SILENT 27s, the run is 25 s longer
        target.header.refresh()
        await pilot.pause()
        assert "running 10m25s  ● live" in header_text(target).split("\n")[0]
        assert "last line 27s ago" in header_text(target)
        ended = all_killed(report)
        post(target, snapshot(ended))
        await pilot.pause()
        assert "ran 9m58s  ■ run ended" in header_text(target).split("\n")[0]


async def test_while_reading_the_header_counts_unread_logs_once_and_keeps_the_category() -> None:
    """The trial's N14 at 512 ranks: `⟳ reading logs: 472 files behind` stood still while
    the counts went `471 not read yet` -> 52, and at 80 columns the headline lost its
    category (`FAILED so far: rank 37 failed… run 10m59s`). One number now, the counts';
    a headline too long loses its middle, never the category."""
    ranks = oom_with_timeouts().ranks
    unread = [dataclasses.replace(r, status=Status.UNKNOWN) for r in ranks[4:]]
    report = dataclasses.replace(oom_with_timeouts(), ranks=(*ranks[:4], *unread))
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(report, behind=472))
        await pilot.pause()
        header = header_text(target)
        first = header.split("\n")[0]
        assert "4 not read yet" in header and "472" not in header
        assert first.rstrip().endswith("⟳ reading logs")
        assert "so far: rank 3 failed first: oom" in first
    target = app()
    async with target.run_test(size=(48, 24)) as pilot:  # narrower than the headline
        post(target, snapshot(report, behind=472))
        await pilot.pause()
        first = header_text(target).split("\n")[0]
    assert "so far: rank 3 … oom  ⟳ reading logs" in first, first


async def test_an_ended_run_judged_again_to_the_same_verdict_is_not_painted_again() -> None:
    """The trial's N6: for two minutes after a 512-rank run ended the view used ~5% of a
    core, repainting the same verdict each time the engine judged it again (every second
    or two, as silences grow). Only a different verdict is applied once the run ended."""
    ended = all_killed(synthetic(8))
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        applied: list[Update] = []
        paint = target.apply

        def counted(update: Update) -> None:
            applied.append(update)
            paint(update)

        target.apply = counted  # type: ignore[method-assign]
        post(target, snapshot(ended))
        await pilot.pause()
        post(target, snapshot(dataclasses.replace(ended)))  # judged again: equal, new
        post(target, snapshot(dataclasses.replace(ended)))
        await pilot.pause()
        assert len(applied) == 1
        other = dataclasses.replace(ended, ranks=ended.ranks[:7])  # a verdict that differs
        post(target, snapshot(other))
        await pilot.pause()
        assert len(applied) == 2 and "7 ranks" in header_text(target)


async def test_after_the_run_the_last_line_is_where_triages_log_times_end() -> None:
    """The trial's N8: after `■ run ended` on the hang, the header said `last line
    18:40:52.539` while the verdict cites the scheduler at 18:41:22 and triage's `log
    times` end at 18:41:22.828. The run's last line is the last of every file the verdict
    reads, and each row's SILENT is measured to that same moment."""
    report = fixture_report("cpu_hang_rank1_allreduce_timeout")
    span = fmt.time_span(report)
    end = span.rsplit(" - ", 1)[1]
    target = app()
    async with target.run_test(size=(80, 24)) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        assert target.last is not None and target.last.ended
        assert f"last line {end}" in header_text(target)
        assert "ran 1m13s" in header_text(target)  # 18:40:09.658 - 18:41:22.828, as triage's
        rows = {int(r.split()[0]): r for r in screen_text(target) if r[:6].strip().isdigit()}
    assert end == "18:41:22.828" and set(rows) == {0, 1}
    for r in report.ranks:  # to the scheduler's last line, not the ranks' last
        assert r.last_time is not None and r.rank in rows
        assert f" {cells.ago(max(fmt.log_times(report)) - r.last_time)} " in rows[r.rank]


async def test_counts_of_one_are_singular() -> None:
    """The trial's A3: `Findings (6, 1 errors)`; the table's summary said `1/1 ranks`."""
    one = synthetic(1)
    report = dataclasses.replace(
        one, outcome="failed", findings=(finding("hccl-timeout", [0], "Rank 0 timed out"),)
    )
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        assert str(target.findings.border_title) == "Findings (1, 1 error)"
        assert "1/1 rank ·" in str(target.filter_bar.query_one("#view-summary").render())


async def test_a_warning_is_shown_as_written_not_as_markup() -> None:
    """A warning names files and log text: `worker_[b]1[/b].log` is shown as it is, not as
    a bold `1` (Textual reads notifications as markup unless told not to)."""
    warning = "cannot read msrun_log/worker_[b]1[/b].log: Permission denied"
    report = dataclasses.replace(synthetic(2), warnings=(warning,))
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(report))
        await pilot.pause()
        shown = [(n.message, n.markup) for n in target._notifications]
    assert shown == [(warning, False)]


def test_a_root_cause_on_ranks_named_together_does_not_name_one_first() -> None:
    """The re-trial's A13: `FAILED ranks 0-1 hung` above `ROOT CAUSE run-stalled on ranks
    0-1 (2); first on rank 0` gave two answers. The root cause leaves who was first to the
    header; a symptom still says on which rank it was seen first."""
    stalled = dataclasses.replace(
        finding("run-stalled", [0, 1], "No rank wrote", first=0), role="root-cause"
    )
    symptom = finding("cann-ei0006", [0, 1], "EI0006", first=1)
    assert describe(stalled) == "run-stalled on ranks 0-1 (2)"
    assert describe(symptom) == "cann-ei0006 on ranks 0-1 (2); first on rank 1"
