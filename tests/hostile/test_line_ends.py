"""Issue 21, defect 10: a lone CR in a log's first line (a progress bar redrawn before the
first newline) made the scanner take the file for one whose lines end in a lone CR, so
every later CRLF counted as two line ends: an OOM on line 12 was reported at line 23."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.read.facts import FileRole
from msrunwatch.read.pieces import Source, join, scan_piece
from msrunwatch.rules.matcher import LineMatcher
from tests.support import ScanText

OOM = (
    "[ERROR] RUNTIME_FRAMEWORK(31811,7f40af5fe6c0,python):2026-11-21-05:34:26.093.695 "
    "[mindspore/ccsrc/runtime/memory_manager_actor.cc:515] SetOpContextMemoryAllocFail] "
    "#umsg#Memory not enough:#umsg#Memory isn't enough and alloc failed, kernel name: "
    "0_Default/BroadcastTo-op0, alloc size: 68719476736B."
)
STEP = "[WARNING] ME(31811,7f40af5fe6c0,python):2026-11-21-05:34:{:02d}.000.000 [a.cc:1] F] step"


def log(first: str = "Downloading  10%\rDownloading 100%") -> bytes:
    """Line 1 holds a lone CR; every line ends in CRLF; the OOM is line 12."""
    lines = [first, *(STEP.format(i) for i in range(2, 12)), OOM]
    return ("\r\n".join(lines) + "\r\n").encode()


@pytest.mark.parametrize("chunk", [None, 5, 64], ids=["whole", "5-byte appends", "64-byte"])
def test_a_lone_cr_in_the_first_line_leaves_crlf_one_line_end(
    scan_text: ScanText, chunk: int | None
) -> None:
    facts = scan_text(log(), chunk=chunk)
    assert facts.lines == 12
    assert [(h.rule, h.line) for h in facts.hits] == [("oom-memory-not-enough", 12)]


def test_read_in_pieces_too(tmp_path: Path, matcher: LineMatcher) -> None:
    path = tmp_path / "worker_0.log"
    data = log()
    path.write_bytes(data)
    source = Source(str(path), path.name, "logs", FileRole.WORKER, 0)
    edges = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    facts = join([scan_piece(source, matcher, edges, i) for i in range(3)], len(data))
    assert facts.lines == 12
    assert [(h.rule, h.line) for h in facts.hits] == [("oom-memory-not-enough", 12)]


def test_triage_reports_the_oom_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "worker_0.log").write_bytes(log())
    assert main(["triage", "--format", "json", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["root_cause"]["rule"], report["root_cause"]["line"]) == (
        "oom-memory-not-enough",
        12,
    )


def test_a_file_of_lone_crs_still_has_its_lines(scan_text: ScanText) -> None:
    """What the CR-only reading is for (issue 10), small or fed in small appends."""
    data = log().replace(b"\r\n", b"\r")
    for chunk in (None, 5):
        facts = scan_text(data, chunk=chunk)
        assert [(h.rule, h.line) for h in facts.hits] == [("oom-memory-not-enough", 13)]
