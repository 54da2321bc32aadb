"""Cheap pre-selection of line rules: one scan finds which rules can possibly match.

Each rule's pattern is parsed to find a literal it cannot match without (or a set of
literals one of which it needs); one trie-shaped pattern of all those literals runs on a
line, stopping at every position (overlapping), and only the rules whose literal occurs
are tried with their full pattern. Rules without such a literal are gated or always tried.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from msrunwatch.core.compat import sre_constants as C
from msrunwatch.core.compat import sre_parse as _parser
from msrunwatch.core.memo import LineMemo
from msrunwatch.rules.programs import compiled
from msrunwatch.rules.rulecache import Memo

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
    """Literals one of which every match contains, and whether case is ignored; remembered
    between runs (ANALYSES: the read-side shapes and markers a cold start analyses)."""
    return ANALYSES.get("literals:" + pattern, partial(_required_literals, pattern))


def _required_literals(pattern: str) -> tuple[Requirement, bool] | None:
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


ANALYSES = Memo("prefilter")
"""The literals and gates of each pattern, and the tries of sets of literals, as worked out
before (rules.rulecache): a cold start need not parse every rule's pattern again."""


def trie_pattern(words: Iterable[str], escape: Callable[[str], str] = re.escape) -> str:
    """An alternation of words shaped as a trie, so each position costs one branch;
    `escape` turns a character into the regex that matches it."""
    chosen = sorted(set(words))
    text = "\0".join([f"{escape.__module__}.{escape.__qualname__}", *chosen])
    key = "trie:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return ANALYSES.get(key, lambda: _trie_pattern(chosen, escape))


def _trie_pattern(words: Iterable[str], escape: Callable[[str], str]) -> str:
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


_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_DIGIT = re.compile("[0-9]")


def zeroed(line: str) -> bytes:
    """The line (UTF-8) with every ASCII digit a zero: lines that differ only in their
    numbers (times, pids, steps, ranks) look the same. Made on the bytes: str.translate
    looks up every character in a dict (6 us for a GLOG line, against 0.7)."""
    return line.encode("utf-8", "surrogatepass").translate(_ZEROS)


def analysed(pattern: str) -> tuple[tuple[Requirement, bool] | None, list[str] | None]:
    """A pattern's required literals, else the parts of its gate, else neither; remembered
    between runs (ANALYSES)."""
    return ANALYSES.get("pattern:" + pattern, partial(_analysis, pattern))


def _analysis(pattern: str) -> tuple[tuple[Requirement, bool] | None, list[str] | None]:
    """A pattern's required literals, else the parts of its gate (regexes), else neither."""
    found = required_literals(pattern)
    if found is not None:
        return found, None
    gate = required_factor(pattern)
    return None, None if gate is None else [g.pattern for g in gate]


class Prefilter:
    """Maps a line to the indexes of the rules worth trying on it.

    The literal scan costs about 30 ns a character; most lines are repeats of a few
    messages with other numbers (a time, a pid, a step), so its result is remembered per
    line with every digit a zero. That is exact: a literal without digits is in a line if
    and only if it is in the line with its digits zeroed (it cannot overlap a digit either
    way); the scan looks for every literal with its digits zeroed too, and a literal with
    digits it finds so (an error code: `EI0006` found as `EI0000`) is then looked for as it
    is in each line, with one substring test.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self._always: list[int] = []
        self._gated: list[tuple[int, list[re.Pattern[str]]]] = []
        by_literal: dict[tuple[str, bool], list[int]] = {}
        for index, pattern in enumerate(patterns):
            found, parts = analysed(pattern)
            if found is None:
                if parts is None:
                    self._always.append(index)
                else:
                    self._gated.append((index, [re.compile(part) for part in parts]))
                continue
            literals, fold = found
            for literal in literals:
                by_literal.setdefault((literal, fold), []).append(index)
        by_key: dict[tuple[str, bool], list[tuple[int, str | None]]] = {}
        for (literal, fold), rules in by_literal.items():
            key = zeroed(literal).decode("utf-8", "surrogatepass")
            check = literal if _DIGIT.search(literal) else None  # looked for as it is
            by_key.setdefault((key, fold), []).extend((i, check) for i in rules)
        self._scans = [
            (self._compile([k for k, ci in by_key if ci == fold], fold), fold)
            for fold in (False, True)
        ]
        self._index = {
            fold: {k: v for (k, ci), v in by_key.items() if ci == fold} for fold in (False, True)
        }
        self._hidden: dict[tuple[str, bool], Found] = {}
        self._memo: LineMemo[bytes, Found] = LineMemo()
        """Lines (digits zeroed) and the rules their literals name (and the always-tried)."""
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
        return compiled(f"(?=({trie_pattern(keys)}))", re.IGNORECASE if fold else 0)

    def _rules_at(self, key: str, fold: bool) -> Found:
        """Rules whose literal (digits zeroed) `key` starts with (the longest literal found
        at a position holds every shorter one found there), worked out the first time `key`
        is found: those whose literal has no digits, and those to be looked for as they are."""
        known = self._hidden.get((key, fold))
        if known is None:
            index = self._index[fold]
            rules = {r for end in range(1, len(key) + 1) for r in index.get(key[:end], ())}
            known = self._hidden[(key, fold)] = (
                tuple(sorted({i for i, check in rules if check is None})),
                tuple(sorted((i, check, fold) for i, check in rules if check is not None)),
            )
        return known

    def _scan(self, shape: bytes) -> Found:
        """The rules whose required literal (digits zeroed) is in the line (digits zeroed:
        `shape`), with the rules tried on every line: those sure to be, and those whose
        literal is yet to be looked for as it is."""
        line = shape.decode("utf-8", "surrogatepass")
        sure: set[int] = set(self._always)
        check: set[tuple[int, str, bool]] = set()
        for pattern, fold in self._scans:
            if pattern is None:
                continue
            for m in pattern.finditer(line):
                found = self._rules_at(m[1].lower() if fold else m[1], fold)
                sure.update(found[0])
                check.update(found[1])
        return tuple(sorted(sure)), tuple(sorted(c for c in check if c[0] not in sure))

    def candidates(self, line: str, shape: bytes | None = None) -> list[int]:
        """Rule indexes whose required literal is in the line, plus the always-tried ones;
        `shape`: the line's zeroed(), if the caller has it."""
        sure, check = self._memo.answer(zeroed(line) if shape is None else shape, self._scan)
        extra = {i for i, literal, fold in check if _holds(line, literal, fold)} if check else set()
        for index, gates in self._gated:
            if any(gate.search(line) for gate in gates):
                extra.add(index)
        if extra and not extra.issubset(sure):
            return sorted(extra.union(sure))
        return list(sure)


Found = tuple[tuple[int, ...], tuple[tuple[int, str, bool], ...]]
"""Rules a line's literals name: those sure to be, and (index, literal, case ignored) of
those whose literal holds digits, to be looked for in the line as it is."""


def _holds(line: str, literal: str, fold: bool) -> bool:
    """Whether the line holds the literal (lower-cased when case is ignored); a line that is
    not ASCII is taken to, when case is ignored (Unicode case folding: the rule decides)."""
    if not fold:
        return literal in line
    return not line.isascii() or literal in line.lower()


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
