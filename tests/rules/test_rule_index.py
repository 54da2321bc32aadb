"""docs/rules.md is generated from the pack and kept current; every rule cites where its
message or check comes from upstream."""

from __future__ import annotations

from msrunwatch.report import ruledoc
from msrunwatch.rules.loader import builtin_rules_dir
from msrunwatch.rules.model import Rule
from tests.support import ROOT

NOTES = ("shared reference", "anchors.md", "config-rules.md", "mindspore-logs.md", "real_logs/")
"""Project notes that do not ship with the repository: not a citation."""


def test_docs_rules_md_is_current(rules: list[Rule]) -> None:
    expected = ruledoc.markdown_index(rules, builtin_rules_dir().resolve())
    actual = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert actual == expected, "run: msrunwatch rules list --format markdown -o docs/rules.md"


def test_the_pack_is_grouped_in_folders(rules: list[Rule]) -> None:
    root = builtin_rules_dir().resolve()
    loose = [r.id for r in rules if ruledoc.group_of(r, root) in ("", ".")]
    assert not loose, loose


def test_ids_are_unique_across_folders() -> None:
    stems = [p.stem for p in builtin_rules_dir().rglob("*.yaml") if ".cases" not in p.name]
    assert len(stems) == len(set(stems))


def test_every_rule_cites_an_upstream_source(rules: list[Rule]) -> None:
    uncited = [
        r.id for r in rules if not any(not any(n in ref for n in NOTES) for ref in r.references)
    ]
    assert not uncited, uncited
