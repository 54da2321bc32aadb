"""Rule patterns cannot take the run down: a pattern that would compile to gigabytes is
refused at load, nested repeats are warned about, and lines a pattern gives up on (or is not
tried on once its time budget is spent) are counted and reported, never silently dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.support import GLOG, cli, log_dir
from tests.support import FIXTURES

OOM = str(FIXTURES / "cpu_dp2_oom_alloc_failed")
SLOW = r"BOOM (?:a|aa)*$"
"""Exponential on `BOOM aaa...!`: always over the 50 ms limit on a 3,000-character line."""


def rule_dir(root: Path, pattern: str, rule_id: str = "user-rule") -> Path:
    directory = root / "rules"
    directory.mkdir(exist_ok=True)
    (directory / f"{rule_id}.yaml").write_text(
        f"id: {rule_id}\ntitle: A user rule\ncategory: python-exception\nseverity: error\n"
        f"scope: line\nmatch: '{pattern}'\nmessage: boom\n",
        encoding="utf-8",
    )
    return directory


@pytest.mark.parametrize(
    "pattern", ["(?:a{1000}){1000}", "a{4294967294}", "(?:x{65535}){65535}", "((a{99}){99}){99}"]
)
def test_a_pattern_that_would_compile_to_gigabytes_is_refused_at_load(
    pattern: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rule_dir(tmp_path, pattern)
    code, out, err = cli(capsys, "triage", OOM, "--rules", str(rules))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "user-rule.yaml:6:" in err and "match is too large" in err


def test_a_pattern_thousands_of_characters_long_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rule_dir(tmp_path, "x" * 20_000)
    code, _, err = cli(capsys, "check", OOM, "--rules", str(rules))
    assert code == 2 and "too long" in err


def test_rules_check_strict_warns_about_nested_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rule_dir(tmp_path, r"x (\w*\s?)*y")
    (rules / "user-rule.cases.yaml").write_text(
        "rule: user-rule\ncases:\n  fires:\n    log: |\n      x ab y\n"
        "    expect: [{ranks: [0], line: 1}]\n  quiet:\n    log: |\n      nothing\n"
        "    expect: []\n",
        encoding="utf-8",
    )
    code, out, _ = cli(capsys, "rules", "check", str(rules), "--strict")
    assert code == 0, out
    assert "warning: user-rule: match repeats (\\w*\\s?)" in out
    code, out, _ = cli(capsys, "rules", "check", str(rules))
    assert "warning" not in out


def slow_run(root: Path, files: int = 1, lines: int = 40) -> Path:
    line = "BOOM " + "a" * 3000 + "!"
    for index in range(files):
        log_dir(root, GLOG + "start", *[line] * lines, name=f"worker_{index}.log")
    return root / "msrun_log"


@pytest.fixture
def small_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets of a few lines' worth, so the test spends a second, not a minute."""
    from msrunwatch.rules import budget

    monkeypatch.setattr(budget, "RULE_FILE_S", 0.1)
    monkeypatch.setattr(budget, "RULE_RUN_S", 0.3)
    monkeypatch.setattr(budget, "RUN_S", 1.0)


@pytest.mark.usefixtures("small_budgets")
def test_lines_a_pattern_gives_up_on_are_reported_with_the_rule_and_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rule_dir(tmp_path, SLOW, "slow-rule")
    directory = slow_run(tmp_path)
    _, out, _ = cli(capsys, "triage", str(directory), "--rules", str(rules), "--format", "json")
    (warning,) = json.loads(out)["warnings"]
    assert "slow-rule" in warning and "40 lines" in warning and "worker_0.log" in warning
    assert "'BOOM aaaa" in warning  # the first line it gave up on


@pytest.mark.usefixtures("small_budgets")
def test_the_run_budget_stops_a_slow_rule_across_files_and_says_so_for_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = rule_dir(tmp_path, SLOW, "slow-rule")
    directory = slow_run(tmp_path, files=12, lines=10)
    _, out, _ = cli(capsys, "check", str(directory), "--rules", str(rules), "--format", "sarif")
    invocation = json.loads(out)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert len(notes) == 12
    assert all("slow-rule" in n and "10 lines" in n for n in notes)
    assert any("skipped once its time budget was spent" in n for n in notes)


def test_ordinary_rules_on_a_real_run_abandon_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "triage", OOM, "--format", "json")
    assert code == 1 and json.loads(out)["warnings"] == []


def test_a_rule_with_a_long_literal_loads_and_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The prefilter's trie recursed once per character: 600 of them were a traceback."""
    literal = "x" * 2000
    rules = rule_dir(tmp_path, literal + " (?P<n>\\d+)")
    directory = log_dir(tmp_path, GLOG + "start", f"{literal} 42")
    code, out, err = cli(
        capsys, "triage", str(directory), "--rules", str(rules), "--format", "json"
    )
    assert code == 1, err
    assert "user-rule" in {f["rule"] for f in json.loads(out)["findings"]}
