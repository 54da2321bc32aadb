"""A compile stage's timing at INFO (`[PROF]<stage> costs N msec`, about 80 lines per MiB of
a real GLOG_v=1 log) is read from the bytes without reading the line whole: the facts are
those of reading it whole, whatever the line holds besides, wherever it falls."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.read import patterns as P
from msrunwatch.read import scan as scan_module
from msrunwatch.read import shortcuts
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.glog import StageTiming
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher
from tests.support import ScanText

HEAD = "[{level}] ME(4242,7f3a9c,python):2026-11-21-05:14:{s:02d}.{ms:03d}.{us} [{src}] {func}"
STAGES = [
    "[PROF]compile_graph costs 12.5 msec.",
    "[PROF]BuildCluster costs 1116.63 msec.",
    "[PROF]compile_graph costs 1e999 msec.",
    "[PROF]x costs 1.2.3 msec",
    "[PROF]compile_graph costs 3 msec. This node 1 rank id: 1",
    "[PROF]compile_graph costs 3 msec. Start compiling, phase: train.1",
    "[PROF]compile_graph costs 3 msec. Create collective communication group: g [const vector]{0, 1}",
    "[PROF]compile_graph costs 3 msec. Memory Adapter deinitialize success",
    "[PROF]compile_graph costs 3 msec. [PROF]other costs 4 msec",
    "[PROF]compile_graph costs 3 msec. 内存",
    "[PROF]PreLaunchCommKernel costs 0.011 msec",
    "pre [PROF]compile_graph costs 3 msec",
]
HEADS = [
    {"level": "INFO", "src": "a/b.cc:12", "func": "F] "},
    {"level": "INFO", "src": "a/b.cc:12", "func": ""},
    {"level": "DEBUG", "src": "x:1:2", "func": "Build~<x>] "},
    {"level": "WARNING", "src": "a/b.cc:12", "func": "F] "},
    {"level": "V1", "src": "a/b.cc:12", "func": "F] "},
    {"level": "INFO", "src": "a]b.cc:12", "func": "F] "},
]
AROUND = [
    "Traceback (most recent call last):",
    '  File "/home/u/train.py", line 3, in main',
    "{stage_line}",
    "RuntimeError:",
    "{stage_line}",
    "----",
    "the body says what",
    "[ERROR] ME(4242,7f3a9c,python):2026-11-21-05:14:59.000.000 [a.cc:1] F] boom",
    "{stage_line}",
    "epoch: 1 step: 1, loss is 0.5",
    "{stage_line}",
]


def log(stage: str, head: dict[str, str]) -> str:
    lines = []
    for i, line in enumerate(AROUND):
        stage_line = HEAD.format(s=i, ms=i * 7, us="250", **head) + stage
        lines.append(line.format(stage_line=stage_line))
    return "\n".join(lines) + "\n"


def read(scan_text: ScanText, text: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> FileFacts:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(scan_module.FileScanner, "_only_stage", lambda *a: False)
        return scan_text(text.encode(), chunk=97)


@pytest.mark.parametrize("head", HEADS, ids=lambda h: f"{h['level']}-{h['src']}-{h['func']!r}")
@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_line_gives_what_reading_it_whole_gives(
    scan_text: ScanText, monkeypatch: pytest.MonkeyPatch, stage: str, head: dict[str, str]
) -> None:
    text = log(stage, head)
    assert read(scan_text, text, True, monkeypatch) == read(scan_text, text, False, monkeypatch)


def test_the_plain_stage_lines_are_read_fast(
    scan_text: ScanText, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above compares something: the ordinary stage line takes the fast path."""
    calls: list[list[StageTiming]] = []
    real = Extractor.stage_lines

    def counting(self: Extractor, timings: list[StageTiming], start: int) -> None:
        calls.append(timings)
        real(self, timings, start)

    monkeypatch.setattr(Extractor, "stage_lines", counting)
    facts = scan_text(log(STAGES[0], HEADS[0]).encode())
    assert [len(run) for run in calls] == [1, 1, 1, 1]
    assert facts.compile.stages == (("compile_graph", 50.0),)


PIECES = [
    b"\n",
    b"[PROF]",
    b"PreLaunchCommKernel ",
    b"PreLaunchCommKernel",
    b"compiling",
    b"x",
    b" ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.integers(0, 400))
def test_marked_lines_finds_what_the_marker_patterns_find(pieces: list[bytes], end: int) -> None:
    """The scanner finds marked INFO lines with bytes.find (patterns.marked_lines): the same
    lines, in the same order, as the marker regexes it replaced, wherever the block ends."""
    buf = b"".join(pieces)
    end = min(end, len(buf))
    expected = [
        (index, buf.rfind(b"\n", 0, m.start()) + 1)
        for index, marker in enumerate(P.INFO_MARKERS)
        for m in marker.finditer(buf, 0, end)
    ]
    assert list(P.marked_lines(buf, end)) == expected


def _stage(second: int, stage: str, pid: int = 4242) -> bytes:
    head = HEAD.replace("4242", str(pid)).format(s=second, ms=second * 7, us="250", **HEADS[0])
    return f"{head}[PROF]{stage} costs {second}.5 msec".encode()


RUN_LINES = [
    _stage(1, "compile_graph"),
    _stage(2, "BuildCluster"),
    _stage(3, "compile_graph", pid=77),
    _stage(4, "OptimizeGraph", pid=78),
    b"[INFO] ME(4242,7f,python):2026-11-21-05:14:05.000.000 [a.cc:1] F] plain info",
    b"[INFO] ME(4242,7f,python):2026-11-21-05:14:06.000.000 [a.cc:1] F] Start compiling, phase: t",
    b"[WARNING] ME(4242,7f,python):2026-11-21-05:14:07.000.000 [a.cc:1] F] out of memory",
    b"[ERROR] ME(4242,7f,python):2026-11-21-05:14:08.000.000 [a.cc:1] F] boom",
    b"a quiet print",
    b"Traceback (most recent call last):",
    b'  File "/home/u/train.py", line 3, in main',
    b"RuntimeError:",
    b"the body says what",
    b"epoch: 1 step: 3, loss is nan",
    b"epoch: 1 step: 4, loss is 0.25",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(RUN_LINES), max_size=30),
    st.integers(1, 600),
    st.booleans(),
)
def test_runs_of_stage_lines_read_at_once_give_what_the_slow_path_gives(
    lines: list[bytes], chunk: int, final_newline: bool
) -> None:
    """Stage lines are read a run at a time (FileScanner._stage_run: between two other
    lines read, with quiet lines and the block's end anywhere among them): the file's facts
    are those of the slow path, where every line is read whole (read.shortcuts)."""
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    fast = scan_bytes(data, chunk)
    with shortcuts.off():
        slow = scan_bytes(data, chunk)
    assert repr(fast) == repr(slow)  # a NaN loss is not equal to itself


@functools.cache
def _matcher() -> LineMatcher:
    return LineMatcher(load_rules())


def scan_bytes(data: bytes, chunk: int) -> FileFacts:
    matcher = _matcher()
    matcher.fresh_budget()
    scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
    for i in range(0, len(data), chunk):
        scanner.feed(data[i : i + chunk])
    scanner.close()
    return scanner.facts()
