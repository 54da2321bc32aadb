"""How a value reads in a message: the one writing that a `{placeholder}` and text joined to
a value (`"no log for rank(s) " + ranks`) share, so a figure never reads two ways."""

from __future__ import annotations

from collections.abc import Iterable


def number_text(value: int | float) -> str:
    """A number as a message shows it: `3`, `0.25`, `1e+20` (ten significant digits)."""
    return f"{value:.10g}" if isinstance(value, float) else str(value)


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


def shown(value: object) -> str:
    """`2-3` for a list of numbers, `a, b` for other lists, `true`, `0.25`; None is empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if items and all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return rank_ranges(items)
        return ", ".join(shown(v) for v in items)
    return str(value)
