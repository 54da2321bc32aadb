"""The TUI's pure parts: cell formats, the rank table's model, the log tail reader."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from msrunwatch.judge.model import Status
from msrunwatch.tui import cells, logdoc
from msrunwatch.tui.rows import PROBLEMS, Rows, parse_ranks
from msrunwatch.tui.widgets.row_painter import fit
from tests.tui.tui_scenarios import NOW, ROOT, rank_report, synthetic


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0.44, "0.4s"),
        (9.96, "10.0s"),
        (12.7, "12s"),
        (185, "3m05s"),
        (7800, "2h10m"),
        (3 * 86400 + 4 * 3600, "3d04h"),
    ],
)
def test_ago(seconds: float | None, text: str) -> None:
    assert cells.ago(seconds) == text


@pytest.mark.parametrize(
    ("ratio", "text"),
    [
        (0.0, "        "),
        (0.5, "████    "),
        (1 / 64, "▏       "),
        (1.0, "████████"),
        (1.7, "████████"),
    ],
)
def test_bar(ratio: float, text: str) -> None:
    assert cells.bar(ratio) == text


def test_printable_shows_escapes_and_control_characters_as_triage_does() -> None:
    shown = cells.printable("a\x1b[31mred\x1b[0m\tb\x07[/]\nc")
    assert shown == "a\\x1b[31mred\\x1b[0m b\\x07[/] c"  # visible; the tab spaced


@pytest.mark.parametrize(
    ("spec", "ranks"),
    [
        ("3", {3}),
        ("0-3, 7", {0, 1, 2, 3, 7}),
        ("5-3", {3, 4, 5}),
        ("12,", {12}),
        ("oom", None),
        ("node001", None),
        ("", None),
    ],
)
def test_parse_ranks(spec: str, ranks: set[int] | None) -> None:
    parsed = parse_ranks(spec)
    assert (None if parsed is None else set(parsed)) == ranks


def test_rows_report_only_changed_rows() -> None:
    rows = Rows()
    report = synthetic(16)
    assert rows.apply(report.ranks, {}, NOW) == list(range(16))
    assert rows.apply(report.ranks, {}, NOW) == []
    moved = list(report.ranks)
    moved[5] = rank_report(5, step=101)
    assert rows.apply(moved, {}, NOW) == [5]
    assert rows.version[5] == 1 and rows.version[4] == 0


def test_rows_reset_when_a_rank_goes_away() -> None:
    rows = Rows()
    rows.apply(synthetic(8).ranks, {}, NOW)
    assert rows.apply(synthetic(4).ranks, {}, NOW) == [0, 1, 2, 3]
    assert [r.rank for r in rows.rows] == [0, 1, 2, 3]
    assert rows.generation == 1


def test_sort_puts_missing_values_last_both_ways() -> None:
    rows = Rows()
    ranks = list(synthetic(4).ranks)
    ranks[1] = dataclasses.replace(ranks[1], progress=None)
    rows.apply(ranks, {}, NOW)
    rows.sort_key = "step"
    rows.refilter(NOW)
    assert [rows.rows[i].rank for i in rows.order][-1] == 1
    rows.reverse = True
    rows.refilter(NOW)
    assert [rows.rows[i].rank for i in rows.order][-1] == 1


def test_sort_by_status_puts_the_worst_first() -> None:
    rows = Rows()
    ranks = list(synthetic(4).ranks)
    ranks[2] = dataclasses.replace(ranks[2], status=Status.FAILED)
    ranks[3] = dataclasses.replace(ranks[3], status=Status.FINISHED)
    rows.apply(ranks, {}, NOW)
    rows.sort_key = "status"
    assert [rows.rows[i].rank for i in rows.refilter(NOW)] == [2, 0, 1, 3]


def test_silence_grows_with_the_clock_between_snapshots() -> None:
    rows = Rows()
    rows.apply(synthetic(2).ranks, {0: 1.0, 1: 5.0}, NOW)
    assert rows.quiet(1, NOW + 10) == 15.0
    rows.sort_key, rows.reverse = "silent", True
    assert rows.refilter(NOW) == [1, 0]


def test_filters_by_status_text_and_rank_list() -> None:
    rows = Rows()
    ranks = list(synthetic(32).ranks)
    ranks[9] = dataclasses.replace(ranks[9], status=Status.TIMED_OUT)
    ranks[20] = dataclasses.replace(ranks[20], status=Status.FAILED)
    rows.apply(ranks, {}, NOW)
    rows.status_filter = PROBLEMS
    assert rows.refilter(NOW) == [9, 20]
    rows.status_filter = "failed"
    assert rows.refilter(NOW) == [20]
    rows.status_filter = "all"
    rows.text_filter = "node002"
    assert rows.refilter(NOW) == list(range(16, 24))
    rows.text_filter = "0-2, 30"
    assert rows.refilter(NOW) == [0, 1, 2, 30]
    assert rows.statuses() == ["all", "problems", "failed", "timed-out", "training"]


def test_columns_appear_when_some_rank_has_data() -> None:
    rows = Rows()
    bare = dataclasses.replace(rank_report(0), memory=None, progress=None, compile=None, host=None)
    rows.apply([bare], {}, NOW)
    assert [c.key for c in rows.columns()] == ["rank", "status", "phase", "silent", "error"]
    rows.apply([rank_report(0)], {}, NOW)
    assert "mem" in [c.key for c in rows.columns()]


def test_columns_drop_by_priority_on_a_narrow_terminal() -> None:
    """At 80 columns the memory bar beats HOST when every rank is on one host; RANK,
    STATUS and FIRST ERROR always stay."""
    rows = Rows()
    rows.apply([dataclasses.replace(rank_report(r), host="node0") for r in range(8)], {}, NOW)
    narrow = [c.key for c in fit(rows.columns(), rows.host_width, rows.error_width, 80)]
    assert narrow[:2] == ["rank", "status"] and narrow[-1] == "error"
    assert "mem" in narrow and "host" not in narrow
    wide = [c.key for c in fit(rows.columns(), rows.host_width, rows.error_width, 200)]
    assert wide == [c.key for c in rows.columns()]


def test_a_log_document_indexes_in_blocks_and_follows_growth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logdoc, "BLOCK", 64)
    log = tmp_path / "worker_0.log"
    lines = [f"line {i:06d} " + "x" * (i % 90) for i in range(500)]
    log.write_text("\n".join(lines[:300]))  # the last line is being written
    doc = logdoc.LogDoc(str(log))
    assert doc.index() and len(doc) == 300
    assert [doc.line(i) for i in (0, 123, 299)] == [lines[0], lines[123], lines[299]]
    with log.open("a") as fh:
        fh.write(" end\n" + "\n".join(lines[300:]) + "\n")
    assert doc.index() and len(doc) == 500
    assert doc.line(299) == lines[299] + " end" and doc.line(499) == lines[499]
    log.write_bytes(b"new run \xff\n")
    assert doc.index() and len(doc) == 1 and doc.line(0) == "new run \ufffd"


def test_a_missing_log_says_why(tmp_path: Path) -> None:
    doc = logdoc.LogDoc(str(tmp_path / "nope.log"))
    assert not doc.index() and doc.error and doc.line(0) == ""


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            "[ERROR] RUNTIME_FRAMEWORK(31813,7f78777fe6c0,python):2026-11-21-05:34:25.600.374 "
            "[mindspore/ccsrc/backend/ms_backend/runtime/actors/base/memory_manager_actor.cc:515]"
            " SetOpContextMemoryAllocFail] #umsg#Memory not enough",
            "05:34:25.600 ERROR #umsg#Memory not enough",
        ),
        (
            "[WARNING] DISTRIBUTED(4242,ffff,python):2026-11-21-05:34:25.600.324 [a.cc:1] hello",
            "05:34:25.600 WARN  hello",
        ),
        ("Traceback (most recent call last):", "Traceback (most recent call last):"),
    ],
)
def test_the_glog_prefix_is_condensed_to_time_and_level(line: str, shown: str) -> None:
    assert logdoc.condense(line) == shown


@pytest.mark.parametrize("width", [78, 120, 198])
def test_middle_cut_keeps_what_follows_a_long_path(width: int) -> None:
    """The third trial lost the OOM's size even at 200 columns: the operator's path took it."""
    op = "/".join(f"{n}-LlamaDecodeLayer" for n in range(12)) + "/MatMul-op2213"
    said = cells.middle_cut(f"Out of memory: {op} could not allocate 1.2 GiB", width)
    assert len(said) <= width
    assert said.startswith("Out of memory: 0-Llama") and said.endswith("could not allocate 1.2 GiB")
    assert "MatMul-op2213" in said and "…" in said


def test_middle_cut_leaves_what_fits_and_cuts_short_words_once_between_them() -> None:
    assert cells.middle_cut("rank 3 failed", 80) == "rank 3 failed"
    many = " ".join("abcdefghijklmnopqrst")
    said = cells.middle_cut(many, 20)
    assert said == "a b c d … p q r s t" and len(said) <= 20


@pytest.mark.parametrize("width", [78, 100, 106])
def test_an_exception_is_cut_once_keeping_its_class_and_file_line(width: int) -> None:
    """The trial's N17: at 80 columns the header read `Runt…ror: msru…atch test:
    deli…rate failure on rank 1 at step 3 (at trai…y:7…`: five cuts mid-word."""
    said = cells.middle_cut(
        "RuntimeError: msrunwatch test: deliberate failure on rank 1 at step 3 "
        "(at train_dense.py:79 in on_train_step_end)",
        width,
    )
    assert len(said) <= width and said.count("…") == 1
    assert said.startswith("RuntimeError: ")
    assert said.endswith("step 3 (at train_dense.py:79 in on_train_step_end)")  # #28: figures
    assert " … " in said  # between words


@pytest.mark.parametrize("width", range(58, 106, 4))
def test_a_cut_between_words_keeps_every_figure_with_its_unit(width: int) -> None:
    """The trial's #28: a cut in the middle read `for … s`, the seconds gone. A figure and
    its unit stay whole, and when a run of words without figures is long enough, the cut
    takes those words instead."""
    text = (
        "rank 1 stopped: its log has not grown for 187 s while every other rank went on "
        "logging steps (stall threshold 120 s)"
    )
    said = cells.middle_cut(text, width)
    assert len(said) <= width and said.count("…") == 1
    assert "for 187 s" in said and said.endswith("120 s)")


def test_a_figure_is_never_split_from_its_unit() -> None:
    said = cells.middle_cut("waited for 1800 s in HcclAllReduce then gave up", 24)
    assert len(said) <= 24 and "1800" not in said.replace("1800 s", "")
    assert cells.with_units(["for", "125", "s", "and", "1.2", "GiB"]) == [
        "for",
        "125 s",
        "and",
        "1.2 GiB",
    ]


def test_wrapped_log_lines_break_between_words() -> None:
    """The trial's N27: `... the first one tim` / `ed out`, `Memory is` / `n't enough`."""
    from msrunwatch.tui.widgets.log_view import word_cuts

    text = "12 07:12:39 ERROR worker 0 is the first one timed out, please check its log."
    cuts = word_cuts(text, 30, 27)
    rows = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    assert "".join(rows) == text and all(len(r.rstrip(" ")) <= 30 for r in rows)
    assert not any(r.startswith(" ") for r in rows)
    assert all(r.endswith(" ") for r in rows[:-1])  # every break after a space
    path = "kernel " + "/".join(["13-LlamaDecodeLayer"] * 4)
    assert len(word_cuts(path, 30, 27)) == 3  # a word longer than a row is still split


def test_the_timeline_is_read_again_only_when_a_log_changed(tmp_path: Path) -> None:
    """The trial's N6: at 512 ranks, every `t` read every log again (8 s), though the run
    had ended."""
    from msrunwatch.tui.timeline import LogRef, merged

    log = tmp_path / "worker_0.log"
    log.write_text("[ERROR] ME(1,2,python):2026-11-21-05:34:25.600.374 [a.cc:1] f] first\n")
    refs = [LogRef(0, str(log))]
    first = merged(refs)
    assert merged(refs) is first  # nothing changed: the same lines, not read again
    with log.open("a") as fh:
        fh.write("[ERROR] ME(1,2,python):2026-11-21-05:34:26.600.374 [a.cc:2] f] second\n")
    again = merged(refs)
    assert [e.text.rsplit("] ", 1)[-1] for e in again] == ["first", "second"]


def test_the_consoles_echoes_of_log_lines_are_listed_once() -> None:
    """The trial: msrun's console (`--join=True`) repeats every worker line verbatim, and
    the timeline listed each ERROR twice, the rank-less copy first. A real run's files:
    each line the logs hold is listed from its log; msrun's own lines stay."""
    from msrunwatch.tui.timeline import LogRef, entries, merge

    run = ROOT / "fixtures" / "cpu_dp2_oom_alloc_failed"
    logs = [LogRef(n, str(run / "msrun_log" / f"worker_{n}.log")) for n in (0, 1)]
    console = LogRef(None, str(run / "msrun_console.txt"))
    from_logs = [e for ref in logs for e in entries(ref)]
    from_console = list(entries(console))
    assert {e.text for e in from_logs} <= {e.text for e in from_console}  # all echoed
    shown = merge([console, *logs])
    assert sorted(e.text for e in shown if e.rank is not None) == sorted(
        e.text for e in from_logs
    )  # every log line, from its log
    oom = [e for e in shown if "Memory not enough" in e.text and e.level == "E"]
    assert [e.rank for e in oom] == [1, 0]  # rank 1 first, as triage says; no console copy
    own = [e for e in shown if e.rank is None]
    copies, logged = Counter(e.text for e in from_console), Counter(e.text for e in from_logs)
    assert Counter(e.text for e in own) == copies - logged  # the copies beyond the logs'
    assert len(shown) == len(from_logs) + len(own) and len(own) < len(from_console) / 2


def test_an_echo_is_matched_once_per_copy_and_only_against_the_logs(tmp_path: Path) -> None:
    """A line the console holds more often than the logs do is msrun's own as well: kept
    (the counts matter). Two logs with the same line both keep it (no rank echoes another)."""
    from msrunwatch.tui.timeline import LogRef, merge

    line = "Traceback (most recent call last):\n"
    (tmp_path / "log").mkdir()
    worker_0, worker_1 = tmp_path / "log" / "worker_0.log", tmp_path / "log" / "worker_1.log"
    worker_0.write_text(line)
    worker_1.write_text(line)
    console = tmp_path / "console.txt"
    console.write_text(line * 3)
    shown = merge([LogRef(None, str(console)), LogRef(0, str(worker_0)), LogRef(1, str(worker_1))])
    assert sorted(str(e.rank) for e in shown) == ["0", "1", "None"]
