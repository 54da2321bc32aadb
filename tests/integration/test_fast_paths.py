"""Every shortcut of the reader gives the verdict reading every line gives (issue 18).

The reader passes most lines over (INFO lines, LossMonitor lines read in bulk, quiet lines
and print floods, repeats of inert lines, the rules' prefilter, the shapes' literal guards:
see msrunwatch/read/shortcuts.py). `shortcuts.off()` turns them all off. Here every fixture
(the held-out public excerpts excepted: they are used only through bench/accuracy.py) is
triaged both ways, and the whole verdicts must be equal: findings (rule, ranks, files, lines,
messages, counts), every rank's status and facts, the root cause. Every rule's cases are
read both ways one by one, alone, and each rule's first firing case also embedded in a real
log in every place a shortcut reads (between LossMonitor lines read in bulk, inside floods
of prints, repeated), in two block sizes (every case embedded with
MSRUNWATCH_EVERY_CASE=1, tests/support.py), and the facts of every file must be equal: no case meets another, so what one case
fires cannot hide what another misses. Random lines (faults, tracebacks, GLOG lines of every
level, compile markers, LossMonitor lines with finite and non-finite losses, floods) are
injected at random places into small fixtures, read in blocks of random sizes, and triaged
both ways.

A new shortcut (block-level extraction included) must be turned off by `shortcuts.off()`,
and test_fast_paths_mutations.py must show these tests catching it when it skips a rule.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msrunwatch.read import shortcuts
from msrunwatch.read.facts import FileRole
from msrunwatch.read.quiet import quiet_lines
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from tests.integration.fastpaths import (
    BASES,
    CASE_LINES,
    CASE_LOGS,
    RULE_CASES,
    RULES,
    copy_of,
    difference,
    fast_difference,
    inject,
    loss_lines_difference,
    scenarios,
    slow_verdict,
    verdict,
    worker_logs,
)
from tests.support import FIXTURES


def assert_same(fast: object, slow: object) -> None:
    assert fast == slow, difference(fast, slow)


@pytest.mark.parametrize("case", scenarios(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_reads_the_same_with_and_without_shortcuts(case: Path) -> None:
    assert_same(verdict(case), slow_verdict(case))


@pytest.mark.parametrize("rule", sorted({c.rule for c in RULE_CASES}))
def test_every_rules_cases_read_the_same_alone_and_embedded(
    rule: str, case_root: Path, fast_matcher: LineMatcher
) -> None:
    """Each case of the rule on its own, then (its first firing case: fastpaths.placings)
    inside a real log where every shortcut reads its lines (see fastpaths.embedded), in two
    block sizes: the facts of every file equal those read with every shortcut off."""
    for case in (c for c in RULE_CASES if c.rule == rule):
        found = fast_difference(case, case_root, fast_matcher)
        assert found is None, found


def test_lossmonitor_lines_of_every_loss_read_the_same(
    case_root: Path, fast_matcher: LineMatcher
) -> None:
    """LossMonitor lines read in bulk with finite and non-finite losses (fastpaths.LOSSES)
    in a real log: those no rule fires on are passed over (read.lossonly), and the facts,
    the NaN findings among them, equal those read with every shortcut off."""
    found = loss_lines_difference(case_root, fast_matcher)
    assert found is None, found


def test_the_switch_reaches_every_reader() -> None:
    """Inside off() the scanner reads every line and the matcher tries every rule."""
    matcher = LineMatcher(RULES)
    assert shortcuts.enabled()
    with shortcuts.off():
        assert not shortcuts.enabled()
        scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
        assert scanner._all_lines and scanner.extractor._every_rule
    assert shortcuts.enabled()
    assert not FileScanner("w", "l", FileRole.WORKER, matcher, 0)._all_lines


def test_the_built_in_rules_keep_the_quiet_line_shortcut() -> None:
    """Quiet lines are passed over only when every rule's needs can be told; one pattern the
    analysis cannot read (Python's re refuses a group name used twice, which `regex` allows)
    turned the shortcut off for every log, silently: every line read in full."""
    assert quiet_lines(LineMatcher(RULES)).pattern is not None


GLOG = (
    "[{level}] {module}(4242,7f3a9c,python):2026-11-21-05:{m:02d}:{s:02d}.{ms:03d}.000 "
    "[a/b.cc:1] F] {msg}"
)
LEVELS = st.sampled_from(["INFO", "INFO", "DEBUG", "WARNING", "ERROR", "CRITICAL"])
LOSSES = st.sampled_from(["0.4183726", "nan", "NaN", "inf", "-inf", "1e+30", "7.25"])
MARKERS = st.sampled_from(
    [
        "Start compiling, phase: train.1.2.0",
        "Finish compiling.",
        "[PROF]compile_graph costs 12.5 msec",
        "[PROF]PreLaunchCommKernel costs 0.011 msec",
        "Ascend Memory Adapter deinitialize success, statistics:",
        "This node 1 rank id: 1",
        "Failed to connect to the meta server node url: 127.0.0.1:8118",
        "compiling",
    ]
)


@st.composite
def glog_line(draw: st.DrawFn) -> str:
    return GLOG.format(
        level=draw(LEVELS),
        module=draw(st.sampled_from(["ME", "DEVICE", "DISTRIBUTED", "PIPELINE"])),
        m=draw(st.integers(0, 59)),
        s=draw(st.integers(0, 59)),
        ms=draw(st.integers(0, 999)),
        msg=draw(st.one_of(st.sampled_from(CASE_LINES), MARKERS)),
    )


@st.composite
def loss_line(draw: st.DrawFn) -> str:
    epoch, step = draw(st.integers(1, 3)), draw(st.integers(1, 40))
    return f"epoch: {epoch} step: {step}, loss is {draw(LOSSES)}"


QUIET = st.sampled_from(["42", "", "Number of children     : 1", "value rate 7 of 9", "  x"])
STRUCTURE = st.sampled_from(
    [
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 12, in main',
        '  File "/usr/lib/python3.11/site-packages/mindspore/train/model.py", line 9, in train',
        "    model.train(1, ds)",
        "RuntimeError:",
        "ValueError: boom",
        "----------------------------------------------------",
        "- C++ Call Stack: (For framework developers)",
        "During handling of the above exception, another exception occurred:",
        "Device MOC memory size: 65536M",
        "MindSpore Used memory size: 58982M",
        "Actual peak memory usage (with fragments): 1234M",
        "Train epoch time: 31.579 ms, per step time: 3.947 ms",
        "[PROF]PreLaunchCommKernel costs 0.011 msec",
    ]
)


def any_line() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(CASE_LINES), glog_line(), loss_line(), STRUCTURE, QUIET)


@st.composite
def flood(draw: st.DrawFn) -> list[str]:
    """A flood of prints (a few repeated, or all different) with lines inside it."""
    size, repeated = draw(st.integers(70, 400)), draw(st.booleans())
    lines = [str(i % 7) if repeated else f"sample {i} rate {i * 3}" for i in range(size)]
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, size)), draw(any_line()))
    return lines


RUN = st.one_of(
    st.lists(any_line(), min_size=1, max_size=6),
    st.sampled_from(CASE_LOGS).map(lambda logs: next(iter(logs.values())).splitlines()),
    flood(),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    base=st.sampled_from(BASES),
    places=st.lists(st.tuples(st.floats(0, 1), RUN), min_size=1, max_size=8),
    block=st.sampled_from([1 << 9, 1 << 12, 1 << 16, None]),
    which=st.randoms(use_true_random=False),
)
def test_random_lines_injected_read_the_same(
    base: Path,
    places: list[tuple[float, list[str]]],
    block: int | None,
    which: random.Random,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    case = copy_of(base, tmp_path_factory.mktemp("injected"))
    workers = worker_logs(case)
    for where, run in places:
        inject(which.choice(workers), where, run)
    assert_same(verdict(case, block), slow_verdict(case))


MEMORY_SUMMARY = [
    "[INFO] DEVICE(211896,ffffb0b63020,python):2025-09-16-10:11:10.423.692 "
    "[mindspore/ccsrc/plugin/ascend/res_manager/mem_manager/ascend_memory_adapter.cc:269] "
    "DeInitialize] Ascend Memory Adapter deinitialize success, statistics:",
    "Device MOC memory size: 65536M",
    "MindSpore Used memory size: 58196M",
    "Actual peak memory usage (with fragments): 48900M",
]


def test_a_summary_header_that_ended_the_block_before_still_ends_the_rank(
    tmp_path: Path,
) -> None:
    """The memory summary's INFO header (skipped by the scanner) closes a block, and its
    first un-prefixed line opens the next: the rank still ends at the header, as when
    every line is read (found by test_random_lines_injected_read_the_same; the line before
    a block's first was read as empty)."""
    case = copy_of(FIXTURES / "cpu_dp2_success_glog2", tmp_path)
    log = worker_logs(case)[0]
    inject(log, 0.97, MEMORY_SUMMARY)
    data = log.read_bytes()
    block = data.index(b"\nDevice MOC memory size") + 2  # cut one byte into that line
    fast, slow = verdict(case, block), slow_verdict(case)
    assert slow["ranks"][0]["status_reason"].endswith(f"{log.name}:{data[:block].count(10)}")
    assert_same(fast, slow)
