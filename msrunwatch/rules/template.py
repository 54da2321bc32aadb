"""Message templates (`{name}` placeholders) and the fingerprint that groups findings.

Templates come from user rule files, so they are filled by a tiny substitution, not by
`str.format`, which would let a template reach attributes of the values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


def template_fields(template: str) -> list[str]:
    """The placeholder names a template uses, in order."""
    return [m[1] for m in _FIELD.finditer(template) if m[1]]


def rank_ranges(ranks: Iterable[int]) -> str:
    """`0-3, 5, 7-8`: a compact list of rank numbers."""
    out: list[str] = []
    items = sorted(set(ranks))
    start = prev = None
    for r in [*items, None]:
        if r is not None and prev is not None and r == prev + 1:
            prev = r
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = r
    return ", ".join(out)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        if items and all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return rank_ranges(items)
        return ", ".join(_text(v) for v in items)
    return str(value)


def render(template: str, values: Mapping[str, object]) -> str:
    """Fill `{name}` from values; `{{` and `}}` are literal braces; a missing name is empty."""

    def fill(m: re.Match[str]) -> str:
        if m[0] == "{{":
            return "{"
        if m[0] == "}}":
            return "}"
        return _text(values.get(m[1]))

    return _FIELD.sub(fill, template)


def fingerprint(rule_id: str, message: str) -> str:
    """Group key: the rule and its message with numbers and addresses masked.

    Ranks, pids, sizes, steps and addresses differ between ranks that hit the same
    fault, so they must not split a group.
    """
    return rule_id + "|" + _VOLATILE.sub("#", message)
