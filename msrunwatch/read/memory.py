"""The device-memory summary block, assembled from its un-prefixed lines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from msrunwatch.core.numbers import to_float
from msrunwatch.read import patterns as P
from msrunwatch.read.facts import MemorySummary

_MIB = 1024 * 1024
MAX_MIB = 1 << 40
"""A size beyond this (an exbibyte, in MiB) is no device's: the value is unknown."""


def _mib(value: str) -> int | None:
    """`65536M` -> 65536; `64G` -> 65536; a bare number is bytes (the oldest format).
    What is not a finite number of sensible length (`infM`, `1e999M`), or is more than any
    device holds (`1.7e302M`), is unknown."""
    unit = value[-1:].upper()
    parsed = to_float(value[:-1] if unit in ("M", "G", "K") else value)
    if parsed is None:
        return None
    number = int(parsed)
    if unit == "G":
        mib = number * 1024
    elif unit == "K":
        mib = number // 1024
    elif unit == "M":
        mib = number
    else:
        mib = number // _MIB
    return mib if abs(mib) <= MAX_MIB else None


class MemoryBlock:
    """Collects the five summary lines; keeps the last complete block."""

    def __init__(self) -> None:
        self.summary: MemorySummary | None = None
        self._fields: dict[str, int | str | None] = {}
        self._line = 0
        self._time: float | None = None

    def feed(self, text: str, lineno: int, when: Callable[[], float | None]) -> bool:
        """Take a line if it belongs to a summary block; True when it did."""
        if not text.startswith(("Device ", "MindSpore ", "Used peak", "Actual peak", "[MS_RUN")):
            return False
        m = P.MEMORY_LINE.match(text)
        if m is None:
            return P.TEARDOWN.could_match(text)
        name = P.MEMORY_FIELDS[m["key"]]
        if name == "device_mb" and self._fields:
            self.close()
        if not self._fields:
            self._line, self._time = lineno, when()
        value = m["value"]
        self._fields[name] = value if name == "base_address" else _mib(value)
        if name == "peak_actual_mb":
            self.close()
        return True

    def close(self) -> None:
        """Settle the block being read, complete or not."""
        if not self._fields:
            return
        f = self._fields

        def number(key: str) -> int | None:
            value = f.get(key)
            return value if isinstance(value, int) else None

        base = f.get("base_address")
        self.summary = MemorySummary(
            device_mb=number("device_mb"),
            used_mb=number("used_mb"),
            base_address=base if isinstance(base, str) else None,
            peak_used_mb=number("peak_used_mb"),
            peak_actual_mb=number("peak_actual_mb"),
            line=self._line,
            time=self._time,
        )
        self._fields = {}

    @property
    def open(self) -> bool:
        """A block is being read (a reader of the next lines would have to continue it)."""
        return bool(self._fields)

    def absorb(self, later: MemoryBlock, shift: int) -> None:
        """Continue with what a reader of the rest of the file (lines `shift` on) found;
        this block must not be open (see Extractor.clean)."""
        if later.summary is not None:
            self.summary = replace(later.summary, line=later.summary.line + shift)
        self._fields, self._time = dict(later._fields), later._time
        self._line = later._line + shift
