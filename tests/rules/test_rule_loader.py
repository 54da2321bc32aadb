"""Broken rule files: one clear `file:line:col` error, exit code 2, never a traceback."""

from __future__ import annotations

import json
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
        (GOOD + "fallback_when: size > 3\n", 7, 16, "fallback_when: unknown name 'size'"),
        (
            GOOD.replace("'out of {what}'", "'out of {where}'"),
            6,
            10,
            "message uses unknown name 'where'",
        ),
        (GOOD + "why: 'it ran out of {where}'\n", 7, 6, "why uses unknown name 'where'"),
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
        "fallback-when-unknown-name",
        "bad-placeholder",
        "why-unknown-name",
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


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(?P<x>Out of memory)|(?P<x>OOM)", "redefinition of group name 'x'"),
        ("Out of \\p{L}+", "bad escape \\p"),
    ],
    ids=["group-named-twice", "unicode-property"],
)
def test_rules_check_refuses_a_pattern_pythons_re_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str, why: str
) -> None:
    """The regex module compiles it, so triage would load it; but the shortcuts read
    patterns with re's parser, and such a rule made no line quiet, silently (issue 18)."""
    text = GOOD.replace("Out of (?P<what>\\w+)", pattern).replace("{what}", "it")
    path = write(tmp_path, text)
    assert load_rule(path).match is not None
    assert main(["rules", "check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:1: my-rule: match is valid for the regex module" in err and why in err


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


LOOKUP_RULE = """id: my-codes
title: A code from my catalogue
category: unclassified
severity: error
match: '(?P<code>X\\d{3}): (?P<text>.*)'
lookup: {table: codes.tsv, key: code}
message: '{code} {title}: {text}'
references: ['my catalogue']
"""


def test_a_lookup_row_gives_the_finding_its_category_role_and_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "my-codes.yaml").write_text(LOOKUP_RULE, encoding="utf-8")
    (rules / "codes.tsv").write_text(
        "code\tcategory\trole\ttitle\thint\n"
        "X001\thost-oom\tcause\tHost memory gone\tAdd memory\n"
        "X002\thccl-timeout\tsymptom\tA peer was slow\tLook elsewhere\n",
        encoding="utf-8",
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "worker_0.log").write_text("X002: waited\nX001: out of memory\n", encoding="utf-8")
    code = main(["triage", str(logs), "--rules", str(rules), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["root_cause"]["category"] == "host-oom"
    mine = {f["message"]: f for f in report["findings"] if f["rule"] == "my-codes"}
    assert mine["X001 Host memory gone: out of memory"]["title"] == "Host memory gone"
    assert mine["X002 A peer was slow: waited"]["category"] == "hccl-timeout"


def test_a_lookup_row_with_an_unknown_category_is_refused(tmp_path: Path) -> None:
    (tmp_path / "my-codes.yaml").write_text(LOOKUP_RULE, encoding="utf-8")
    (tmp_path / "codes.tsv").write_text("code\tcategory\nX001\tbogus\n", encoding="utf-8")
    with pytest.raises(RuleError, match="lookup row 'X001': unknown category 'bogus'"):
        load_rule(tmp_path / "my-codes.yaml")
