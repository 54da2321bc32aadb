"""A built-in rule's TSV lookup table is read when a row is first looked up
(rules.tables.TableRows), not while the rules load: for every built-in rule with one, the
rows are those the table gives read at once, a pack loaded is not reading them, and a
user's rule's table is read and checked while the rule loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.core.errors import RuleError
from msrunwatch.rules import tables
from msrunwatch.rules.loader import load_rule, load_rules

TSV_RULES = [r for r in load_rules(None) if r.lookup and r.lookup.table.endswith(".tsv")]


def test_every_built_in_table_read_later_is_the_table_read_at_once() -> None:
    assert len(TSV_RULES) >= 3
    for rule in TSV_RULES:
        assert rule.lookup is not None
        at_once = tables.load_table(Path(rule.path).parent / rule.lookup.table, rule.id)
        assert len(at_once) > 10
        assert dict(rule.lookup.rows) == at_once, rule.id
        assert rule.lookup.rows == at_once
        key = next(iter(at_once))
        assert rule.lookup.row(key) == at_once[key] and rule.lookup.row("no such") is None
        assert rule.lookup.columns == frozenset(next(iter(at_once.values())))


def test_loading_the_pack_reads_no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[Path] = []
    real = tables.load_table
    monkeypatch.setattr(tables, "load_table", lambda p, r: read.append(p) or real(p, r))
    rules = load_rules(None)
    assert read == []
    rule = next(r for r in rules if r.lookup and r.lookup.table.endswith(".tsv"))
    assert rule.lookup is not None and len(rule.lookup.rows) > 10
    assert read == [Path(rule.path).parent / rule.lookup.table]
    rule.lookup.row("x")
    assert len(read) == 1  # read once


def test_a_user_rule_s_table_is_read_and_checked_while_the_rule_loads(tmp_path: Path) -> None:
    (tmp_path / "my-codes.yaml").write_text(
        "id: my-codes\ntitle: t\ncategory: unclassified\nseverity: error\n"
        "match: '(?P<code>X\\\\d{3})'\nlookup: {table: codes.tsv, key: code}\n"
        "message: '{code}'\n",
        encoding="utf-8",
    )
    (tmp_path / "codes.tsv").write_text("code\ttitle\nX001\tone\n", encoding="utf-8")
    rule = load_rule(tmp_path / "my-codes.yaml")
    assert rule.lookup is not None and type(rule.lookup.rows) is dict
    (tmp_path / "codes.tsv").write_text("code\ttitle\nX001\n", encoding="utf-8")
    assert rule.lookup.row("X001") == {"code": "X001", "title": "one"}  # read before
    with pytest.raises(RuleError, match="row has 1 columns, the header 2"):
        load_rule(tmp_path / "my-codes.yaml")
