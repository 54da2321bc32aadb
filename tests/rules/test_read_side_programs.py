"""The read side's own patterns (read.patterns) are built from programs remembered between
runs (rules.programs.READ_SIDE): each must be the pattern `re.compile` makes of its text
and flags, whether its program was computed now or read from the memo, and an edited
pattern never gets the program of the text it replaced."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.read import discover
from msrunwatch.read import patterns as P
from msrunwatch.rules import programs, rulecache
from tests.support import ROOT

Pattern = Any  # re.Pattern[str] | re.Pattern[bytes]


def read_side_patterns() -> dict[str, Pattern]:
    """Every compiled pattern read.patterns holds or builds, by name: module constants,
    the INFO markers, each shape's regex, the grouped scans and the stage-only search; and
    read.discover's."""
    found: dict[str, Pattern] = {}
    for name, value in sorted(vars(P).items()):
        if isinstance(value, re.Pattern):
            found[name] = value
        elif isinstance(value, tuple) and value and all(isinstance(v, re.Pattern) for v in value):
            found.update({f"{name}[{i}]": v for i, v in enumerate(value)})
        elif isinstance(value, P.Shape):
            found[f"{name}.regex"] = value.regex
        elif isinstance(value, P.AnyOf):
            value._compile()
            found[f"{name}._exact"] = value._exact
            if value._folded is not None:
                found[f"{name}._folded"] = value._folded
    found["stage_only()"] = P.stage_only()
    found.update(
        {f"discover.{n}": v for n, v in vars(discover).items() if isinstance(v, re.Pattern)}
    )
    return found


PATTERNS = read_side_patterns()


def test_every_read_side_pattern_is_what_re_compile_makes() -> None:
    """As imported (the suite runs with the cache off: programs computed in-process)."""
    assert len(PATTERNS) >= 60
    for name, made in PATTERNS.items():
        assert made == re.compile(made.pattern, made.flags), name


def test_remembered_read_side_programs_give_the_same_patterns(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = rulecache.Memo("patterns", limit=256)
    first = {n: programs.remembered(memo, p.pattern, p.flags) for n, p in PATTERNS.items()}
    memo.save()
    again_memo = rulecache.Memo("patterns", limit=256)
    monkeypatch.setattr(programs, "_program", lambda *a: pytest.fail("compiled again"))
    again = {n: programs.remembered(again_memo, p.pattern, p.flags) for n, p in first.items()}
    assert not again_memo._new  # every program came from the file
    monkeypatch.undo()
    for name, made in again.items():
        fresh = re.compile(PATTERNS[name].pattern, PATTERNS[name].flags)
        assert made == first[name] == fresh, name
        assert (made.groups, made.groupindex) == (fresh.groups, fresh.groupindex), name


def test_an_edited_pattern_is_compiled_anew_not_taken_from_the_memo(cache: Path) -> None:
    memo = rulecache.Memo("patterns", limit=256)
    old = programs.remembered(memo, r"\[(?P<lvl>INFO|ERROR)\] ")
    memo.save()
    memo = rulecache.Memo("patterns", limit=256)
    edited = programs.remembered(memo, r"\[(?P<lvl>INFO|WARNING)\] ")
    assert memo._new  # not found: its own program was computed and noted
    assert edited == re.compile(r"\[(?P<lvl>INFO|WARNING)\] ") != old
    assert edited.search("[WARNING] x") is not None and old.search("[WARNING] x") is None


def test_the_memo_holds_every_read_side_pattern() -> None:
    """Past its limit a memo starts again: the read side's patterns must all fit."""
    assert programs.READ_SIDE.limit >= 2 * len(PATTERNS)


def test_a_second_process_builds_them_from_the_memo_as_re_would(tmp_path: Path) -> None:
    """Through the import itself: a first run fills the memo, a second reads every program
    from it (its compiler out of reach) and compares each pattern with re.compile's."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop(rulecache.OFF, None)
    fill = "import tests.rules.test_read_side_programs"
    code = (
        "import re, msrunwatch.rules.programs as programs\n"
        "programs._program = lambda *a: (_ for _ in ()).throw(SystemExit('compiled again'))\n"
        "from tests.rules.test_read_side_programs import PATTERNS as found\n"
        "bad = [n for n, p in found.items() if p != re.compile(p.pattern, p.flags)]\n"
        "print(len(found), bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", fill], env=env, cwd=ROOT, check=False)
    assert done.returncode == 0
    assert (tmp_path / "msrunwatch" / "patterns.bin").is_file()
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    count, bad = done.stdout.split(" ", 1)
    assert int(count) == len(PATTERNS) and bad.strip() == "[]"
