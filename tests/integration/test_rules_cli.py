"""`msrunwatch rules list|show|vars` as a rule author uses them, and former ids in settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.read.markers import grep_markers
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_rules_list_is_a_table_with_separated_columns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["ID", "SCOPE", "CATEGORY", "SEVERITY", "TITLE"]
    row = next(x for x in lines if x.startswith("strategy-needs-more-devices "))
    assert row.split()[:4] == ["strategy-needs-more-devices", "line", "strategy-mismatch", "error"]


def test_rules_list_by_scope(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "rules", "list", "--scope", "run")
    scopes = {line.split()[1] for line in out.splitlines()[1:]}
    assert scopes == {"run"}


def test_rules_show_prints_doc_hint_references_and_cases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "rules", "show", "oom-memory-not-enough")
    assert code == 0
    for part in ("category  oom", "Why it matters:", "What to do:", "References:", "Cases:"):
        assert part in out
    assert "fires  fires-on-the-cpu-pool-oom" in out and "quiet  ok-on-a-memory-summary" in out


def test_rules_show_suggests_a_close_id(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "rules", "show", "oom-memory-not-enuf")
    assert code == 2
    assert err.strip() == (
        "msrunwatch: error: no rule 'oom-memory-not-enuf'; did you mean oom-memory-not-enough?"
    )


def test_rules_vars_lists_every_scope(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "rules", "vars")
    for name in ("line:", "rank:", "run:", "  categories ", "  estimate_used_mb ", "  max_step "):
        assert name in out


def test_a_renamed_rule_is_still_reached_by_its_former_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "my-oom.yaml").write_text(
        "id: my-oom\naliases: [old-oom]\ntitle: t\ncategory: oom\nseverity: error\n"
        "match: 'alloc failed'\nmessage: m\nreferences: ['x']\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "rules", "show", "old-oom", "--rules", str(rules))
    assert code == 0 and out.startswith("my-oom: t")
    target = str(FIXTURES / "cpu_dp2_oom_alloc_failed")
    code, out, _ = run(capsys, "check", target, "--rules", str(rules), "--select", "old-oom")
    assert code == 1 and "my-oom" in out


def test_grep_markers_cover_every_fault_line_of_the_real_runs(rules: list[Rule]) -> None:
    """The grep baseline in bench/ must see every line triage reads a fault from."""
    markers = grep_markers(rules)
    for log in FIXTURES.glob("cpu_*/msrun_log/*.log"):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("[ERROR]", "[CRITICAL]")):
                assert any(m in line for m in markers), (log, line[:120])
