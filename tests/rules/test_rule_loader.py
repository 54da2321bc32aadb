"""Broken rule files: one clear `file:line:col` error, exit code 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.core.errors import RuleError
from msrunwatch.rules.loader import load_rule
from tests.support import FIXTURES

GOOD = """\
id: my-rule
title: A rule
category: oom
severity: error
match: 'Out of (?P<what>\\w+)'
message: 'out of {what}'
"""


def write(tmp_path: Path, text: str, name: str = "my-rule.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(path: Path) -> RuleError:
    with pytest.raises(RuleError) as info:
        load_rule(path)
    return info.value


def test_a_good_rule_loads(tmp_path: Path) -> None:
    rule = load_rule(write(tmp_path, GOOD))
    assert rule.id == "my-rule" and rule.match is not None


@pytest.mark.parametrize(
    ("text", "line", "col", "problem"),
    [
        (GOOD + "severty: error\n", 7, 1, "unknown key 'severty'"),
        (
            GOOD.replace("'Out of (?P<what>\\w+)'", "'Out of (?P<what>\\w+'"),
            5,
            8,
            "match is not a valid regex",
        ),
        (GOOD.replace("severity: error", "severity: [error]"), 4, 11, "severity must be one of"),
        (GOOD.replace("title: A rule", "title: 3"), 2, 8, "title must be of type string"),
        (GOOD.replace("category: oom", "category: memory"), 3, 11, "category must be one of"),
        (GOOD + "when: what == 'memory' and\n", 7, 7, "when: invalid syntax"),
        (GOOD + "when: what.__class__\n", 7, 7, "when: attribute access is not allowed"),
        (GOOD + "when: size > 3\n", 7, 7, "when: unknown name 'size'"),
        (
            GOOD.replace("'out of {what}'", "'out of {where}'"),
            6,
            10,
            "message uses unknown name 'where'",
        ),
        (GOOD.replace("id: my-rule", "id: other-rule"), 1, 5, "id must equal the file name"),
        (GOOD.replace("match: 'Out of (?P<what>\\w+)'\n", ""), 1, 1, "'match' is required"),
        ("id: my-rule\n  title: x\n", 2, 8, "invalid YAML"),
        (GOOD + "id: again\n", 7, 1, "duplicate key 'id'"),
        (
            GOOD.replace("message:", "message: !!python/object/apply:os.system\n  -"),
            6,
            10,
            "could not determine a constructor",
        ),
    ],
    ids=[
        "unknown-key",
        "bad-regex",
        "wrong-type-enum",
        "wrong-type",
        "bad-category",
        "bad-syntax",
        "attribute",
        "unknown-name",
        "bad-placeholder",
        "id-vs-file",
        "missing-match",
        "bad-yaml",
        "duplicate-key",
        "object-tag",
    ],
)
def test_errors_name_file_line_col_and_rule(
    tmp_path: Path, text: str, line: int, col: int, problem: str
) -> None:
    path = write(tmp_path, text)
    error = error_of(path)
    assert (error.line, error.col) == (line, col), str(error)
    assert problem in str(error)
    assert str(error).startswith(f"{path}:{line}:{col}: ")


def test_a_broken_rule_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, GOOD + "severty: error\n")
    code = main(["triage", str(FIXTURES / "cpu_dp2_success_glog2"), "--rules", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "unknown key 'severty'" in err


def test_rules_check_reports_invalid_files_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, GOOD.replace("category: oom", "category: memory"))
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert "category must be one of" in capsys.readouterr().err


def test_user_rule_overrides_a_builtin_by_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        GOOD.replace("my-rule", "oom-memory-not-enough")
        .replace("Out of (?P<what>\\w+)", "enough and (?P<what>alloc) failed")
        .replace("severity: error", "severity: warning")
    )
    write(tmp_path, text, "oom-memory-not-enough.yaml")
    main(
        [
            "check",
            str(FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log"),
            "--rules",
            str(tmp_path),
            "--format",
            "json",
            "--fail-on",
            "never",
        ]
    )
    out = capsys.readouterr().out
    assert '"message": "out of alloc"' in out and '"severity": "warning"' in out


def test_a_catastrophic_regex_does_not_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = GOOD.replace("'Out of (?P<what>\\w+)'", "'^(?P<what>(a+)+)$'")
    write(tmp_path, evil)
    log = tmp_path / "logs" / "worker_0.log"
    log.parent.mkdir()
    log.write_text("a" * 40 + "!\n")
    code = main(["triage", str(log.parent), "--rules", str(tmp_path), "--format", "json"])
    assert code == 0  # the line is abandoned for that rule after its time limit
