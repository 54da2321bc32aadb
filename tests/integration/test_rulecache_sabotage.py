"""The rule-cache comparison can fail: a cache made stale on purpose is caught.

As test_fast_paths_mutations.py does for the reader's shortcuts (kept apart from
tests/integration/fastpaths.py, which is the reader's): each sabotage below breaks one way
the cache notices that its entry no longer fits the rule files, then the files are changed
after caching; the comparison of test_rulecache_cases.py (every case's whole report, fresh
pack against cached pack) must then differ on the changed rule's cases. Without the
sabotage, the same change is noticed and nothing differs. A check of the cache that nothing
here breaks is a check nothing tests.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.drivers.rulecases import all_cases
from msrunwatch.rules import rulecache
from msrunwatch.rules.loader import builtin_rules_dir, load_rules
from msrunwatch.rules.model import Rule
from msrunwatch.rules.searchtable import TABLE_SUFFIX
from tests.integration.rulecache_cases import differing, first_differing, through_cache
from tests.support import untraced

CASES = all_cases(load_rules())[0]
Sabotage = Callable[[pytest.MonkeyPatch], None]
Edit = Callable[[Path], None]


def contents_not_compared(patch: pytest.MonkeyPatch) -> None:
    """An entry is taken as current whatever the files now hold."""
    patch.setattr(rulecache, "_current", lambda *args: True)


def tables_not_compared(patch: pytest.MonkeyPatch) -> None:
    """Only the rule files' bytes are compared, not those of the tables they read."""

    def current(entry: dict[str, Any], files: Any, trusted: bool) -> bool:
        documents = [
            (name, digest if name.endswith(TABLE_SUFFIX) else _digest(name))
            for name, digest, _ in entry["documents"]
        ]
        return bool(entry["key"] == rulecache._key(files, trusted, documents))

    patch.setattr(rulecache, "_current", current)


def stats_name_the_file_only(patch: pytest.MonkeyPatch) -> None:
    """Files are taken as unchanged while their device and inode are (not their size and
    times), and are noted however recently written."""
    patch.setattr(rulecache, "STAT_FIELDS", ("st_dev", "st_ino"))
    patch.setattr(rulecache, "RACY_NS", -(10**18))


def _digest(name: str) -> str:
    return hashlib.sha256(Path(name).read_bytes()).hexdigest()


def rule_edited(pack: Path) -> None:
    """oom-memory-not-enough's message, edited after the cache was written."""
    path = next(pack.rglob("oom-memory-not-enough.yaml"))
    path.write_text(path.read_text().replace("Out of memory:", "OOM (edited):"))


def table_edited(pack: Path) -> None:
    """The second-stage table (python-exception's), every category renamed after the
    cache was written."""
    path = next(pack.rglob(f"second-stage{TABLE_SUFFIX}"))
    path.write_text(path.read_text().replace("category: ", "category: x-renamed-"))


SABOTAGES: dict[str, tuple[Sabotage, Edit, str]] = {
    "contents-not-compared": (contents_not_compared, rule_edited, "oom-memory-not-enough"),
    "tables-not-compared": (tables_not_compared, table_edited, "python-exception"),
    "stats-name-the-file-only": (stats_name_the_file_only, rule_edited, "oom-memory-not-enough"),
}


def packs(tmp_path: Path, sabotage: Sabotage | None, edit: Edit) -> tuple[list[Rule], list[Rule]]:
    """The changed pack loaded fresh, and loaded through a cache written before the change."""
    pack = tmp_path / "pack"
    shutil.copytree(builtin_rules_dir(), pack)
    with pytest.MonkeyPatch.context() as patch:
        if sabotage is not None:
            sabotage(patch)
        cached = through_cache(tmp_path / "cache", [pack], lambda: edit(pack))
    return load_rules([pack]), cached


@pytest.mark.parametrize("name", SABOTAGES)
def test_a_stale_cache_is_caught(tmp_path: Path, name: str) -> None:
    sabotage, edit, rule = SABOTAGES[name]
    fresh, cached = packs(tmp_path, sabotage, edit)
    mine = [c for c in CASES if c.rule == rule]
    with untraced():  # as test_rulecache_cases compares: the packs were loaded traced
        assert first_differing(mine, fresh, cached) is not None, f"{name}: nothing differed"


@pytest.mark.parametrize("name", SABOTAGES)
def test_without_the_sabotage_the_change_is_noticed(tmp_path: Path, name: str) -> None:
    _, edit, rule = SABOTAGES[name]
    fresh, cached = packs(tmp_path, None, edit)
    with untraced():
        assert differing([c for c in CASES if c.rule == rule], fresh, cached) == []


@pytest.mark.parametrize("name", SABOTAGES)
def test_each_changed_rule_has_cases_that_fire(name: str) -> None:
    rule = SABOTAGES[name][2]
    assert any(c.fires for c in CASES if c.rule == rule)
