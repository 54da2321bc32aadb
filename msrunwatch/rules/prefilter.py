"""Cheap pre-selection of line rules: one scan finds which rules can possibly match.

Each rule's pattern is parsed to find a literal it cannot match without (or a set of
literals one of which it needs); one trie-shaped
pattern of all those literals runs on a line, and only the rules whose literal occurs
(or may occur, hidden by an overlapping one) are tried with their full pattern. Rules
without such a literal are always tried.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

MIN_LITERAL = 4
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
    requirement = _best(tree)
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


def _may_hide(outer: str, inner: str) -> bool:
    """Whether a match of `outer` can hide an occurrence of `inner` from a left-to-right scan."""
    if inner in outer:
        return True
    return any(inner.startswith(outer[i:]) for i in range(1, len(outer)))


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
        self._by_literal = by_literal
        self._scans = [
            (self._compile([k for k, ci in by_literal if ci == fold], fold), fold)
            for fold in (False, True)
        ]
        self._hidden: dict[tuple[str, bool], list[int]] = {}

    @staticmethod
    def _compile(keys: list[str], fold: bool) -> re.Pattern[str] | None:
        if not keys:
            return None
        return re.compile(trie_pattern(keys), re.IGNORECASE if fold else 0)

    def _rules_behind(self, key: str, fold: bool) -> list[int]:
        """Rules whose literal a match of `key` may hide, worked out the first time `key`
        occurs in a line: a real log shows a few dozen keys, so building the prefilter
        stays linear in the rules, however many there are."""
        known = self._hidden.get((key, fold))
        if known is None:
            known = sorted(
                {
                    i
                    for (literal, ci), indexes in self._by_literal.items()
                    if ci == fold and _may_hide(key, literal)
                    for i in indexes
                }
            )
            self._hidden[(key, fold)] = known
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
