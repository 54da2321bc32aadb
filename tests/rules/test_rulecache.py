"""The rule cache (rules.rulecache): a cached load is the fresh load, and anything odd about
the cache is the slow path, silently.

The cases run with both rule sets are in tests/integration/test_rulecache_cases.py."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import marshal
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
import regex

from msrunwatch.cli import main
from msrunwatch.core.errors import ExprError, RuleError
from msrunwatch.rules import loader, prefilter, rulecache
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.loader import builtin_rules_dir, load_rules
from msrunwatch.rules.model import Rule
from msrunwatch.rules.searchtable import readings
from tests.integration.fastpaths import CASE_LINES
from tests.rules.test_rule_loader import GOOD as USER_RULE
from tests.support import FIXTURES


def shape(rule: Rule) -> dict[str, Any]:
    """Everything the engine reads from a rule, as comparable data (conditions by source,
    tables by content)."""
    fields = dict(vars(rule))
    fields.pop("match", None)  # compiled on first use
    for key in ("when", "ranks", "fallback_when"):
        fields[key] = None if fields[key] is None else fields[key].source
    if rule.peer is not None:
        fields["peer"] = (rule.peer.rank.source, rule.peer.suspect, rule.peer.if_ended,
                          rule.peer.effect, rule.peer.group)  # fmt: skip
    if rule.lookup is not None:
        search = rule.lookup.search
        fields["lookup"] = (
            rule.lookup.table,
            rule.lookup.key,
            dict(rule.lookup.rows),
            None if search is None else (search.patterns, search.rows),
        )
    return fields


def shapes(rules: list[Rule]) -> list[dict[str, Any]]:
    return [shape(r) for r in rules]


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("rules-*.bin")) if directory.is_dir() else []


def parsing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any YAML parsed from now on is an error: a load that succeeds came from the cache."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed YAML")

    monkeypatch.setattr(rulecache, "_parse", refuse)


def fresh(paths: list[Path] | None = None) -> list[Rule]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(rulecache.OFF, "1")
        return load_rules(paths)


def test_the_built_in_pack_from_the_cache_is_the_fresh_pack(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, slow = load_rules(), fresh()
    assert len(entries(cache)) == 1
    parsing_fails(monkeypatch)
    cached = load_rules()
    assert shapes(cached) == shapes(first) == shapes(slow)
    assert [r.match.pattern for r in cached if r.match] == [
        r.match.pattern for r in first if r.match
    ]


def test_the_suite_runs_with_the_cache_off() -> None:
    assert not rulecache.enabled()


def test_off_means_nothing_is_written(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rulecache.OFF, "1")
    load_rules()
    assert not cache.exists()


def copy_of_pack(tmp_path: Path) -> Path:
    pack = tmp_path / "pack"
    shutil.copytree(builtin_rules_dir(), pack, ignore=shutil.ignore_patterns("*.cases.yaml"))
    return pack


def test_a_rule_file_edited_after_caching_is_read_again(tmp_path: Path, cache: Path) -> None:
    pack = copy_of_pack(tmp_path)
    load_rules([pack])
    rule = pack / "log" / "memory" / "oom-memory-not-enough.yaml"
    rule.write_text(rule.read_text().replace("severity: error", "severity: warning"))
    again = {r.id: r for r in load_rules([pack])}
    assert again["oom-memory-not-enough"].severity.value == "warning"
    assert shapes(list(again.values())) == shapes(fresh([pack]))


def test_a_search_table_edited_after_caching_is_read_again(tmp_path: Path, cache: Path) -> None:
    pack = copy_of_pack(tmp_path)
    load_rules([pack])
    table = pack / "log" / "process" / "second-stage.table.yaml"
    table.write_text(table.read_text().replace("category: ", "category: x-edited-", 1))
    again = load_rules([pack])
    assert shapes(again) == shapes(fresh([pack]))
    categories = {
        row.get("category")
        for r in again
        if r.lookup and r.lookup.search
        for row in r.lookup.search.rows
    }
    assert any(str(c).startswith("x-edited-") for c in categories)


def test_a_rule_file_added_or_removed_is_a_new_set(tmp_path: Path, cache: Path) -> None:
    pack = copy_of_pack(tmp_path)
    before = load_rules([pack])
    (pack / "my-rule.yaml").write_text(USER_RULE)
    assert [r.id for r in load_rules([pack])] == [r.id for r in fresh([pack])]
    (pack / "my-rule.yaml").unlink()
    assert shapes(load_rules([pack])) == shapes(before)


def test_a_change_to_the_code_that_reads_rules_is_a_miss(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "loader_stand_in.py"
    code.write_text("v1")
    monkeypatch.setattr(rulecache, "CODE", (*rulecache.CODE, code))
    rulecache._code_digest.cache_clear()  # read once per process
    load_rules()
    code.write_text("v2")
    rulecache._code_digest.cache_clear()
    parsing_fails(monkeypatch)
    with pytest.raises(AssertionError, match="parsed YAML"):
        load_rules()
    rulecache._code_digest.cache_clear()


def test_user_rules_are_validated_once_then_taken_from_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my-rule.yaml").write_text(USER_RULE)
    first = load_rules([tmp_path / "mine"])
    validated: list[Path] = []
    original = loader._validate
    monkeypatch.setattr(loader, "_validate", lambda p, *a: validated.append(p) or original(p, *a))
    assert shapes(load_rules([tmp_path / "mine"])) == shapes(first)
    assert validated == []
    (tmp_path / "mine" / "my-rule.yaml").write_text(USER_RULE + "severty: error\n")
    with pytest.raises(RuleError, match=r"my-rule.yaml:7:1: my-rule: unknown key 'severty'"):
        load_rules([tmp_path / "mine"])


def test_an_invalid_user_rule_is_never_cached(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my-rule.yaml").write_text(USER_RULE + "when: size > 3\n")
    for _ in range(2):
        with pytest.raises(RuleError, match="unknown name 'size'"):
            load_rules([tmp_path / "mine"])
    assert entries(cache) == []


def corrupt(entry: Path, how: str) -> None:
    raw = entry.read_bytes()
    if how == "flipped":
        middle = len(raw) // 2
        entry.write_bytes(raw[:middle] + bytes([raw[middle] ^ 0xFF]) + raw[middle + 1 :])
    elif how == "truncated":
        entry.write_bytes(raw[: len(raw) // 3])
    elif how == "empty":
        entry.write_bytes(b"")
    elif how == "foreign format":
        entry.write_bytes(b"another-program\n" + raw)
    elif how == "a directory":
        entry.unlink()
        entry.mkdir()
    elif how == "unreadable":
        entry.chmod(0)


@pytest.mark.parametrize(
    "how", ["flipped", "truncated", "empty", "foreign format", "a directory", "unreadable"]
)
def test_a_bad_entry_is_the_slow_path(
    cache: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    load_rules()
    (entry,) = entries(cache)
    corrupt(entry, how)
    assert shapes(load_rules()) == shapes(fresh())
    assert capsys.readouterr().err == ""
    if how != "a directory":  # written again, whole: the next load is a hit
        assert entry.read_bytes().startswith(rulecache.FORMAT)


def test_another_users_entry_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_rules()
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    parsing_fails(monkeypatch)
    with pytest.raises(AssertionError, match="parsed YAML"):
        load_rules()


@pytest.mark.parametrize("where", ["a file", "read-only", "relative"])
def test_a_cache_directory_that_cannot_be_used_is_no_error(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    if where == "a file":
        (tmp_path / "xdg").write_text("not a directory")
    elif where == "read-only":
        (tmp_path / "xdg").mkdir(mode=0o500)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path)
    assert shapes(load_rules()) == shapes(fresh())
    assert not (tmp_path / "relative").exists()
    if where == "relative":  # the spec: a relative XDG_CACHE_HOME is ignored
        assert entries(tmp_path / "home" / ".cache" / "msrunwatch")


def test_no_home_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)
    assert rulecache.cache_dir() is None
    monkeypatch.delenv(rulecache.OFF, raising=False)
    assert shapes(load_rules()) == shapes(fresh())


def test_nothing_is_written_in_a_directory_the_command_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "msrun_log"
    shutil.copytree(FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log", logs)
    monkeypatch.delenv(rulecache.OFF, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(logs / "cache"))
    monkeypatch.setattr(rulecache, "_kept_out", [])
    assert main(["check", str(logs)]) == 1
    assert "oom" in capsys.readouterr().out
    assert not (logs / "cache").exists()


def test_a_hit_leaves_no_temporary_file_and_one_entry(cache: Path) -> None:
    for _ in range(3):
        load_rules()
    assert [p.name for p in cache.iterdir() if not p.name.startswith("rules-")] == []
    assert len(entries(cache)) == 1


def test_a_document_marshal_cannot_keep_leaves_no_entry(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my-rule.yaml").write_text(USER_RULE + "doc: 2026-11-28\n")
    with pytest.raises(RuleError):  # a date is not a string: the schema says so
        load_rules([tmp_path / "mine"])
    recorder = rulecache._Recorder()
    recorder.parsed(tmp_path / "x.yaml", "doc: 2026-11-28", {"doc": datetime.date(2026, 11, 28)})
    assert not recorder.usable
    assert entries(cache) == []


def test_a_fast_load_that_fails_is_made_again_on_the_slow_path(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_rules()
    original = rulecache.document

    def half_missing(path: Path, text_of: Any) -> Any:
        if rulecache._replaying.get() is not None and path.name.startswith("oom-"):
            raise rulecache.NotCached(str(path))
        return original(path, text_of)

    monkeypatch.setattr(rulecache, "document", half_missing)
    monkeypatch.setattr(loader.rulecache, "document", half_missing)
    assert shapes(load_rules()) == shapes(fresh())


def prefilter_shape(built: prefilter.Prefilter) -> Any:
    return (
        built._always,
        [(i, [g.pattern for g in gates]) for i, gates in built._gated],
        built._index,
        built.literals,
        [(None if p is None else p.pattern, fold) for p, fold in built._scans],
    )


def test_the_prefilter_from_remembered_analyses_is_the_fresh_prefilter(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patterns = [r.pattern for r in load_rules() if r.pattern]
    monkeypatch.setattr(prefilter, "ANALYSES", rulecache.Memo("prefilter"))
    first = prefilter.Prefilter(patterns)
    prefilter.ANALYSES.save()
    assert (cache / "prefilter.bin").is_file()
    remembered = rulecache.Memo("prefilter")
    monkeypatch.setattr(prefilter, "ANALYSES", remembered)
    monkeypatch.setattr(prefilter, "required_literals", lambda p: pytest.fail("parsed " + p))
    again = prefilter.Prefilter(patterns)
    assert not remembered._new  # every analysis and trie came from the file
    monkeypatch.undo()  # the cache off, the module's own memo and parser back
    assert not rulecache.enabled()
    assert prefilter_shape(again) == prefilter_shape(first)
    assert prefilter_shape(again) == prefilter_shape(prefilter.Prefilter(patterns))


def test_remembered_analyses_of_other_code_are_not_used(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = rulecache.Memo("prefilter")
    assert memo.get("pattern:x", lambda: "old") == "old"
    memo.save()
    code = tmp_path / "prefilter_stand_in.py"
    code.write_text("changed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rulecache, "CODE", (*rulecache.CODE, code))
        rulecache._code_digest.cache_clear()
        assert rulecache.Memo("prefilter").get("pattern:x", lambda: "new") == "new"
    rulecache._code_digest.cache_clear()
    assert rulecache.Memo("prefilter").get("pattern:x", lambda: "new") == "old"


def test_a_search_table_compiles_only_the_entries_it_tries() -> None:
    table = next(
        r.lookup.search
        for r in load_rules()
        if r.lookup and r.lookup.search and r.lookup.table == "second-stage.table.yaml"
    )
    assert table.first_found("no such thing at all") is None
    assert table._patterns.count(None) == len(table.patterns)
    row = table.first_found("RuntimeError: ACL_ERROR_RT_VECTOR_CORE_EXCEPTION 507035")
    compiled = len(table.patterns) - table._patterns.count(None)
    assert row is not None and 0 < compiled < len(table.patterns)
    assert row == next(
        r for p, r in table.entries if p.search("ACL_ERROR_RT_VECTOR_CORE_EXCEPTION 507035 x")
    )


def naive_rows(table: Any, values: list[str]) -> list[Any]:
    """For each value, the first row whose pattern (every one compiled here) is found in one of
    its readings (as written, without its sentence stops)."""
    compiled = [regex.compile(p, regex.VERSION1) for p in table.patterns]
    return [
        next(
            (r for p, r in zip(compiled, table.rows) if any(map(p.search, readings(v)))),
            None,
        )
        for v in values
    ]


SEARCH_TABLES = [r.lookup.search for r in load_rules() if r.lookup and r.lookup.search]
VALUES = sorted(
    set(CASE_LINES) | {row.get("classified_from", "") for t in SEARCH_TABLES for row in t.rows}
)


def test_search_tables_skip_entries_by_literal_and_find_the_same_rows() -> None:
    assert SEARCH_TABLES and len(VALUES) > 1000
    for table in SEARCH_TABLES:
        found = [table.first_found(v) for v in VALUES]
        assert found == naive_rows(table, VALUES)
        assert sum(r is not None for r in found) > min(20, len(table.rows))


def test_the_search_table_comparison_catches_a_wrong_literal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sabotage: every entry claims a literal no value holds: rows are lost, and the
    comparison above says so."""
    table = dataclasses.replace(SEARCH_TABLES[0])
    monkeypatch.setattr(
        type(table), "_needs", property(lambda self: [(("\x00never",), False)] * len(self.rows))
    )
    assert [table.first_found(v) for v in VALUES] != naive_rows(table, VALUES)


def test_a_condition_parsed_on_first_use_is_the_condition_parsed_at_once() -> None:
    """The built-in pack's conditions are parsed when first evaluated (rules.expr lazy)."""
    sources = sorted({e.source for r in load_rules() for e in (r.when, r.ranks) if e is not None})
    assert len(sources) > 50
    envs = [{}, {"rank": 1, "world": 2, "count": 3, "message": "x", "ranks": [0, 1]}]
    for source in sources:
        lazy, eager = Expr(source, lazy=True), Expr(source)
        assert [lazy(env) for env in envs] == [eager(env) for env in envs], source
        assert lazy.names == eager.names, source


def test_a_broken_condition_parsed_on_first_use_raises_then() -> None:
    lazy = Expr("rank >", lazy=True)
    with pytest.raises(ExprError, match="invalid syntax"):
        lazy({})
    with pytest.raises(ExprError, match="invalid syntax"):
        Expr("rank >")


def kept_pack_replaced(entry: Path, kept: bytes | None) -> None:
    """The entry with its kept rule set replaced (None: removed), written as the cache
    writes one."""
    raw = entry.read_bytes()
    payload = marshal.loads(raw[len(rulecache.FORMAT) + 4 :])
    if kept is None:
        payload.pop("built")
    else:
        payload["built"] = kept
    entry.unlink()
    rulecache._write_entry(entry, payload)


def test_a_hit_takes_the_rule_set_kept_whole_and_builds_nothing(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pack kept whole (pickled) is the fresh pack, conditions parsed on first use
    evaluating as the fresh ones do; no document is replayed and no rule built."""
    first = load_rules()
    monkeypatch.setattr(loader, "rule_from_data", lambda *a, **k: pytest.fail("built"))
    monkeypatch.setattr(rulecache, "document", lambda *a: pytest.fail("replayed"))
    kept = load_rules()
    monkeypatch.undo()
    slow = fresh()
    assert shapes(kept) == shapes(first) == shapes(slow)
    for k, s in zip(kept, slow):
        if k.peer is not None and s.peer is not None:
            assert k.peer.rank.names == s.peer.rank.names
        for a, b in ((k.when, s.when), (k.ranks, s.ranks)):
            if a is not None and b is not None:
                assert a.names == b.names and a.calls == b.calls, k.id


@pytest.mark.parametrize("how", ["garbage", "a module outside", "none kept"])
def test_a_kept_rule_set_that_cannot_be_used_is_replayed(
    cache: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    load_rules()
    (entry,) = entries(cache)
    outside = pickle.dumps([collections.OrderedDict()])
    kept_pack_replaced(entry, {"garbage": b"\x80\x05junk", "a module outside": outside}.get(how))
    slow = fresh()
    parsing_fails(monkeypatch)  # replayed from the documents, not parsed again
    assert shapes(load_rules()) == shapes(slow)
