"""The rule cache's stat shortcut (rules.rulecache): a rule file whose stat is the one the
entry noted is not read again; every other file is, and a file written just before it was
noted is never taken on its stat. The sabotage of the stat comparison is in
tests/integration/test_rulecache_sabotage.py."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.rules import rulecache
from msrunwatch.rules.loader import builtin_rules_dir, load_rules
from tests.rules.test_rulecache import shapes

LATER_NS = 60 * 10**9


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    copy = tmp_path / "pack"
    shutil.copytree(builtin_rules_dir(), copy)
    return copy


def entry_of(cache: Path) -> dict[str, Any]:
    (path,) = cache.glob("rules-*.bin")
    entry = rulecache._read_entry(path)
    assert entry is not None
    return entry


def noted_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry is written as if a minute after the files were: they are noted."""
    clock = time.time_ns
    monkeypatch.setattr(rulecache.time, "time_ns", lambda: clock() + LATER_NS)


def test_files_written_just_before_are_not_noted(
    cache: Path, pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry is written as if at once after the files were (the clock pinned to the
    newest file's change time: a busy machine must not age them past RACY_NS)."""
    newest = max(max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in pack.rglob("*"))
    monkeypatch.setattr(rulecache.time, "time_ns", lambda: newest + 1)
    load_rules([pack])
    entry = entry_of(cache)
    assert entry["documents"] and entry["stats"] == {}


def test_a_hit_on_noted_stats_reads_no_file_and_is_the_fresh_pack(
    cache: Path, pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted_later(monkeypatch)
    fresh = load_rules([pack])
    entry = entry_of(cache)
    assert set(entry["stats"]) == {name for name, _, _ in entry["documents"]}
    with monkeypatch.context() as patch:
        patch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self}"))
        patch.setattr(rulecache, "_parse", lambda text: pytest.fail("parsed YAML"))
        again = load_rules([pack])
    assert shapes(again) == shapes(fresh)


def test_a_file_whose_stat_differs_is_read_and_compared(
    cache: Path, pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted_later(monkeypatch)
    load_rules([pack])
    path = next(pack.rglob("oom-memory-not-enough.yaml"))
    (entry_path,) = cache.glob("rules-*.bin")
    entry = entry_of(cache)
    entry["stats"][str(path)] = (0, 0, 0, 0, 0)  # as after a write: its bytes decide
    rulecache._write_entry(entry_path, entry)
    with monkeypatch.context() as patch:  # same bytes: still a hit
        patch.setattr(rulecache, "_parse", lambda text: pytest.fail("parsed YAML"))
        load_rules([pack])
    path.write_bytes(path.read_bytes().replace(b"Out of memory:", b"Out of mem0ry:"))
    rulecache._write_entry(entry_path, entry)  # the stat noted before the edit
    after = load_rules([pack])
    assert any("mem0ry" in r.message for r in after if r.id == "oom-memory-not-enough")


def test_a_file_that_changed_while_noted_is_not_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted_later(monkeypatch)
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text("a: 1\n")
    new.write_text("a: 2\n")
    digest = rulecache.hashlib.sha256(b"a: 1\n").hexdigest()
    noted = rulecache._unchanged([(str(old), digest, b""), (str(new), digest, b"")])
    assert list(noted) == [str(old)]  # new's bytes are not those parsed
    missing = rulecache._unchanged([(str(tmp_path / "gone.yaml"), digest, b"")])
    assert noted[str(old)] == rulecache._signature(str(old)) and missing == {}


def test_an_entry_with_malformed_stats_is_the_slow_path(cache: Path, pack: Path) -> None:
    load_rules([pack])
    (path,) = cache.glob("rules-*.bin")
    entry = entry_of(cache)
    entry["stats"] = {"x": (1, 2)}
    rulecache._write_entry(path, entry)
    assert rulecache._read_entry(path) is None
