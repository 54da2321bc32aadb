"""Cheap pre-selection of line rules: one scan finds which rules can possibly match.

Each rule's pattern is parsed to find a literal it cannot match without (or a set of
literals one of which it needs); one trie-shaped pattern of all those literals runs on a
line, stopping at every position (overlapping), and only the rules whose literal occurs
are tried with their full pattern. Rules without such a literal are gated or always tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msrunwatch.core.compat import sre_constants as C
from msrunwatch.core.compat import sre_parse as _parser
from msrunwatch.core.memo import LineMemo

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
        before = "".join(current)
        runs.append(before)
        current.clear()
        if op is C.BRANCH:
            whole = [_whole_literal(branch) for branch in av[1]]  # type: ignore[index]
            if before and all(w is not None for w in whole):  # E(?:1000|1001): E1000, E1001
                choices.append(tuple(dict.fromkeys(before + w for w in whole if w is not None)))
                continue
            alternatives = [_best(branch) for branch in av[1]]  # type: ignore[index]
            if all(a and min(len(x) for x in a) >= MIN_ALTERNATIVE for a in alternatives):
                choices.append(tuple(dict.fromkeys(x for a in alternatives for x in a)))


def _whole_literal(tree: Sequence[tuple[object, object]]) -> str | None:
    """The text a (sub)pattern made only of literal characters matches, if it is one."""
    chars: list[str] = []
    for op, av in tree:
        if op is C.LITERAL:
            chars.append(chr(av))  # type: ignore[arg-type]
        elif op is C.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[index]
            inner = _whole_literal(av[3])  # type: ignore[index]
            if inner is None:
                return None
            chars.append(inner)
        else:
            return None
    return "".join(chars)


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
    return _requirement(tree, tree)


def _requirement(
    tree: Any, node: Sequence[tuple[object, object]]
) -> tuple[Requirement, bool] | None:
    """The literals one of which every match of `node` (part of the parsed `tree`) contains,
    lower-cased when the tree ignores case, and whether it does."""
    requirement = tuple(literal[:MAX_LITERAL] for literal in _best(node))
    if not requirement:
        return None
    ignore_case = bool(tree.state.flags & re.IGNORECASE)
    if ignore_case:
        requirement = tuple(x.lower() for x in requirement)
    return requirement, ignore_case


_CLASSES = {
    C.CATEGORY_DIGIT: r"\d",
    C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w",
    C.CATEGORY_NOT_WORD: r"\W",
}
MIN_FACTOR = 3.0
"""Weight a gate needs: a literal character counts 1, a character class 0.5."""


def class_atom(op: object, av: object) -> tuple[str, float] | None:
    """One character of a match as a regex, with its weight; None if it is not one."""
    if op is C.LITERAL:
        return re.escape(chr(av)), 1.0  # type: ignore[arg-type]
    if op is not C.IN:
        return None
    parts: list[str] = []
    for item, value in av:  # type: ignore[attr-defined]
        if item is C.LITERAL:
            parts.append(re.escape(chr(value)))
        elif item is C.RANGE:
            parts.append(f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}")
        elif item is C.CATEGORY and value in _CLASSES:
            parts.append(_CLASSES[value])
        elif item is C.NEGATE:
            parts.insert(0, "^")
        else:
            return None
    return f"[{''.join(parts)}]", 0.5


def _factors(tree: Sequence[tuple[object, object]]) -> tuple[list[str], float]:
    """Regexes one of which every match of the sequence contains: its heaviest run of
    consecutive characters, or an alternation every branch of which has one."""
    best: tuple[list[str], float] = ([], 0.0)
    run: list[str] = []
    weight = 0.0
    for op, av in tree:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # zero width: the characters around it are still consecutive
        atom = class_atom(op, av) or _repeated(op, av)
        if atom is not None:
            run, weight = [*run, atom[0]], weight + atom[1]
            continue
        if weight > best[1]:
            best = (["".join(run)], weight)
        run, weight = [], 0.0
        if op is C.BRANCH:
            branches = [_factors(b) for b in av[1]]  # type: ignore[index]
            least = min((w for _, w in branches), default=0.0)
            if least > best[1]:
                best = ([part for parts, _ in branches for part in parts], least)
    return (["".join(run)], weight) if weight > best[1] else best


def _repeated(op: object, av: object) -> tuple[str, float] | None:
    """A character repeated a fixed number of times (`\\d{4}`)."""
    if op is not C.MAX_REPEAT or av[0] != av[1] or len(av[2]) != 1:  # type: ignore[index]
        return None
    count = av[0]  # type: ignore[index]
    atom = class_atom(*av[2][0])  # type: ignore[index]
    if atom is None or not 0 < count <= 8:
        return None
    return f"{atom[0]}{{{count}}}", atom[1] * count


def required_factor(pattern: str) -> list[re.Pattern[str]] | None:
    """Regexes one of which every match of the pattern contains (character classes
    allowed), for a pattern without a required literal: a cheap gate before the full
    pattern, each part searched from its first character."""
    try:
        tree = _parser.parse(pattern)
    except Exception:
        return None
    if tree.state.flags & re.IGNORECASE:
        return None
    parts, weight = _factors(_flatten(tree))
    return [re.compile(part) for part in parts] if weight >= MIN_FACTOR else None


def _flatten(tree: Sequence[tuple[object, object]]) -> list[tuple[object, object]]:
    """Non-capturing and capturing groups (without flags) inlined, so runs cross them."""
    flat: list[tuple[object, object]] = []
    for op, av in tree:
        if op is C.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[index]
            flat.extend(_flatten(av[3]))  # type: ignore[index]
        elif op is C.BRANCH:
            flat.append((op, (av[0], [_flatten(b) for b in av[1]])))  # type: ignore[index]
        else:
            flat.append((op, av))
    return flat


def trie_pattern(words: Iterable[str], escape: Callable[[str], str] = re.escape) -> str:
    """An alternation of words shaped as a trie, so each position costs one branch;
    `escape` turns a character into the regex that matches it."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:  # type: ignore[type-arg]
        ends = "" in node
        alts = [escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if ends else body

    return build(trie)


_TS = re.compile(r"\):(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.(\d{1,3})\.\d{0,3}) \[")
"""A GLOG line's time, between the `):` of its process field and the `[` of its source."""
_MASKS: dict[tuple[int, int], str] = {}
"""GLOG times with their digits masked (see _mask)."""


def _mask(time: str, shape: tuple[int, int]) -> str:
    """A GLOG time with every digit a zero (`.5.0` stays `.0.0`), remembered by its shape
    (its length and where its milliseconds end): it is the same for every time of a shape."""
    found = _MASKS[shape] = re.sub(r"\d", "0", time)
    return found


_TOUCHES_TIME = re.compile(r":\d|[\d.] (?:\[|$)|^[\d.:-]+$")
"""A literal that could overlap a GLOG time's digits: one crossing its start (`):2026`), its
end (`.394 [`) or lying within it. No other literal can (see Prefilter)."""


class Prefilter:
    """Maps a line to the indexes of the rules worth trying on it.

    The literal scan costs about 30 ns a character; most lines are repeats of a few
    messages with another time, so its result is remembered per line with the GLOG time's
    digits masked. That is exact: a literal can only be found differently in a line with
    another time if it could overlap the time's digits (`_TOUCHES_TIME`), and those few are
    looked for in every line as it is.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self._always: list[int] = []
        self._gated: list[tuple[int, list[re.Pattern[str]]]] = []
        by_literal: dict[tuple[str, bool], list[int]] = {}
        for index, pattern in enumerate(patterns):
            found = required_literals(pattern)
            if found is None:
                gate = required_factor(pattern)
                if gate is None:
                    self._always.append(index)
                else:
                    self._gated.append((index, gate))
                continue
            literals, fold = found
            for literal in literals:
                by_literal.setdefault((literal, fold), []).append(index)
        self._scans = [
            (self._compile([k for k, ci in by_literal if ci == fold], fold), fold)
            for fold in (False, True)
        ]
        touching = [key for key in by_literal if _TOUCHES_TIME.search(key[0])]
        self._near_time: list[tuple[re.Pattern[str], re.Pattern[str], bool]] = []
        """For the literals that overlap a GLOG time (case kept, then ignored): a search
        for any of them, and the overlapping scan that finds each (only when one is there)."""
        for fold in (False, True):
            keys = [k for k, ci in touching if ci == fold]
            if keys:
                present = re.compile(trie_pattern(keys), re.IGNORECASE if fold else 0)
                scan = self._compile(keys, fold)
                assert scan is not None
                self._near_time.append((present, scan, fold))
        self._reach = max((len(k) for k, _ in touching), default=0)
        """How far from the time a literal that overlaps it can start or end."""
        self._index = {
            fold: {k: v for (k, ci), v in by_literal.items() if ci == fold}
            for fold in (False, True)
        }
        self._hidden: dict[tuple[str, bool], list[int]] = {}
        self._memo: LineMemo[str, tuple[int, ...]] = LineMemo()
        """Lines (times masked) and the rules their literals name (and the always-tried)."""
        self.literals = frozenset(by_literal)
        """Every required literal, with whether its case is ignored."""

    @property
    def always(self) -> list[int]:
        """Indexes of the rules tried on every line (no literal, no gate)."""
        return list(self._always)

    @property
    def gates(self) -> list[re.Pattern[str]]:
        """The gates of the rules without a literal: one of them is in every line they match."""
        return [gate for _, gates in self._gated for gate in gates]

    @staticmethod
    def _compile(keys: list[str], fold: bool) -> re.Pattern[str] | None:
        """A scan that stops at every position where a literal starts (the matches overlap)
        and captures the longest literal there: the literals it starts with are the others."""
        if not keys:
            return None
        return re.compile(f"(?=({trie_pattern(keys)}))", re.IGNORECASE if fold else 0)

    def _rules_at(self, key: str, fold: bool) -> list[int]:
        """Rules whose literal `key` starts with (the longest literal found at a position
        holds every shorter one found there), worked out the first time `key` is found."""
        known = self._hidden.get((key, fold))
        if known is None:
            index = self._index[fold]
            rules = {i for end in range(1, len(key) + 1) for i in index.get(key[:end], ())}
            known = self._hidden[(key, fold)] = sorted(rules)
        return known

    def _scan(self, line: str) -> tuple[int, ...]:
        """Rules whose required literal is in the line (the trie scans), with the rules
        tried on every line, in order."""
        found: set[int] = set(self._always)
        for pattern, fold in self._scans:
            if pattern is None:
                continue
            for m in pattern.finditer(line):
                found.update(self._rules_at(m[1].lower() if fold else m[1], fold))
        return tuple(sorted(found))

    def candidates(self, line: str) -> list[int]:
        """Rule indexes whose required literal is in the line, plus the always-tried ones."""
        m = _TS.search(line)
        if m is None:
            scanned = self._memo.answer(line, self._scan)
            extra: set[int] = set()
        else:
            start, end = m.span(1)
            shape = (end - start, m.end(2) - start)
            mask = _MASKS.get(shape) or _mask(m[1], shape)
            scanned = self._memo.answer(line[:start] + mask + line[end:], self._scan)
            extra = self._around_time(line, start, end) if self._near_time else set()
        for index, gates in self._gated:
            if any(gate.search(line) for gate in gates):
                extra.add(index)
        if extra and not extra.issubset(scanned):
            return sorted(extra.union(scanned))
        return list(scanned)

    def _around_time(self, line: str, start: int, end: int) -> set[int]:
        """Rules whose literal overlaps the GLOG time at line[start:end] (see _TOUCHES_TIME)."""
        found: set[int] = set()
        low, high = max(start - self._reach, 0), end + self._reach
        for present, scan, fold in self._near_time:
            if present.search(line, low, high) is not None:
                for hit in scan.finditer(line, low, high):
                    found.update(self._rules_at(hit[1].lower() if fold else hit[1], fold))
        return found


def capture_literals(pattern: str, name: str) -> tuple[Requirement, bool] | None:
    """Literals one of which every participating match of capture `name` contains, and
    whether case is ignored; None when the pattern or the group has none that can be told
    (a scoped flag on the way to the group included)."""
    try:
        tree = _parser.parse(pattern)
    except Exception:
        return None
    index = tree.state.groupdict.get(name)
    group = None if index is None else _group(tree, index)
    if group is None:
        return None
    return _requirement(tree, group)


def _group(tree: object, index: int) -> Sequence[tuple[object, object]] | None:
    """The body of capture group `index`, unless a scoped flag lies on the way to it."""
    items = tree if isinstance(tree, (list, tuple)) else getattr(tree, "data", None)
    if items is None:
        return None
    for item in items:
        if isinstance(item, tuple) and len(item) == 2 and item[0] is C.SUBPATTERN:
            group, add, remove, body = item[1]
            if add or remove:
                continue  # a scoped flag: its groups are not looked into
            if group == index:
                return body  # type: ignore[no-any-return]
            found = _group(body, index)
        elif isinstance(item, (list, tuple)) or hasattr(item, "data"):
            found = _group(item, index)
        else:
            continue
        if found is not None:
            return found
    return None
