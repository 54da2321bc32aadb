"""The headers of WARNING/ERROR/CRITICAL lines read in the scanner's block pass
(patterns.CANDIDATE_LINE's `fault`, issue 22) are GLOG_HEADER's, and the lines read so give
the facts they gave when each was matched on its own (the slow path: shortcuts off)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.read import patterns as P
from msrunwatch.read import shortcuts
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileRole
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher
from tests.unit.test_glog_header import REAL

FAULT_LEVELS = ("WARNING", "ERROR", "CRITICAL")


def block_fields(line: str) -> tuple[str, str, str, str] | None:
    """What the scanner reads of an ASCII line's header in its block pass (FileScanner._read
    slices the message off the decoded line the same way)."""
    m = P.CANDIDATE_LINE.match(b"\n" + line.encode("ascii"))
    if m is None or m.lastindex is None:
        return None
    level, pid, ts = (g.decode() for g in m.group("level", "pid", "ts"))
    return level, pid, ts, line[m.end("fault") - 1 :]


def line_fields(line: str) -> tuple[str, str, str, str] | None:
    """What Extractor.line reads of it: GLOG_HEADER's groups, for the fault levels."""
    m = P.GLOG_HEADER.match(line)
    if m is None or m["level"] not in FAULT_LEVELS:
        return None
    return m["level"], m["pid"], m["ts"], m["msg"]


@pytest.mark.parametrize("line", [line for line, _ in REAL])
def test_real_headers_read_the_same_in_the_block_pass(line: str) -> None:
    assert block_fields(line) == line_fields(line)
    if line.startswith(("[WARNING]", "[ERROR]")):
        assert block_fields(line) is not None  # the fast path is taken on real lines


PIECES = st.sampled_from(
    [
        "[",
        "]",
        "] ",
        " ",
        "WARNING",
        "ERROR",
        "CRITICAL",
        "INFO",
        "V1",
        "ME",
        "HCCL",
        "(",
        ")",
        "):",
        ",",
        ":",
        "4206",
        "1234567890123456789",
        "7f013da79b80,python",
        "2026-11-21-05:12:44.300.858",
        "2026-11-21-05:14:08.310.00",
        "2026-11-21-05:14:08.3.",
        "[mindspore/ccsrc/a.cc:428] ",
        "[a/b.py:1]",
        "PostProcess] ",
        "~Dtor<int>::x",
        "\r",
        "\t",
        "x",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(PIECES, max_size=14).map("".join)
    | st.text(st.characters(max_codepoint=127, blacklist_characters="\n"), max_size=60)
)
def test_any_ascii_line_reads_the_same_in_the_block_pass(line: str) -> None:
    for text in (line, "[WARNING] ME(1,x):2026-11-21-05:12:44.300.858 [a.cc:1] " + line):
        assert block_fields(text) == line_fields(text)


LOG = [
    "[INFO] ME(7,a,python):2026-11-21-05:12:40.000.001 [a.cc:1] Start] starting",
    "[WARNING] DISTRIBUTED(7,a,python):2026-11-21-05:12:44.300.858 "
    "[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] This node 1 rank id: 1",
    "[ERROR] RUNTIME_FRAMEWORK(7,a,python):2026-11-21-05:34:25.600.374 [m.cc:515] "
    "SetOpContextMemoryAllocFail] #umsg#Memory not enough:#umsg#Memory isn't enough",
    "[ERROR] ME(7:140,MainProcess):2026-11-21-05:34:26.093.695 [t.py:9] 内存不足 out of memory",
    "[CRITICAL] ME(7,a,python):2026-11-21-05:34:27.1.5 [x.cc:2] Run] Segmentation fault",
    "Traceback (most recent call last):",
    '  File "/home/u/train.py", line 12, in main',
    "RuntimeError: Call aclnnAdd failed, detail:EZ9999: Inner Error!",
    "[WARNING] ME(7,a,python):2026-11-21-05:34:28.000.000 [y.cc:3] \r",
    "[ERROR] ME(x7):2026-11-21-05:34:29.000.000 [z.cc:4] no header: the pid is no number",
]


def facts(path: Path, block: int) -> object:
    matcher = LineMatcher(load_rules())
    scanner = FileScanner(str(path), str(path.parent), FileRole.WORKER, matcher, 0)
    data = path.read_bytes()
    for i in range(0, len(data), block):
        scanner.feed(data[i : i + block])
    scanner.close()
    return scanner.facts()


@pytest.mark.parametrize("block", [64, 1 << 16])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_fault_lines_read_from_the_block_pass_give_the_slow_paths_facts(
    tmp_path: Path, block: int, ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "worker_0.log"
    path.write_bytes((ending.join(LOG) + ending).encode())
    read_whole: list[str] = []
    original = Extractor.line

    def line(self: Extractor, text: str, *args: object) -> None:
        if text.startswith(FAULT_LEVELS, 1):
            read_whole.append(text)
        original(self, text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Extractor, "line", line)
    fast = facts(path, block)
    # all but the non-ASCII line and the one GLOG_HEADER refuses read from the block pass
    assert [text[1:4] for text in read_whole] == ["ERR", "ERR"]
    with shortcuts.off():
        slow = facts(path, block)
    faults = sum(text.startswith(FAULT_LEVELS, 1) for text in LOG)
    assert len(read_whole) == 2 + faults  # the slow path matches every header on its own
    assert fast == slow
    assert {h.rule for h in fast.hits}  # type: ignore[attr-defined]
