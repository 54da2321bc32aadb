"""A cache of per-line answers whose memory stays bounded whatever a log holds.

Real logs repeat a few hundred messages (each with its own time), so remembering what a
line gave saves most of the work; a hostile log of distinct or huge lines must not grow
the cache: it holds at most MEMO entries, of keys up to MEMO_LINE long (8 MiB of keys),
and starts afresh when full.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from typing import Generic, TypeVar

MEMO = 8192
"""Entries remembered before the cache starts afresh."""
MEMO_LINE = 1024
"""Only keys up to this long are remembered."""

K = TypeVar("K", bound=Sized)
V = TypeVar("V")


class LineMemo(Generic[K, V]):
    """`answer(key, compute)`: the remembered answer for key, else compute(key), kept when
    the key is short enough."""

    def __init__(self) -> None:
        self._known: dict[K, V] = {}

    def answer(self, key: K, compute: Callable[[K], V]) -> V:
        known = self._known.get(key)
        if known is None:
            known = compute(key)
            if len(key) <= MEMO_LINE:
                if len(self._known) >= MEMO:
                    self._known.clear()
                self._known[key] = known
        return known
