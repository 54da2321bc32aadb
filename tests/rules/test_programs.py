"""Compiled patterns kept between runs (rules.programs): a pattern built from a remembered
program is the pattern `re.compile` makes, and a program that cannot be used is compiled
again the usual way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from msrunwatch.read import patterns as P
from msrunwatch.read.quiet import QuietLines
from msrunwatch.rules import prefilter, programs, rulecache
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.prefilter import Prefilter


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty memo of programs for each test (the cache itself: the `cache` fixture)."""
    monkeypatch.setattr(programs, "PROGRAMS", rulecache.Memo("programs", limit=12))


def remembered(monkeypatch: pytest.MonkeyPatch) -> rulecache.Memo:
    """The memo as the next process reads it, with the compiler out of reach: a pattern
    compiled now can only come from a remembered program."""
    programs.PROGRAMS.save()
    memo = rulecache.Memo("programs", limit=12)
    monkeypatch.setattr(programs, "PROGRAMS", memo)
    monkeypatch.setattr(programs, "_program", lambda *a: pytest.fail("compiled again"))
    return memo


def big_patterns(matcher: LineMatcher) -> list[re.Pattern[str] | re.Pattern[bytes]]:
    """The patterns built from the built-in pack: the quiet lines' and the prefilter's."""
    quiet = QuietLines(matcher).pattern
    assert quiet is not None
    scans = Prefilter(r.pattern for r in matcher.rules if r.pattern)._scans
    return [quiet, *(scan for scan, _ in scans if scan is not None)]


def test_the_built_in_patterns_from_remembered_programs_are_re_compiles(
    cache: Path, matcher: LineMatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = big_patterns(matcher)
    assert len(first) == 3
    memo = remembered(monkeypatch)
    again = big_patterns(matcher)
    assert not memo._new  # every program came from the file
    monkeypatch.undo()
    fresh = [re.compile(p.pattern, p.flags) for p in first]
    # A Pattern compares equal to another of the same text, flags and program.
    assert again == first == fresh
    quiet = again[0]
    assert isinstance(quiet, re.Pattern)
    line = b"[ERROR] DEVICE(1,7f,python):2026-01-01-00:00:00.000.000 [a.cc:1] F] Out of memory"
    assert quiet.search(line) is not None  # and it works as one


def test_groups_flags_and_both_kinds_of_text_survive_a_remembered_program(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [
        ("(?P<rank>\\d+) (?i:Rank) (\\w+)", 0),
        (b"^(?P<level>[A-Z]+)\\] |x{2,5}$", re.M),
        ("caf\u00e9|(?=(ab|a))", re.IGNORECASE),
    ]
    first = [programs.compiled(p, f) for p, f in cases]
    remembered(monkeypatch)
    again = [programs.compiled(p, f) for p, f in cases]
    monkeypatch.undo()
    for made, pattern in zip(again, first):
        fresh = re.compile(pattern.pattern, pattern.flags)
        assert made == pattern == fresh
        assert (made.groups, made.groupindex, made.flags) == (
            fresh.groups, fresh.groupindex, fresh.flags)  # fmt: skip
    match = again[0].search("at 12 RANK seven")
    assert match is not None and match["rank"] == "12" and match[2] == "seven"


def test_the_same_text_with_other_flags_or_kind_is_another_program(cache: Path) -> None:
    made = [programs.compiled("a.b", 0), programs.compiled("a.b", re.S), programs.compiled(b"a.b")]
    assert made[0].search("a\nb") is None
    assert made[1].search("a\nb") is not None
    assert made[2].search(b"a\nb") is None
    assert len(programs.PROGRAMS._known()) == 3


def test_a_program_sre_refuses_is_compiled_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    programs.compiled("(?P<a>x)y+")
    for key, (flags, code, groups, index, names) in programs.PROGRAMS._known().items():
        programs.PROGRAMS._known()[key] = (flags, [999999, *code], groups, index, names)
    made = programs.compiled("(?P<a>x)y+")
    assert made == re.compile("(?P<a>x)y+")
    assert made.search("axyy") is not None


def test_with_the_cache_off_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert not rulecache.enabled()  # the suite runs with it off
    assert programs.compiled("a+b", re.M) == re.compile("a+b", re.M)
    assert not programs.PROGRAMS._new
    programs.PROGRAMS.save()
    assert not any(tmp_path.iterdir())


def test_a_bad_pattern_raises_as_re_compile_does(cache: Path) -> None:
    with pytest.raises(re.error):
        programs.compiled("a(b")


def test_a_memo_past_its_limit_starts_again(cache: Path) -> None:
    memo = rulecache.Memo("small", limit=2)
    for key in "abc":
        memo.get(key, lambda: 1)
    memo.save()
    assert rulecache.Memo("small", limit=2)._known() == {}
    memo = rulecache.Memo("small", limit=2)
    memo.get("a", lambda: 1)
    memo.save()
    assert rulecache.Memo("small", limit=2)._known() == {"a": 1}


def test_remembered_required_literals_are_the_fresh_ones(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read side's shapes and markers are analysed once, then remembered (prefilter's
    ANALYSES): what the memo gives is what parsing gives."""
    texts = [shape._pattern for _, shape in P.shapes()]
    texts += [marker.pattern.decode() for marker in P.INFO_MARKERS]
    texts += ["(?i)HCCL[ _]?error", "E(?:1000|1001)x", "\\d+"]
    monkeypatch.setattr(prefilter, "ANALYSES", rulecache.Memo("prefilter"))
    fresh = [prefilter.required_literals(t) for t in texts]
    prefilter.ANALYSES.save()
    memo = rulecache.Memo("prefilter")
    monkeypatch.setattr(prefilter, "ANALYSES", memo)
    monkeypatch.setattr(prefilter, "_required_literals", lambda p: pytest.fail("parsed " + p))
    again = [prefilter.required_literals(t) for t in texts]
    assert not memo._new
    monkeypatch.undo()
    assert again == fresh == [prefilter.required_literals(t) for t in texts]
    assert fresh[-3] == (("error",), True) and fresh[-1] is None  # the longest literal
