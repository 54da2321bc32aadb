"""What the fast-path tests share: triage with and without the reader's shortcuts, the
verdicts as plain data, and the inputs with lines injected (see test_fast_paths.py)."""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import math
import shutil
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from msrunwatch.drivers import reading
from msrunwatch.drivers import triage as triage_driver
from msrunwatch.read import scan, shortcuts
from msrunwatch.read.discover import discover_target
from msrunwatch.rules import budget
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher
from tests.support import FIXTURES, ROOT, one_per_rule, untraced

RULES = load_rules()


def _accuracy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "bench" / "accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ACCURACY = _accuracy()
NOT_RUNS = ("configs", "public")
"""Directories of fixtures that are not one run each."""


def scenarios() -> list[Path]:
    """Every fixture that holds logs: the real runs, the synthetic scenarios and the public
    dev excerpts (not the held-out ones, which only bench/accuracy.py reads)."""
    found = {p.parent for p in FIXTURES.rglob("expected.yaml")}
    found |= {p for p in FIXTURES.iterdir() if p.is_dir() and any(p.glob("**/*.log"))}
    return sorted(p for p in found if "heldout" not in p.parts and p.name not in NOT_RUNS)


# -- verdicts -----------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A verdict as plain data: NaN equal to NaN, enums as their values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def difference(fast: Any, slow: Any, path: str = "report") -> str:
    """Where two plain verdicts first differ, readably."""
    if isinstance(fast, dict) and isinstance(slow, dict):
        for key in fast:
            if fast[key] != slow.get(key):
                return difference(fast[key], slow.get(key), f"{path}.{key}")
    if isinstance(fast, list) and isinstance(slow, list):
        for i, (a, b) in enumerate(zip(fast, slow)):
            if a != b:
                return difference(a, b, f"{path}[{i}]")
        if len(fast) != len(slow):
            extra = fast[len(slow) :] or slow[len(fast) :]
            return f"{path}: {len(fast)} with shortcuts, {len(slow)} without; extra {extra!r:.600}"
    return f"{path}: with shortcuts {fast!r:.600}\n  without {slow!r:.600}"


def without_time_limits(patch: pytest.MonkeyPatch) -> None:
    """Rule patterns are never given up on for time: what a busy machine abandons would
    differ between the two readings."""
    patch.setattr(budget, "MATCH_TIMEOUT_S", 600.0)
    for name in ("RULE_FILE_S", "RULE_RUN_S", "RUN_S"):
        patch.setattr(budget, name, 1e9)


def verdict(case: Path, block: int | None = None) -> Any:
    """Triage of a scenario as plain data, read in blocks of `block` bytes if given."""
    logs, consoles = ACCURACY.logs_and_consoles(case)
    with pytest.MonkeyPatch.context() as patch:
        without_time_limits(patch)
        if block is not None:
            patch.setattr(reading, "BLOCK", block)  # the reader (drivers/reading.py)
        return plain(triage_driver.triage(logs, RULES, consoles))


def slow_verdict(case: Path) -> Any:
    """Triage with every shortcut off: every line read in full, every rule tried on it."""
    with shortcuts.off():
        return verdict(case)


# -- every rule's cases -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RuleCase:
    """One case of a rule (`<id>.cases.yaml`): its log files by name."""

    rule: str
    name: str
    logs: tuple[tuple[str, str], ...]
    fires: bool

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"


def rule_cases() -> list[RuleCase]:
    """Every rule's cases that hold logs, in the order of the rule files."""
    found: list[RuleCase] = []
    for path in sorted((ROOT / "rules").rglob("*.cases.yaml")):
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"] or {}
        rule = path.name.removesuffix(".cases.yaml")
        for name, case in cases.items():
            logs = {"worker_0.log": case["log"]} if "log" in case else case.get("logs")
            if logs:
                fires = bool(case.get("expect"))
                found.append(RuleCase(rule, name, tuple(sorted(logs.items())), fires))
    return found


RULE_CASES = rule_cases()
EMBEDDED_CASES = frozenset(
    c.id for c in one_per_rule(RULE_CASES, lambda c: c.rule, lambda c: c.fires)
)
"""The cases also read embedded in a real log (tests.support.one_per_rule: each rule's
first firing case, or all of them with MSRUNWATCH_EVERY_CASE=1). Every case is read alone.
Each sabotage of test_fast_paths_mutations.py is caught by these: by 1 to 155 of the 160
one-per-rule cases (at 4a9e6f6), so the choice loses none of what the mutations show."""
CASE_LOGS = [dict(c.logs) for c in RULE_CASES]
CASE_LINES = sorted({line for logs in CASE_LOGS for t in logs.values() for line in t.splitlines()})


# -- a case embedded in a realistic log ----------------------------------------------------

REAL = FIXTURES / "cpu_dp2_success_glog1" / "msrun_log" / "worker_0.log"
"""A real GLOG_v=1 worker log (MindSpore 2.10.0 on the CPU): its cluster building (WARNING
and INFO lines, the [PROF] stage timings read fast), its compile start and its last lines
frame every embedding."""
STEP_INFO = (
    "[INFO] ME(6351,7fd39e1ddb80,python):2026-11-21-05:15:{s:02d}.{ms:03d}.100 "
    "[mindspore/ccsrc/runtime/graph_scheduler/graph_scheduler.cc:1001] Run] Run graph"
)
"""An INFO line before each LossMonitor line: it dates them (the cadence reads the dates)."""
RUN = 8
"""scan.RUN_LINES while the cases are read (64 in use): a shorter flood of prints is read in
bulk. The threshold is lowered only to keep every case's reading cheap (the slow path tries
every rule on every line); the code paths are the same, and the other tests read with the
threshold in use."""
SETTLED = 18
"""LossMonitor steps after the spliced ones: more than the cadence reads (the last 16
intervals, scan.CADENCE_INTERVALS), so the spliced ones are read in bulk, not parsed."""
FLOOD = RUN + 2
"""Quiet lines in a row before a case's lines: a flood, read in bulk."""


def _real_lines() -> tuple[list[str], list[str]]:
    lines = REAL.read_text(encoding="utf-8").splitlines()
    built = next(i for i, line in enumerate(lines) if "Topology build timed out" in line)
    compiling = next(i for i, line in enumerate(lines) if "Start compiling" in line)
    profiled = max(i for i, line in enumerate(lines[:compiling]) if "[PROF]" in line)
    return lines[built : profiled + 1] + lines[compiling : compiling + 3], lines[-6:]


REAL_HEAD, REAL_TAIL = _real_lines()


def loss_run(first: int, count: int, spliced: Sequence[str] = ()) -> list[str]:
    """LossMonitor steps first.., each after a dated INFO line; `spliced` lines go one
    after each of the first steps."""
    out: list[str] = []
    for i in range(first, first + count):
        out.append(STEP_INFO.format(s=i // 10 % 60, ms=i % 10 * 100))
        out.append(f"epoch: 1 step: {i}, loss is 0.{i:04d}")
        if i - first < len(spliced):
            out.append(spliced[i - first])
    return out


def flooded(lines: list[str], print_: Callable[[int], str]) -> list[str]:
    """A flood of prints (print_(i) is the i-th) with the lines inside it, each after two
    more prints, past the point where the flood is read in bulk."""
    out = [print_(i) for i in range(FLOOD)]
    for n, line in enumerate(lines):
        out += [line, print_(FLOOD + 2 * n), print_(FLOOD + 2 * n + 1)]
    return out


def embedded(text: str) -> str:
    """A case's log inside a real worker log, in every place a shortcut reads: between
    LossMonitor lines read in bulk, line by line inside a flood of repeated prints and one
    of distinct prints, whole at the end of that flood, and again (a repeat is not read
    again)."""
    lines = text.splitlines()
    body = [
        *REAL_HEAD,
        *loss_run(1, len(lines), lines),
        *loss_run(len(lines) + 1, SETTLED),
        *flooded(lines, lambda i: str(i % 3)),
        *flooded(lines, lambda i: f"sample {i} rate {i * 3}"),
        *lines,
        *lines,
        *REAL_TAIL,
    ]
    return "\n".join(body) + "\n"


def write_case(case: RuleCase, into: Path, embed: bool) -> Path:
    """A case's logs in a directory, its workers' logs embedded when `embed`."""
    for name, text in case.logs:
        path = into / name
        path.parent.mkdir(parents=True, exist_ok=True)
        worker = path.name.startswith("worker_")
        path.write_text(embedded(text) if embed and worker else text, encoding="utf-8")
    return into


# -- reading files to their facts ----------------------------------------------------------


def file_facts(case: Path, matcher: LineMatcher, block: int | None = None) -> Any:
    """Each file of a directory read to its facts, as triage reads it, in blocks of `block`
    bytes if given (plain data, by file)."""
    with pytest.MonkeyPatch.context() as patch:
        without_time_limits(patch)
        patch.setattr(scan, "RUN_LINES", RUN)
        if block is not None:
            patch.setattr(reading, "BLOCK", block)
        logs = sorted(discover_target(str(case)), key=lambda log: log.rel)
        return {log.rel: plain(reading.scan_file(log, matcher)) for log in logs}


BLOCKS = (None, 1 << 12)
"""Block sizes each embedded case is read in, both ways: where the blocks end may move a
repeated finding's date (both ways alike), so each reading is compared with the slow one
in the same blocks."""
_SLOW: dict[tuple[str, bool, int | None], Any] = {}
_EVERY_RULE: list[LineMatcher] = []
"""The slow path's matcher, made once (with the shortcuts off it remembers nothing)."""


def _where(case: RuleCase, root: Path, embed: bool) -> Path:
    return root / f"{case.rule}.{case.name}.{int(embed)}"


def readings(embed: bool) -> tuple[int | None, ...]:
    return BLOCKS if embed else (None,)


def placings(case: RuleCase) -> tuple[bool, ...]:
    """Alone, and embedded when the case is one of EMBEDDED_CASES."""
    return (False, True) if case.id in EMBEDDED_CASES else (False,)


def slow_facts(case: RuleCase, root: Path, embed: bool, block: int | None = None) -> Any:
    """The facts of a case read with every shortcut off: computed once per session. An
    embedded case is read untraced (tests.support.untraced): its frame is a real log the
    slow path reads traced in test_every_fixture_reads_the_same_with_and_without_shortcuts,
    and its own lines are read traced alone; the embedded readings are most of this
    module's CPU."""
    key = (case.id, embed, block)
    if key not in _SLOW:
        where = _where(case, root, embed)
        if not where.exists():
            write_case(case, where, embed)
        with shortcuts.off(), untraced() if embed else nullcontext():
            if not _EVERY_RULE:
                _EVERY_RULE.append(LineMatcher(RULES))
            _SLOW[key] = file_facts(where, _EVERY_RULE[0], block)
    return _SLOW[key]


def fast_difference(case: RuleCase, root: Path, matcher: LineMatcher) -> str | None:
    """Where the shortcuts read a case differently from reading every line: alone, then
    embedded (in each block size) if it is one of EMBEDDED_CASES; None when they never do."""
    for embed in placings(case):
        for block in readings(embed):
            slow = slow_facts(case, root, embed, block)
            fast = file_facts(_where(case, root, embed), matcher, block)
            if fast != slow:
                how = "embedded" if embed else "alone"
                return f"{case.id} ({how}, block {block}): " + difference(fast, slow, "facts")
    return None


LOSSES = ("0.4183726", "nan", "7.25", "NaN", "1e+30", "inf", "2.5E-3", "-inf", "1E5000", "0.38 nan")
"""Losses of the LossMonitor lines read in bulk (loss_lines): numbers written in digits,
which no rule fires on (read.lossonly passes those over), and the others, read by the
rules (a NaN loss is loss-nan-logged's finding; `1E5000` holds cann-tbe-compile-error's
code as the prefilter sees it, digits masked)."""


def loss_lines() -> str:
    """A real worker log with a run of LossMonitor steps of every loss of LOSSES, then
    SETTLED steps: the run is read in bulk, not parsed for progress."""
    run = loss_run(1, 2 * len(LOSSES))
    for i, loss in enumerate(LOSSES):
        run[4 * i + 1] = run[4 * i + 1].rsplit(" ", 1)[0] + " " + loss
    body = [*REAL_HEAD, *run, *loss_run(len(run) // 2 + 1, SETTLED), *REAL_TAIL]
    return "\n".join(body) + "\n"


def slow_loss_facts(root: Path, block: int | None) -> Any:
    """The facts of loss_lines() read with every shortcut off: computed once per session."""
    where = root / "loss-lines"
    key = ("loss-lines", False, block)
    if key not in _SLOW:
        if not where.exists():
            where.mkdir(parents=True)
            (where / "worker_0.log").write_text(loss_lines(), encoding="utf-8")
        with shortcuts.off():
            _SLOW[key] = file_facts(where, LineMatcher(RULES), block)
    return _SLOW[key]


def loss_lines_difference(root: Path, matcher: LineMatcher) -> str | None:
    """Where the shortcuts read loss_lines() differently from reading every line, in each
    block size of BLOCKS; None when they never do."""
    for block in BLOCKS:
        slow = slow_loss_facts(root, block)
        fast = file_facts(root / "loss-lines", matcher, block)
        if fast != slow:
            return f"loss lines (block {block}): " + difference(fast, slow, "facts")
    return None


# -- random lines injected into small fixtures (test_fast_paths.py's property test) --------

BASES = [
    FIXTURES / name
    for name in (
        "cpu_dp2_success_glog2",
        "cpu_dp2_success_glog1",
        "cpu_dp2_exception_rank1",
        "cpu_dp2_oom_alloc_failed",
        "cpu_hang_rank1_allreduce_timeout",
        "dryrun_sim1_rank0_tracker_runtime_stats",
        "public/dev/gh-mindyolo-250",
    )
]
"""Small fixtures of every kind (GLOG_v=1 and 2, DryRun, an excerpt) to inject lines into."""


def copy_of(base: Path, into: Path) -> Path:
    target = into / base.name
    shutil.copytree(base, target)
    return target


def worker_logs(case: Path) -> list[Path]:
    """A scenario's workers' logs (all its logs when none is named as a worker's)."""
    files = sorted(p for p in case.rglob("*") if p.is_file() and p.suffix in (".log", ".txt"))
    return [p for p in files if p.name.startswith("worker_")] or files


def inject(path: Path, where: float, run: list[str]) -> None:
    """Insert a run of lines into a file at a relative place (0: before the first line)."""
    lines = path.read_bytes().split(b"\n")
    at = min(int(where * len(lines)), len(lines) - 1)
    lines[at:at] = [line.encode() for line in run]
    path.write_bytes(b"\n".join(lines))
