"""A log whose rank is not known (standard input, one file that names no rank) is `the log`
in sentences and its own name in the table, never `rank -1` (trial N9:
`FAILED  rank -1 failed first`, `Rank -1's log ends in: ...`, a table row `-1`). The JSON
keeps its field: such a log's `rank` is negative and its `file` names it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers.triage import triage
from msrunwatch.report import markdown
from msrunwatch.rules.model import Rule
from msrunwatch.tui.columns import COLUMNS
from tests.integration.test_cli_conventions import run

BOOM = b"[ERROR] ME(1,1,python):2026-11-21-08:00:40.108.315 [x.cc:1] f] boom\n"
RANK_MINUS = re.compile(r"\b[Rr]anks? -\d|^\s*-1\s", re.M)


def test_a_log_on_standard_input_is_the_log_not_rank_minus_one() -> None:
    code, out, _ = run("triage", "-", stdin=BOOM)
    assert code == 1
    assert out.startswith("FAILED  the log failed: unclassified (1 failed)"), (
        out
    )  # no "first" of one
    assert "  The log ends in: [ERROR] ME(1,1,python)" in out
    assert "why: the last fault in the log is followed by no progress" in out
    assert re.search(r"^\s+<stdin>\s+failed\s", out, re.M), out  # the table names the log
    assert not RANK_MINUS.search(out), out


def test_one_error_line_on_standard_input_is_one_finding_in_one_file() -> None:
    """Trial A2: the line the log ends in was two findings (`log-ends-in-fault` and
    `error-line`, both at <stdin>:1) read from `1 files`."""
    code, out, _ = run("triage", "-", stdin=BOOM)
    assert code == 1
    assert "FINDINGS (1)" in out, out
    assert "log-ends-in-fault  [root-cause]  the log" in out
    assert "error-line" not in out, out
    assert re.search(r"log times: .*; 1 file, \d+ B read$", out, re.M), out


def test_its_json_keeps_the_rank_field_negative_with_the_file_that_names_it() -> None:
    code, out, _ = run("triage", "-", "--format", "json", stdin=BOOM)
    report = json.loads(out)
    assert code == 1 and report["root_cause"]["ranks"] == [-1]
    (rank,) = report["ranks"]
    assert (rank["rank"], rank["file"]) == (-1, "<stdin>")
    assert report["root_cause"]["message"].startswith("The log ends in: ")


def test_a_file_that_names_no_rank_reads_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rules: list[Rule]
) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(BOOM)
    main(["triage", str(log), "--color", "never"])
    out = capsys.readouterr().out
    assert "the log failed: unclassified" in out and not RANK_MINUS.search(out), out
    report = triage([str(log)], rules)
    text = markdown.render(report)
    assert "the log" in text and not RANK_MINUS.search(text), text
    rank_column = next(c for c in COLUMNS if c.key == "rank")
    assert rank_column.text(report.ranks[0], None) == "train.log"  # the TUI's RANK cell
