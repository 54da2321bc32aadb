"""`regex` patterns built from what was remembered (rules.programs.REGEX): each is the
pattern `regex.compile` makes of its text and flags (the same arguments to the C engine, as
pickling a pattern keeps them, and the same matches), and a cold start whose patterns are
all remembered never imports the `regex` package's Python half."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import regex

from msrunwatch.read import timestamps
from msrunwatch.rules import programs, rulecache, searchtable
from msrunwatch.rules.loader import load_rules
from tests.support import ROOT

TRICKY = [
    (r"(?P<y>\d{4})-(?P<mo>\d\d) (?i:error) \p{Lu}+", programs.VERSION1),
    (r"[[a-z]--[aeiou]]+(?<=x)\b", programs.VERSION1),
    (r"(?:malloc){e<=1} (?P<size>\d+(?:\.\d+)?) ?[KMG]i?B", programs.VERSION1),
    (r"^\s*(?|(?P<a>x)|(?P<a>y))(?>z+)\Z", programs.VERSION1),
    (r"\.(?!\w)", 0),
    (r"(?i)straße", 0),
    (r"(?i)straße", programs.VERSION1),
]
LINES = [
    "2026-11-21 ERROR ABC x",
    "bcdx",
    "mallc 12.5 MiB",
    "  xzzz",
    "value 207000. end",
    "STRASSE and straße",
    "",
]


def every_pattern() -> list[tuple[str, int]]:
    """The built-in pack's patterns and search-table entries, the read side's two stamps,
    the sentence stop, and patterns using what `regex` adds to `re`."""
    found = [(r.pattern, programs.VERSION1) for r in load_rules(None) if r.pattern]
    for table in sorted((ROOT / "rules").rglob("*" + searchtable.TABLE_SUFFIX)):
        entries = searchtable.load_search_table(table, "t", check=False).patterns
        found += [(p, programs.VERSION1) for p in entries]
    found += [(timestamps._GLOG, 0), (timestamps._ISO, 0), (searchtable._SENTENCE_STOP, 0)]
    return [*dict.fromkeys(found + TRICKY)]


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty memo, and nothing compiled yet in this process, for each test."""
    monkeypatch.setattr(programs, "REGEX", rulecache.Memo("regex", limit=4096))
    monkeypatch.setattr(programs, "_made", {})


def test_the_flags_are_regex_s_own() -> None:
    assert programs.VERSION1 == regex.VERSION1
    assert programs._LOCALE == regex.LOCALE


def test_remembered_patterns_are_what_regex_compile_makes(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patterns = every_pattern()
    assert len(patterns) > 100
    for text, flags in patterns:
        programs.regex_compiled(text, flags)
    programs.REGEX.save()
    monkeypatch.setattr(programs, "REGEX", rulecache.Memo("regex", limit=4096))
    monkeypatch.setattr(programs, "_made", {})
    monkeypatch.setattr(programs, "_regex_data", lambda *a: pytest.fail("compiled again"))
    for text, flags in patterns:
        made, fresh = programs.regex_compiled(text, flags), regex.compile(text, flags)
        assert made._pickled_data == fresh._pickled_data, text
        assert pickle.loads(pickle.dumps(made))._pickled_data == fresh._pickled_data
        for line in LINES:
            got, want = made.search(line), fresh.search(line)
            assert (got and (got.span(), got.groupdict())) == (
                want and (want.span(), want.groupdict())
            ), (text, line)
    assert not programs.REGEX._new  # every pattern came from the file


def test_an_edited_pattern_or_other_flags_is_compiled_anew(cache: Path) -> None:
    old = programs.regex_compiled(r"(?P<n>\d+) MB", programs.VERSION1)
    programs.REGEX.save()
    programs._made.clear()
    new = programs.regex_compiled(r"(?P<n>\d+) GB", programs.VERSION1)
    other = programs.regex_compiled(r"(?P<n>\d+) MB", 0)
    assert new.pattern.endswith("GB") and new.search("3 GB") and not old.search("3 GB")
    assert other._pickled_data == regex.compile(r"(?P<n>\d+) MB")._pickled_data
    assert other._pickled_data != old._pickled_data


def test_a_locale_pattern_is_never_remembered(cache: Path) -> None:
    made = programs.regex_compiled(r"(?L)\w+", 0)
    assert made._pickled_data == regex.compile(r"(?L)\w+")._pickled_data
    assert [v for v in programs.REGEX._known().values() if v is not None] == []


def test_a_bad_pattern_raises_regex_s_error(cache: Path) -> None:
    with pytest.raises(regex.error):
        programs.regex_compiled(r"(?P<a>x", programs.VERSION1)
    assert programs.regex_or_none(r"(?P<a>x", programs.VERSION1) is None
    assert programs.regex_or_none(r"x+", programs.VERSION1) is not None


def test_with_the_cache_off_regex_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rulecache.OFF, "1")
    made = programs.regex_compiled(r"a(?=b)", programs.VERSION1)
    assert made._pickled_data == regex.compile(r"a(?=b)", programs.VERSION1)._pickled_data
    assert not programs.REGEX._new


COLD = """
import sys
from msrunwatch.rules import programs
made = programs.regex_compiled(r"(?P<n>\\d+) MB", programs.VERSION1)
before = sorted(m for m in sys.modules if m.startswith("regex"))
found = made.search("took 12 MB")["n"], made.sub("", "1 MB"), made.search("x", timeout=1.0)
import regex
after = regex.compile(r"(?P<n>\\d+) MB", regex.VERSION1)
print(before, found, after._pickled_data == made._pickled_data, regex._main._regex is sys.modules["regex._regex"])
"""


def test_a_remembered_pattern_needs_only_the_engine(cache: Path) -> None:
    """In a new process: the C engine alone, loaded outside the package, runs the pattern
    (search, sub, timeout); the package imported afterwards takes that same engine."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent)}
    env.pop(rulecache.OFF, None)
    said = []
    for _ in range(2):  # the first run remembers, the second reads
        done = subprocess.run(
            [sys.executable, "-c", COLD], env=env, capture_output=True, text=True, check=True
        )
        said.append(done.stdout.strip())
    assert said[1] == "['regex._regex'] ('12', '', None) True True", said
