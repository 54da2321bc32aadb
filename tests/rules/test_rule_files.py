"""Finding rule files (rules.loader.rule_files) walks the directories itself: what it finds,
in what order, is what the plain `sorted(root.rglob("*.yaml"))` with the cases, tables and
hidden parts filtered out finds, on the built-in pack and on a tree with every odd entry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from msrunwatch.rules.loader import (
    CASES_SUFFIX,
    TABLE_SUFFIX,
    builtin_rules_dir,
    rule_files,
)


def by_rglob(root: Path) -> list[Path]:
    """The slow path, as rule_files was written before it walked on its own."""
    return [
        p
        for p in sorted(root.rglob("*.yaml"))
        if not p.name.endswith((CASES_SUFFIX, TABLE_SUFFIX))
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]


def test_the_built_in_pack_is_found_as_rglob_finds_it() -> None:
    root = builtin_rules_dir()
    found = rule_files([root])
    assert len(found) > 200
    assert found == by_rglob(root)
    assert [str(p) for p in found] == [str(p) for p in by_rglob(root)]


def odd_tree(root: Path) -> None:
    """Nesting whose order differs by parts and by text (a-b.yaml / a/x.yaml), hidden files
    and directories, cases and tables, links to a file, to nothing and to a directory, a
    directory named like a rule file, and names that only look like rule files."""
    for name in (
        "a/x.yaml",
        "a-b.yaml",
        "a/b/c/deep.yaml",
        "a/b.yaml",
        "Z.yaml",
        "z.YAML",
        "z.yml",
        "y.yaml.bak",
        ".hidden.yaml",
        ".git/inside.yaml",
        "a/.skip/inside.yaml",
        "r.cases.yaml",
        "r.table.yaml",
        "r.yaml",
        "d.yaml/inner.yaml",
        "sp ace.yaml",
        "ü.yaml",
    ):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("id: x\n")
    (root / "link.yaml").symlink_to(root / "r.yaml")
    (root / "broken.yaml").symlink_to(root / "nowhere.yaml")
    (root / "linked_dir").symlink_to(root / "a", target_is_directory=True)


def test_an_odd_tree_is_found_as_rglob_finds_it(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    odd_tree(root)
    found = rule_files([root])
    assert found == by_rglob(root)
    names = [p.relative_to(root).as_posix() for p in found]
    assert names.index("a/x.yaml") < names.index("a-b.yaml")  # by parts, not by text
    assert "d.yaml" in names and "d.yaml/inner.yaml" in names
    assert not any(n.startswith("linked_dir") or "/." in n or n[0] == "." for n in names)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_a_directory_that_cannot_be_read_is_passed_over_as_rglob_does(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    odd_tree(root)
    (root / "a" / "b").chmod(0)
    try:
        assert rule_files([root]) == by_rglob(root)
    finally:
        (root / "a" / "b").chmod(0o755)


def test_files_and_several_roots_keep_their_order(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    odd_tree(root)
    one = root / "a" / "x.yaml"
    assert rule_files([one, root, root / "a"]) == [one, *by_rglob(root), *by_rglob(root / "a")]
