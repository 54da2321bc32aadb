"""Where a match of a pattern anchored at the line's start can begin: a cheap test of a
line's first character before the rule's pattern is tried on it (a Python exception's
class name cannot begin a GLOG line, which starts with `[`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from msrunwatch.core.compat import sre_constants as C
from msrunwatch.core.compat import sre_parse as _parser
from msrunwatch.rules.prefilter import class_atom

_SET_OPERATORS = ("--", "&&", "||", "~~")


def v1_syntax(pattern: str) -> bool:
    """Whether the pattern uses syntax of the `regex` module's version 1 that `re`'s parser
    may read as something else: a nested set or a set operation inside a class
    (`[[:digit:]]`, `[a-z--aeiou]`), a `]` first in a class, a branch reset (`(?|`). Such a
    pattern is not analysed."""
    inside, i = False, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if inside:
            if ch == "[" or pattern.startswith(_SET_OPERATORS, i):
                return True
            if ch == "]":
                inside = False
        elif ch == "[":
            inside = True
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # `re` reads it as itself; not all dialects do
                return True
            continue
        elif pattern.startswith("(?|", i):
            return True
        i += 1
    return False


def first_characters(pattern: str) -> str | None:
    """A regex (one character class per alternative) that the first character of every match
    of a pattern anchored at the start of the line matches, or None when that cannot be
    told: the pattern is not anchored, may match the empty string, ignores case, uses
    multi-line mode or a scoped flag, or begins with something else than literal characters
    and classes. Lookarounds are left out of the account (a superset)."""
    if v1_syntax(pattern):
        return None
    try:
        tree = _parser.parse(pattern)
    except Exception:
        return None
    if tree.state.flags & (re.IGNORECASE | re.MULTILINE):
        return None
    items = list(tree)
    if not items or items[0] != (C.AT, C.AT_BEGINNING):
        return None
    found = _first(items[1:])
    if found is None or found[1] or not found[0]:
        return None
    return "|".join(dict.fromkeys(found[0]))


def _first(tree: Sequence[tuple[object, object]]) -> tuple[list[str], bool] | None:
    """The classes the first character of a match of the sequence can be in, and whether
    the sequence can match the empty string; None when that cannot be told."""
    atoms: list[str] = []
    for op, av in tree:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # zero width
        atom = class_atom(op, av)
        if atom is not None:
            return [*atoms, atom[0]], False
        inner: tuple[list[str], bool] | None
        if op is C.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[index]
            inner = _first(av[3])  # type: ignore[index]
        elif op is C.BRANCH:
            branches = [_first(b) for b in av[1]]  # type: ignore[index]
            if any(b is None for b in branches):
                return None
            inner = ([a for b in branches if b for a in b[0]], any(b[1] for b in branches if b))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            inner = _first(av[2])  # type: ignore[index]
            if inner is not None and av[0] == 0:  # type: ignore[index]
                inner = (inner[0], True)
        else:
            return None
        if inner is None:
            return None
        atoms += inner[0]
        if not inner[1]:
            return atoms, False
    return atoms, True
