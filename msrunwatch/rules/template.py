"""Message templates and the fingerprint that groups findings.

A placeholder is a name (`{kernel}`) or a condition-language expression
(`{world // (tp * pp * cp)}`); `{{` and `}}` are literal braces. Templates come from user
rule files, so they are filled by this small substitution and the safe expression
language, never by `str.format`, which would let a template reach attributes of values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from msrunwatch.core.errors import ExprError
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.shown import rank_ranges as rank_ranges  # re-exported: the judge names ranks
from msrunwatch.rules.shown import shown

_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


def template_fields(template: str) -> list[str]:
    """The placeholders of a template (names or expressions), in order."""
    return [m[1] for m in _FIELD.finditer(template) if m[1]]


def template_names(template: str) -> frozenset[str] | None:
    """Every variable a template reads, or None when a placeholder does not compile (it
    renders empty, reading nothing, but say so: the caller then assumes the worst)."""
    names: set[str] = set()
    for field in template_fields(template):
        if _NAME.fullmatch(field.strip()):
            names.add(field.strip())
            continue
        try:
            names |= _compiled(field).names
        except ExprError:
            return None
    return frozenset(names)


def check_template(template: str, names: set[str] | None, key: str = "message") -> str | None:
    """Why a template (the rule's `key`: message, hint, why) cannot be filled from these
    names, or None when it can."""
    for field in template_fields(template):
        if _NAME.fullmatch(field.strip()):
            if names is not None and field.strip() not in names:
                return f"{key} uses unknown name {field.strip()!r}"
            continue
        try:
            Expr(field, names)
        except ExprError as exc:
            return f"{key} placeholder {{{field}}}: {exc}"
    return None


@lru_cache(maxsize=512)
def _compiled(source: str) -> Expr:
    return Expr(source)


def rank_name(rank: int) -> str:
    """`rank 3`; a log whose rank is not known is `the log`. Such a log (standard input, one
    file whose name and lines name no rank) has a negative number (-1, -2, ... one per log),
    and `rank -1` reads as a rank that exists."""
    return f"rank {rank}" if rank >= 0 else "the log"


def ranks_phrase(ranks: Iterable[int]) -> str:
    """`rank 3`, `ranks 0-3, 5`; logs of unknown rank (negative numbers, see rank_name) as
    `the log`, or `2 logs of unknown rank` beside others."""
    items = sorted(set(ranks))
    known = [r for r in items if r >= 0]
    unknown = len(items) - len(known)
    if unknown == 1 and not known:
        return "the log"
    parts = [f"{'rank' if len(known) == 1 else 'ranks'} {rank_ranges(known)}"] if known else []
    if unknown:
        parts.append(f"{unknown} log{'s' if unknown > 1 else ''} of unknown rank")
    return " and ".join(parts)


def render(template: str, values: Mapping[str, object]) -> str:
    """Fill `{name}` from values; `{{` and `}}` are literal braces; a missing name is empty."""

    def fill(m: re.Match[str]) -> str:
        if m[0] == "{{":
            return "{"
        if m[0] == "}}":
            return "}"
        field = m[1].strip()
        if _NAME.fullmatch(field):
            return shown(values.get(field))
        try:
            return shown(_compiled(field)(values))
        except ExprError:
            return ""

    return _FIELD.sub(fill, template)


def fingerprint(rule_id: str, message: str) -> str:
    """Group key: the rule and its message with numbers and addresses masked.

    Ranks, pids, sizes, steps and addresses differ between ranks that hit the same
    fault, so they must not split a group.
    """
    return rule_id + "|" + _VOLATILE.sub("#", message)
