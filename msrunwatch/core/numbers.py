"""Small numeric helpers shared by every layer (without `statistics`, which costs a cold
start its `random`, `fractions` and `decimal` imports)."""

from __future__ import annotations

from collections.abc import Iterable


def median(values: Iterable[float]) -> float:
    """The median of a non-empty collection of numbers (the mean of the middle two)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
