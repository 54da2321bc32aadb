"""What the fast-path tests share: triage with and without the reader's shortcuts, the
verdicts as plain data, and the inputs with lines injected (see test_fast_paths.py)."""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import math
import random
import shutil
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from msrunwatch.drivers import reading
from msrunwatch.drivers import triage as triage_driver
from msrunwatch.read import shortcuts
from msrunwatch.rules import budget
from msrunwatch.rules.loader import load_rules
from tests.support import FIXTURES, ROOT

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


@cache
def slow_verdict_of(case: str) -> Any:
    """slow_verdict of an input that does not change (the batches): computed once."""
    return slow_verdict(Path(case))


# -- injected lines -----------------------------------------------------------------------


def case_logs() -> list[dict[str, str]]:
    """Every rule's case logs, as {file name: text}."""
    found: list[dict[str, str]] = []
    for path in sorted((ROOT / "rules").rglob("*.cases.yaml")):
        for case in (yaml.safe_load(path.read_text(encoding="utf-8"))["cases"] or {}).values():
            if "log" in case:
                found.append({"worker_0.log": case["log"]})
            elif "logs" in case:
                found.append(dict(case["logs"]))
    return found


CASE_LOGS = case_logs()
CASE_LINES = sorted({line for logs in CASE_LOGS for t in logs.values() for line in t.splitlines()})
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


def files_of(case: Path) -> dict[str, list[Path]]:
    """A scenario's log files by name (several nodes may each have a worker_0.log)."""
    found: dict[str, list[Path]] = {}
    for path in sorted(case.rglob("*")):
        if path.is_file() and path.suffix in (".log", ".txt"):
            found.setdefault(path.name, []).append(path)
    return found


def worker_logs(case: Path) -> list[Path]:
    files = files_of(case)
    workers = [p for name, paths in files.items() if name.startswith("worker_") for p in paths]
    return workers or [p for paths in files.values() for p in paths]


def inject(path: Path, where: float, run: list[str]) -> None:
    """Insert a run of lines into a file at a relative place (0: before the first line)."""
    lines = path.read_bytes().split(b"\n")
    at = min(int(where * len(lines)), len(lines) - 1)
    lines[at:at] = [line.encode() for line in run]
    path.write_bytes(b"\n".join(lines))


def inject_case(case: Path, logs: dict[str, str], rng: random.Random) -> None:
    """A rule case's files into the scenario's files of the same name (its workers' logs
    otherwise), each at a random place."""
    files = files_of(case)
    for name, text in logs.items():
        target = rng.choice(files.get(name) or worker_logs(case))
        inject(target, rng.random(), text.splitlines())


def flood_with(lines: list[str], rng: random.Random, repeated: bool) -> list[str]:
    """A flood of prints (a few repeated, or all different) with `lines` inside, twice."""
    flood = [str(i % 7) if repeated else f"sample {i} rate {i * 3}" for i in range(300)]
    for line in [*lines, *lines]:
        flood.insert(rng.randrange(len(flood) + 1), line)
    return flood


BATCHES = 8


def batch_case(batch: int, into: Path) -> tuple[Path, int | None]:
    """An eighth of every rule's case logs in a small fixture at seeded places, with two
    floods of prints holding some of their lines; and the block size to read it in."""
    rng = random.Random(batch)
    case = copy_of(BASES[batch % len(BASES)], into / f"batch{batch}")
    mine = CASE_LOGS[batch::BATCHES]
    for logs in mine:
        inject_case(case, logs, rng)
    lines = [line for logs in mine for text in logs.values() for line in text.splitlines()]
    for repeated in (True, False):
        picked = rng.sample(lines, min(len(lines), 6))
        inject(rng.choice(worker_logs(case)), rng.random(), flood_with(picked, rng, repeated))
    return case, rng.choice([1 << 12, 1 << 16, None])
