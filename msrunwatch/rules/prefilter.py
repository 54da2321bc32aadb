"""Cheap pre-selection of line rules: one scan finds which rules can possibly match.

Each rule's pattern is parsed to find a literal it cannot match without (or a set of
literals one of which it needs); one trie-shaped
pattern of all those literals runs on a line, and only the rules whose literal occurs
(or may occur, hidden by an overlapping one) are tried with their full pattern. Rules
without such a literal are always tried.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

MIN_LITERAL = 4
MAX_LITERAL = 64
"""A required literal is cut to its first characters (still required): the trie is built
one recursion level per character."""
MIN_ALTERNATIVE = 3


Requirement = tuple[str, ...]
"""Literals of which at least one must occur in a matching line."""


def _walk(
    tree: Sequence[tuple[object, object]],
    runs: list[str],
    current: list[str],
    choices: list[Requirement],
) -> None:
    """Collect runs of required literal characters, and alternations of required literals."""
    for op, av in tree:
        if op is C.LITERAL:
            current.append(chr(av))  # type: ignore[arg-type]
            continue
        if op is C.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[index]
            _walk(av[3], runs, current, choices)  # type: ignore[index]
            continue
        runs.append("".join(current))
        current.clear()
        if op is C.BRANCH:
            alternatives = [_best(branch) for branch in av[1]]  # type: ignore[index]
            if all(len(a) == 1 and len(a[0]) >= MIN_ALTERNATIVE for a in alternatives):
                choices.append(tuple(a[0] for a in alternatives))


def _best(tree: Sequence[tuple[object, object]]) -> Requirement:
    """The strongest requirement of a (sub)pattern: its longest literal, else an alternation."""
    runs: list[str] = []
    current: list[str] = []
    choices: list[Requirement] = []
    _walk(tree, runs, current, choices)
    runs.append("".join(current))
    longest = max(runs, key=len)
    if len(longest) >= MIN_LITERAL:
        return (longest,)
    if choices:
        return max(choices, key=lambda c: min(len(x) for x in c))
    return ()


def required_literals(pattern: str) -> tuple[Requirement, bool] | None:
    """Literals one of which every match contains, and whether case is ignored."""
    try:
        tree = _parser.parse(pattern)
    except Exception:  # the `regex` dialect has syntax `re` does not parse
        return None
    requirement = tuple(literal[:MAX_LITERAL] for literal in _best(tree))
    if not requirement:
        return None
    ignore_case = bool(tree.state.flags & re.IGNORECASE)
    if ignore_case:
        requirement = tuple(x.lower() for x in requirement)
    return requirement, ignore_case


def trie_pattern(words: Iterable[str]) -> str:
    """An alternation of words shaped as a trie, so each position costs one branch."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:  # type: ignore[type-arg]
        ends = "" in node
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if ends else body

    return build(trie)


class _Literals:
    """The required literals of one case mode, indexed to answer "which literals can a match
    of this one hide?" without comparing it with all of them: a scan that finds `key` skips
    past it, so a literal is hidden when it lies inside `key`, or when it starts with what
    `key` ends with (it begins inside the match and runs on past it)."""

    def __init__(self, by_literal: dict[str, list[int]]) -> None:
        self._rules = by_literal
        self._sorted = sorted(by_literal)

    def hidden_by(self, key: str) -> list[int]:
        """Rule indexes whose literal a match of `key` may hide (`key`'s own included)."""
        found: set[str] = set()
        for start in range(len(key)):
            rest = key[start:]
            found.update(rest[:end] for end in range(1, len(rest) + 1) if rest[:end] in self._rules)
            if start:
                found.update(self._starting_with(rest))
        return sorted({i for literal in found for i in self._rules[literal]})

    def _starting_with(self, prefix: str) -> list[str]:
        """Literals that start with prefix: one range of the sorted list."""
        first = bisect.bisect_left(self._sorted, prefix)
        last = first
        while last < len(self._sorted) and self._sorted[last].startswith(prefix):
            last += 1
        return self._sorted[first:last]


class Prefilter:
    """Maps a line to the indexes of the rules worth trying on it."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._always: list[int] = []
        by_literal: dict[tuple[str, bool], list[int]] = {}
        for index, pattern in enumerate(patterns):
            found = required_literals(pattern)
            if found is None:
                self._always.append(index)
                continue
            literals, fold = found
            for literal in literals:
                by_literal.setdefault((literal, fold), []).append(index)
        self._scans = [
            (self._compile([k for k, ci in by_literal if ci == fold], fold), fold)
            for fold in (False, True)
        ]
        self._index = {
            fold: _Literals({k: v for (k, ci), v in by_literal.items() if ci == fold})
            for fold in (False, True)
        }
        self._hidden: dict[tuple[str, bool], list[int]] = {}

    @staticmethod
    def _compile(keys: list[str], fold: bool) -> re.Pattern[str] | None:
        if not keys:
            return None
        return re.compile(trie_pattern(keys), re.IGNORECASE if fold else 0)

    def _rules_behind(self, key: str, fold: bool) -> list[int]:
        """Rules whose literal a match of `key` may hide, worked out the first time `key`
        occurs in a line, from the index: a few lookups per character of `key`, so a log that
        holds all of 10,000 rules' literals costs no more than 10,000 lookups of each."""
        known = self._hidden.get((key, fold))
        if known is None:
            known = self._hidden[(key, fold)] = self._index[fold].hidden_by(key)
        return known

    def candidates(self, line: str) -> list[int]:
        """Rule indexes whose required literal is in the line, plus the always-tried ones."""
        found: set[int] = set(self._always)
        for pattern, fold in self._scans:
            if pattern is None:
                continue
            for m in pattern.finditer(line):
                found.update(self._rules_behind(m[0].lower() if fold else m[0], fold))
        return sorted(found)
