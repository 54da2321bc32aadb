"""A compile stage's timing at INFO (`[PROF]<stage> costs N msec`, about 80 lines per MiB of
a real GLOG_v=1 log) is read from the bytes without reading the line whole: the facts are
those of reading it whole, whatever the line holds besides, wherever it falls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.read import patterns as P
from msrunwatch.read import scan as scan_module
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileFacts
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
    calls = []
    real = Extractor.stage_line

    def counting(self: Extractor, *args: object) -> None:
        calls.append(args)
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Extractor, "stage_line", counting)
    facts = scan_text(log(STAGES[0], HEADS[0]).encode())
    assert len(calls) == 4
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
