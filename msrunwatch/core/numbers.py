"""Small numeric helpers shared by every layer (without `statistics`, which costs a cold
start its `random`, `fractions` and `decimal` imports).

Numbers read from logs and configs go through `to_int` and `to_float`: a log line is not
trusted to hold a number Python can convert (a 5,000-digit step raises ValueError in
`int`, `1e999` becomes infinity, and infinity breaks `int()`, JSON and arithmetic), so both
bound the digits and refuse what is not finite, returning None instead of raising.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MAX_DIGITS = 30
"""Digits a number read from text may have: more than any count, size or id a log holds
(2**64 has 20), far fewer than Python's 4,300-digit conversion limit."""
MAX_FLOAT_TEXT = 64
"""Characters a decimal number may have (`-1.2345678901234567e-308` has 24)."""
_ASCII_DIGITS = frozenset("0123456789")
_FLOAT_CHARS = frozenset("0123456789+-.eE")
_SPECIAL = frozenset({"nan", "inf", "infinity"})


def to_int(text: str | None, max_digits: int = MAX_DIGITS) -> int | None:
    """An optionally signed run of ASCII digits as an int, None for anything else.

    `str.isdigit` is not enough: it accepts `²` and other digits `int()` refuses."""
    if not text:
        return None
    body = text[1:] if text[0] in "+-" else text
    if not body or len(body) > max_digits or not _ASCII_DIGITS.issuperset(body):
        return None
    return int(text)


def to_float(text: str | None, special: bool = False) -> float | None:
    """A finite decimal number (`12`, `-3.5`, `1e-3`) as a float, None for anything else:
    infinity (`inf`, or `1e999` that overflows), NaN, hexadecimal, or more characters than
    any real figure prints. With `special`, NaN and infinity are kept: a loss that became
    NaN is news, not noise."""
    if not text or len(text) > MAX_FLOAT_TEXT:
        return None
    word = special and text.lower().lstrip("+-") in _SPECIAL
    if not word and not _FLOAT_CHARS.issuperset(text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if special or math.isfinite(value) else None


def finite(value: float | None) -> float | None:
    """The value when it is a finite number, else None (JSON has no NaN or infinity)."""
    if value is None or not math.isfinite(value):
        return None
    return value


def median(values: Iterable[float]) -> float:
    """The median of a non-empty collection of numbers (the mean of the middle two)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
