"""Every count and constant the README states is what the code has: a rule added, a
default changed or a JSON field added fails here until the README says so too.

(Speed figures are measured by bench/ on a quiet machine, never by a test; the accuracy
table by bench/accuracy.py, the config precision table by bench/config_precision.py, the
estimate's validation table by tests/unit/test_estimate_validation.py.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.core.exit_codes import ExitCode
from msrunwatch.drivers.configs import read_all, triage_with_config
from msrunwatch.drivers.rulecases import all_cases
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Status
from msrunwatch.live import run as live_run
from msrunwatch.live.headless import hooks, loop
from msrunwatch.report import jsonout
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Scope
from msrunwatch.rules.vocab import CATEGORIES
from tests.integration.test_readme import blocks
from tests.support import FIXTURES, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PROSE = " ".join(README.split())
"""The README with every run of whitespace as one space (sentences wrap anywhere)."""


def stated(pattern: str) -> re.Match[str]:
    """The README's sentence matching `pattern` (on whitespace-normalised text)."""
    found = re.search(pattern, PROSE)
    assert found is not None, f"the README no longer says: {pattern}"
    return found


def number(text: str) -> int:
    return int(text.replace(",", ""))


def section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + len(title))
    return README[start : end if end > 0 else None]


def test_the_rule_and_case_counts() -> None:
    rules = load_rules(None)
    cases, errors = all_cases(rules)
    assert not errors
    configs = sum(1 for r in rules if r.scope is Scope.CONFIG)
    found = stated(
        r"The built-in pack has ([\d,]+) rules \(([\d,]+) for logs, ([\d,]+) for configs\), "
        r"each with its cases: ([\d,]+) in all"
    )
    said = [number(g) for g in found.groups()]
    actual = [len(rules), len(rules) - configs, configs, len(cases)]
    assert said == actual, f"README 'Writing a rule' says {said}, the pack has {actual}"
    assert number(stated(r"The ([\d,]+) config rules \(`msrunwatch rules list")[1]) == configs


def test_the_categories_table_is_the_vocabulary() -> None:
    rows = re.findall(r"^\| ([a-z, -]+) \| ", section("### Categories"), re.M)
    listed = [c.strip() for row in rows if row != "category" for c in row.split(",")]
    assert sorted(listed) == sorted(CATEGORIES)


def test_every_status_is_listed() -> None:
    said = stated(r"`status` is one of: (.+?) \(and, in the live view, ([a-z, -]+)\)")
    named = re.sub(r" \([^)]*\)", "", said[1])  # `stalled (a rank ...)`
    listed = {s.strip() for s in f"{named},{said[2].replace(' and ', ',')}".split(",")}
    assert listed == {s.value for s in Status}


def test_the_metrics_table_lists_every_status() -> None:
    """/metrics exports a gauge per status (live.headless.metrics: every Status)."""
    said = stated(r"0 for each other status \(([a-z, -]+)\)")
    assert {s.strip() for s in said[1].split(",")} == {s.value for s in Status}


def _keys(value: Any, into: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            into.add(key)
            _keys(inner, into)
    elif isinstance(value, list):
        for inner in value:
            _keys(inner, into)
    return into


def test_the_json_sample_has_every_field_the_report_has() -> None:
    """The sample in "JSON report" against reports that fill every field: memory, compile,
    progress, a waiting rank, restated findings, an estimate from a config."""
    sample = section("## JSON report (version 1)")
    shown = set(re.findall(r'"([a-z_]+)":', sample.split("```")[1]))
    rules = load_rules(None)
    names = ("cpu_dp2_oom_alloc_failed", "cpu_dp2_compile_statistics", "cpu_kill9_rank1")
    names += ("dryrun_sim1_8p_nojoin_glog2",)
    reports = [triage([str(FIXTURES / name)], rules) for name in names]
    configs = read_all([str(FIXTURES / "configs" / "seed001_qwen25_7b_tp2_pp2.sh")])
    oom = str(FIXTURES / "cpu_dp2_oom_alloc_failed")
    reports.append(triage_with_config([oom], rules, configs, world=2))
    keys: set[str] = set()
    for report in reports:
        _keys(json.loads(jsonout.render(report)), keys)
    assert not keys - shown, f"fields the README's JSON sample lacks: {sorted(keys - shown)}"
    assert not shown - keys, f"fields the sample shows that no report has: {sorted(shown - keys)}"


def test_the_metrics_and_events_tables_name_what_is_served() -> None:
    source = Path(loop.__file__).parent
    metrics = set(re.findall(r'"(msrunwatch_\w+)"', (source / "metrics.py").read_text()))
    table = section("### Metrics")
    listed = set(re.findall(r"^\| `(msrunwatch_\w+)` \|", table, re.M))
    counters = {m for m in listed if m.endswith("_total")}  # the client adds the suffix
    assert {m.removesuffix("_total") if m in counters else m for m in listed} == metrics
    emitted = set(re.findall(r'emit\(\s*"(\w+)"', (source / "outputs.py").read_text()))
    events = set(re.findall(r"^\| `(\w+)` \|", section("### Events (schema 1)"), re.M))
    assert events == emitted


@pytest.mark.parametrize(
    ("pattern", "value"),
    [
        (r"longer than `--stall-after` seconds \((\d+) by default", 120),
        (r"on each tick \((0\.\d+) s headless", loop.TICK_S),
        (r"headless, (0\.\d+) s in the view\)", 0.25),
        (r"live: reading \| (\d+) MiB per file", live_run.PER_FILE >> 20),
        (r"MiB per file and (\d+) MiB per tick", live_run.PER_TICK >> 20),
        (r"live: descriptors \| (\d+) followed files", live_run.MAX_DESCRIPTORS),
        (r"`--on-finding` \| (\d+) at once", hooks.HOOK_WORKERS),
        (r"at once, (\d+) s each", hooks.HOOK_TIMEOUT_S),
        (r"values at most (\d+) KiB", hooks.MAX_ENV_BYTES >> 10),
    ],
)
def test_a_stated_constant_is_the_code_s(pattern: str, value: float) -> None:
    assert float(stated(pattern)[1]) == value


def test_the_exit_codes() -> None:
    said = stated(
        r"`0` healthy.*?`1` faults found, `2` bad usage.*?`(\d+)` Ctrl\+C, `(\d+)` SIGTERM"
    )
    assert [int(said[1]), int(said[2])] == [ExitCode.INTERRUPTED, 128 + 15]


def test_the_examples_run_as_written_after_the_install_line() -> None:
    """The install line puts `msrunwatch` on PATH (the examples call it bare)."""
    ((_, install),) = blocks("<!-- ci:install -->")
    line = " ".join(install)
    assert re.search(r"\. \.venv/bin/activate &&.* msrunwatch triage ", line), line


def _rules_list(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "msrunwatch", "rules", "list", "-v"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_settings_example_is_applied_as_pasted(tmp_path: Path) -> None:
    """The msrunwatch.yaml shown, pasted as it is into an empty project (a new user's trial:
    it named a rule directory the project did not have, and exited 2)."""
    ((_, lines),) = blocks("<!-- readme:settings -->")
    (tmp_path / "msrunwatch.yaml").write_text("\n".join(lines) + "\n")
    done = _rules_list(tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"settings: {tmp_path / 'msrunwatch.yaml'}" in done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert "peer-disconnected" not in rows
    assert rows["compile-time-skew"][3] == "error"


def test_the_settings_mistake_quoted_is_the_one_printed(tmp_path: Path) -> None:
    """The example's commented `rules:` line, uncommented without its directory: the error the
    README quotes, exit code 2."""
    ((_, lines),) = blocks("<!-- readme:settings -->")
    text = "\n".join(line.removeprefix("# ") for line in lines) + "\n"
    (tmp_path / "msrunwatch.yaml").write_text(text)
    done = _rules_list(tmp_path)
    assert done.returncode == 2
    quoted = "msrunwatch.yaml: rules: ci/msrunwatch-rules: no such file or directory"
    assert quoted in PROSE and quoted in done.stderr
