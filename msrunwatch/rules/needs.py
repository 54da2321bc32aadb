"""Everything a match of a rule's pattern needs, not only the literal the prefilter scans for.

The prefilter (rules.prefilter) names a rule for a line when one literal the pattern needs
is there: `loss-nan-logged` is named by every LossMonitor line (`loss is 0.38`), and its
case-blind pattern then costs a search of the whole line (about 125,000 instructions, the
most of what such a line costs). But the pattern needs more than `loss`: its value must be
`nan` or `inf`. Here each alternative of a pattern gives every requirement it has (each
required literal run, and each required alternation of literals); a line that fails one of
them in every alternative cannot match, and the pattern is not searched on it.

It is exact in this sense: a requirement is kept only where `re`'s parse of the pattern
makes it one for every match (a literal run outside any optional or repeated part, an
alternation each of whose branches has one); anything else (classes, repeats, lookarounds,
scoped flags, groups with flags) is left out, which only keeps lines in. A pattern in
syntax `re` reads otherwise than the `regex` module (nested sets, set operations, branch
reset, fuzzy matching) is not analysed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msrunwatch.core.compat import sre_constants as C
from msrunwatch.core.compat import sre_parse as _parser
from msrunwatch.rules.anchored import v1_syntax
from msrunwatch.rules.rulecache import Memo

MIN_NEED = 3
"""Shortest literal kept as a requirement (shorter ones are in most lines)."""
_FUZZY = re.compile(r"\{\s*[A-Za-z]")
"""The `regex` module's fuzzy matching (`(?:x){e<=1}`), which `re`'s parser reads as literal
braces."""

Requirement = tuple[str, ...]
"""Literals one of which a match contains."""
Needs = tuple[tuple[Requirement, ...], ...]
"""Per alternative of the pattern, every requirement it has: a line can match only if it
meets all of one alternative's."""
Folded = tuple[Needs, bool]
"""The needs, and whether they are lower-cased (the pattern ignores case)."""

NEEDS = Memo("needs", limit=4096)
"""The needs by pattern, kept between runs (rules.rulecache): a cold start asks for every
rule's (read.lossonly), and parsing the 240 patterns with `re`'s parser, written in Python,
was a third of a cold `check`."""


def pattern_needs(pattern: str) -> Folded | None:
    """What every match of the pattern contains, or None when nothing worth a test can be
    told (an alternative with no requirement, a pattern not analysed)."""
    return NEEDS.get("needs:" + pattern, lambda: worked_out(pattern))


def worked_out(pattern: str) -> Folded | None:
    """pattern_needs, worked out now from `re`'s parse of the pattern."""
    if v1_syntax(pattern) or _FUZZY.search(pattern):
        return None
    try:
        tree = _parser.parse(pattern)
    except Exception:  # the `regex` dialect has syntax `re` does not parse
        return None
    items = list(tree)
    branches = items[0][1][1] if len(items) == 1 and items[0][0] is C.BRANCH else [items]
    needs = tuple(tuple(_all(branch)) for branch in branches)
    if not all(needs):
        return None
    if not tree.state.flags & re.IGNORECASE:
        return needs, False
    # a literal that is not ASCII may match ASCII text (`ſ` and `s`): left out
    needs = tuple(
        tuple(tuple(x.lower() for x in r) for r in b if all(x.isascii() for x in r)) for b in needs
    )
    return (needs, True) if all(needs) else None


def _all(node: Sequence[tuple[object, object]]) -> list[Requirement]:
    """Every requirement of a sequence: its literal runs and required alternations."""
    found: list[Requirement] = []
    run: list[str] = []
    for op, av in node:
        if op is C.LITERAL:
            run.append(chr(av))  # type: ignore[arg-type]
            continue
        _flush(run, found)
        if op is C.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[index]
            found.extend(_all(av[3]))  # type: ignore[index]
        elif op is C.BRANCH:
            choice = _choice(av[1])  # type: ignore[index]
            if choice:
                found.append(choice)
    _flush(run, found)
    return found


def _flush(run: list[str], found: list[Requirement]) -> None:
    if len(run) >= MIN_NEED:
        found.append(("".join(run),))
    run.clear()


def _choice(branches: Sequence[Sequence[tuple[object, object]]]) -> Requirement:
    """Literals one of which an alternation's match contains: the longest-literal
    requirement of each branch, () if a branch has none."""
    literals: list[str] = []
    for branch in branches:
        needs = _all(branch)
        if not needs:
            return ()
        literals.extend(max(needs, key=lambda r: min(len(x) for x in r)))
    return tuple(dict.fromkeys(literals))


def beyond(needs: Folded | None, alphabet: str) -> bool:
    """Whether no line made only of the characters of `alphabet` can meet the needs: each
    alternative has a requirement none of whose literals such a line can hold (one of
    their characters is not in it). That is may_match's answer for every such line
    (lower-cased when case is ignored, as may_match does with an ASCII line)."""
    if needs is None:
        return False
    alternatives, folded = needs
    chars = set(alphabet.lower() if folded else alphabet)
    return all(
        any(all(not chars.issuperset(x) for x in r) for r in requirements)
        for requirements in alternatives
    )


def may_match(needs: Folded, line: str) -> bool:
    """Whether the line meets every requirement of one alternative (case ignored: on the
    lower-cased line; a line or literal that is not ASCII is left to the pattern, Unicode
    case folding being the engine's)."""
    alternatives, folded = needs
    if folded:
        if not line.isascii():
            return True
        line = line.lower()
    for requirements in alternatives:
        if all(any(x in line for x in r) for r in requirements):
            return True
    return False
