"""Second-stage classification tables (rules/**/*.table.yaml): each loads, each entry is
exercised by a case of the rule that reads it, and a broken table is a one-line RuleError."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from msrunwatch.core.errors import RuleError
from msrunwatch.rules.loader import builtin_rules_dir, load_rules
from msrunwatch.rules.searchtable import TABLE_SUFFIX, load_search_table, readings

RULES = {r.id: r for r in load_rules()}
SEARCHING = [r for r in RULES.values() if r.lookup is not None and r.lookup.search]


def test_the_fallback_rules_read_the_second_stage_table() -> None:
    assert {r.id for r in SEARCHING} >= {"python-exception", "error-line"}


def _case_lines(rule_id: str) -> list[str]:
    path = next(builtin_rules_dir().rglob(f"{rule_id}.cases.yaml"))
    cases = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    texts = [c.get("log", "") for c in cases.values()]
    texts += [t for c in cases.values() for t in (c.get("logs") or {}).values()]
    return [line for text in texts for line in text.splitlines()]


@pytest.mark.parametrize("rule", SEARCHING, ids=[r.id for r in SEARCHING])
def test_every_entry_has_a_case(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.lookup is not None
    lines = [line for r in SEARCHING for line in _case_lines(r.id)]
    table = rule.lookup.search
    assert table is not None
    for row in table.rows:
        found = [line for line in lines if table.first_found(line) is row]
        assert found, f"no case line is classified from {row['classified_from']!r}"


def test_first_entry_found_wins() -> None:
    rule = RULES["python-exception"]
    assert rule.lookup is not None
    table = rule.lookup.search
    assert table is not None
    row = table.first_found("PermissionError: [Errno 13] Permission denied: 'x'")
    assert row is not None and row["classified_from"].startswith("exception class PermissionError")
    assert table.first_found("ValueError: bad value") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("runtime result = 207000.", ("runtime result = 207000.", "runtime result = 207000")),
        ("= 207000.[FUNC:x]", ("= 207000.[FUNC:x]", "= 207000[FUNC:x]")),
        ("code 507035. Check it...", ("code 507035. Check it...", "code 507035 Check it")),
        ("version 507011.2 in libfoo.so", ("version 507011.2 in libfoo.so",)),
        ("no stop at all", ("no stop at all",)),
    ],
)
def test_a_value_is_read_without_its_sentence_stops(value: str, expected: tuple[str, ...]) -> None:
    assert readings(value) == expected


def test_a_code_bounded_by_its_pattern_is_found_before_a_sentence_stop(tmp_path: Path) -> None:
    """A user's table bounds a code as the built-in one does; a stop that ends a sentence does
    not hide it, one that continues a number does, and an entry that reads the stop itself
    still finds it."""
    path = tmp_path / f"t{TABLE_SUFFIX}"
    path.write_text(
        "entries:\n"
        "  - {match: '(?<![\\w.])4242(?![\\w.])', category: io-error, classified_from: c, source: s}\n"
        "  - {match: 'done\\.$', category: io-error, classified_from: d, source: s}\n",
        encoding="utf-8",
    )
    table = load_search_table(path, "r")
    assert [table.first_found(v) for v in ("x = 4242.", "4242. next", "4242.[F")] == [
        table.rows[0]
    ] * 3
    assert table.first_found("4242.5") is None and table.first_found("v.4242") is None
    assert table.first_found("all done.") is table.rows[1]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("entries: []\n", "non-empty list"),
        ("- a\n", "non-empty list"),
        ("entries:\n  - match: 'x'\n    category: io-error\n", "missing classified_from, source"),
        (
            "entries:\n  - {match: 'x', category: io-error, classified_from: a, source: b, z: c}\n",
            "unknown z",
        ),
        (
            "entries:\n  - {match: '(', category: io-error, classified_from: a, source: b}\n",
            "not a valid regex",
        ),
        ("entries:\n  - [1, 2]\n", "mapping of strings"),
    ],
)
def test_a_broken_table_is_a_rule_error(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / f"t{TABLE_SUFFIX}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RuleError, match=problem):
        load_search_table(path, "r")


def test_a_users_rule_with_a_table_is_validated(tmp_path: Path) -> None:
    (tmp_path / f"t{TABLE_SUFFIX}").write_text(
        "entries:\n  - {match: 'quota', category: x-quota, classified_from: q, source: s}\n"
        "  - {match: 'ENOSPC', category: no-such-category, classified_from: n, source: s}\n",
        encoding="utf-8",
    )
    rule = tmp_path / "quota.yaml"
    rule.write_text(
        "id: quota\ntitle: t\ncategory: io-error\nseverity: error\n"
        "match: '^boom: (?P<what>.*)$'\n"
        f"lookup: {{table: t{TABLE_SUFFIX}, key: what}}\n"
        "message: '{what} ({classified_from})'\n",
        encoding="utf-8",
    )
    with pytest.raises(RuleError, match="unknown category 'no-such-category'"):
        load_rules([rule])


def test_an_unreadable_table_is_a_rule_error(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="cannot read search table"):
        load_search_table(tmp_path / f"missing{TABLE_SUFFIX}", "r")
    big = tmp_path / f"big{TABLE_SUFFIX}"
    big.write_bytes(b"#" * (2 << 20))
    with pytest.raises(RuleError, match="larger than"):
        load_search_table(big, "r")
