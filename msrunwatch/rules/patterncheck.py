"""What a rule pattern costs before it is compiled: a bound on its size, and nested repeats.

The `regex` module compiles a counted repeat by copying what it repeats: `(?:a{1000}){1000}`
holds a million nodes (270 MB), and 30 bytes of nested counts reach tens of gigabytes
before `compile` returns, which no timeout can stop. So a user's pattern is measured first,
from its text: each atom weighs one, a counted repeat multiplies what it repeats by its
largest count, and the whole must stay under MAX_WEIGHT. An unbounded repeat of a group
made only of repeats, one of them unbounded (`(a+)+`, `(\\w*\\s?)*`), can backtrack
exponentially on a line: matching stops it after a time limit, and `rules check --strict`
warns about it (`(\\S+ )*` is fine: its space is not optional).

The scan reads the `regex` module's syntax only as far as sizes need: escapes (with the
braces of `\\p{..}`, `\\N{..}`, `\\x{..}`), character classes (nested sets too), groups,
alternation and quantifiers. Anything else weighs one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_WEIGHT = 20_000
"""Nodes a compiled pattern may hold (a compiled node costs about 270 bytes: 5 MB)."""
MAX_LENGTH = 10_000
"""Characters of a pattern: a longer one is not a line rule someone wrote."""
_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_BRACED_ESCAPES = frozenset("pPNxog")


@dataclass
class _Group:
    weight: int = 0
    unbounded_inside: bool = False
    """A repeat without an upper bound occurs inside (at any depth)."""
    last: int = 0
    """Weight of the last atom: what a quantifier that follows multiplies."""
    last_unbounded: bool = False
    """The last atom is a group made only of repeats, one of them unbounded."""
    bare: int = 0
    """Atoms without a quantifier: a group with one always consumes something fixed."""
    last_bare: bool = False
    nested: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PatternCost:
    """What scanning a pattern found."""

    weight: int
    nested: tuple[str, ...]
    """Where an unbounded repeat sits inside another (the text of the outer group)."""


def _class_end(pattern: str, i: int) -> int:
    """Index just past the character class starting at pattern[i] == '['."""
    depth, j = 0, i
    j += 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    depth = 1
    while j < len(pattern) and depth:
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        j += 1
    return j


def _escape_end(pattern: str, i: int) -> int:
    """Index just past the escape starting at pattern[i] == '\\'."""
    j = i + 2
    if pattern[i + 1 : i + 2] in _BRACED_ESCAPES and pattern[j : j + 1] in ("{", "<"):
        close = pattern.find("}" if pattern[j] == "{" else ">", j)
        return len(pattern) if close < 0 else close + 1
    return j


def _quantifier(pattern: str, i: int) -> tuple[int, int, bool] | None:
    """(end, factor, unbounded) of a quantifier at pattern[i] (with its lazy `?` or
    possessive `+`), or None when none is there."""
    ch = pattern[i : i + 1]
    if ch in ("*", "+", "?"):
        end, factor, unbounded = i + 1, 1, ch != "?"
    else:
        m = _COUNTED.match(pattern, i)
        if m is None or not (m[1] or m[3]) or len(m[1]) > 9 or len(m[3]) > 9:
            return None if m is None or not (m[1] or m[3]) else (m.end(), 10**9, False)
        low, comma, high = int(m[1] or 0), m[2], m[3]
        unbounded = bool(comma) and not high
        end, factor = m.end(), max(low, int(high or 0), 1) + (1 if unbounded else 0)
    if pattern[end : end + 1] in ("?", "+"):
        end += 1
    return end, factor, unbounded


def cost(pattern: str) -> PatternCost:
    """The pattern's weight and its nested unbounded repeats."""
    stack = [_Group()]
    starts: list[int] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        top = stack[-1]
        if ch == "\\":
            i = _atom(top, _escape_end(pattern, i))
        elif ch == "[":
            i = _atom(top, _class_end(pattern, i))
        elif ch == "(":
            if pattern.startswith("(?#", i):
                close = pattern.find(")", i)
                i = len(pattern) if close < 0 else close + 1
                continue
            stack.append(_Group())
            starts.append(i)
            i += 1
        elif ch == ")" and len(stack) > 1:
            inner = stack.pop()
            start = starts.pop()
            outer = stack[-1]
            _atom(outer, i)
            outer.weight += inner.weight
            outer.last = inner.weight + 1
            outer.last_unbounded = inner.unbounded_inside and not inner.bare
            if outer.last_unbounded:  # `((a+))`: still only repeats, for the group around it
                outer.bare, outer.last_bare = outer.bare - 1, False
            outer.unbounded_inside |= inner.unbounded_inside
            outer.nested += inner.nested
            i = _repeat(outer, pattern, i + 1, pattern[start : i + 1])
        elif ch in "*+?{" and (q := _quantifier(pattern, i)) is not None:
            i = _apply(top, q, None)
        elif ch == "|":
            i += 1
        else:
            i = _atom(top, i + 1)
    while len(stack) > 1:  # unbalanced: compiling will say so
        inner = stack.pop()
        stack[-1].weight += inner.weight
    return PatternCost(stack[0].weight, tuple(stack[0].nested))


def _atom(group: _Group, end: int) -> int:
    group.weight += 1
    group.last, group.last_unbounded = 1, False
    group.bare += 1
    group.last_bare = True
    return end


def _repeat(group: _Group, pattern: str, i: int, text: str) -> int:
    """A quantifier after a group multiplies the group (and may nest repeats)."""
    q = _quantifier(pattern, i)
    if q is None:
        return i
    return _apply(group, q, text)


def _apply(group: _Group, q: tuple[int, int, bool], text: str | None) -> int:
    """Multiply the last atom by a quantifier's factor; note an unbounded repeat of a group
    that holds one."""
    end, factor, unbounded = q
    if group.last_bare:
        group.bare -= 1
        group.last_bare = False
    group.weight += group.last * (factor - 1)
    if unbounded and text is not None and group.last_unbounded:
        group.nested.append(text)
    group.unbounded_inside |= unbounded
    group.last = group.last * factor
    group.last_unbounded = group.last_unbounded or unbounded
    return end


def pattern_problem(pattern: str) -> str | None:
    """Why a pattern is refused before compiling (too long, or too large once its counted
    repeats are expanded), or None."""
    if len(pattern) > MAX_LENGTH:
        return f"is too long ({len(pattern):,} characters, at most {MAX_LENGTH:,})"
    weight = cost(pattern).weight
    if weight > MAX_WEIGHT:
        return (
            f"is too large: its counted repeats expand to about {weight:,} regex nodes "
            f"(at most {MAX_WEIGHT:,}); use an unbounded repeat or a smaller count"
        )
    return None


def pattern_warnings(pattern: str) -> list[str]:
    """Nested unbounded repeats that may backtrack exponentially (`rules check --strict`)."""
    return [
        f"match repeats {group} without bound, and it holds an unbounded repeat with nothing "
        "fixed around it: a line can make this backtrack for a long time (each line is "
        "abandoned after a time limit, and reported)"
        for group in cost(pattern).nested
    ]


def python_re_error(pattern: str) -> str | None:
    """Why Python's own `re` cannot read a pattern the `regex` module compiles (a group
    name used twice, `\\p{..}`, `(?V1)`), or None. The shortcuts (rules.prefilter, the
    quiet lines of read.quiet) work a pattern's literals out with `re`'s parser: a rule
    they cannot read is tried on every line, and no line of any log is quiet any more
    (issue 18: found by accident, once, with a 3x slower triage and no word said)."""
    from msrunwatch.core.compat import sre_parse

    try:
        sre_parse.parse(pattern)
    except Exception as exc:  # re's parser raises re.error and, on odd input, others
        return str(exc) or type(exc).__name__
    return None
