"""Timestamps as MindSpore, MindFormers and Megatron print them, as float seconds.

Log times are local wall-clock times without a zone; they are kept as seconds on a
naive UTC scale so that they order and subtract correctly, and printed back unchanged.
"""

from __future__ import annotations

import calendar
import time
from datetime import UTC, datetime

import regex

_GLOG = regex.compile(
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)-(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"\.(?P<a>\d{1,3})\.(?P<b>\d{0,3})"
)
_ISO = regex.compile(
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<frac>\d{1,6}))?"
)


def _seconds(y: str, mo: str, d: str, h: str, mi: str, s: str) -> float | None:
    try:
        parts = (int(y), int(mo), int(d), int(h), int(mi), int(s))
        return float(calendar.timegm((*parts, 0, 0, 0)))
    except (ValueError, OverflowError):
        return None


_SECONDS: dict[str, float] = {}
"""Parsed `YYYY-MM-DD-HH:MM:SS` prefixes: lines of one second share it."""


def parse_glog(text: str) -> float | None:
    """Parse `2026-11-21-05:14:07.539.394`, tolerating Python's `.310.00` quirk.

    MindSpore's Python formatter prints `msecs * 1000` as digits split after the third,
    so `.310.00` is 31 ms and `.500.0` is 5 ms: the two groups joined are microseconds.
    """
    base = _SECONDS.get(text[:19])
    if base is not None and text[19:20] == ".":
        a, dot, b = text[20:27].partition(".")
        digits = a + b
        if dot and 0 < len(a) <= 3 and len(b) <= 3 and digits.isdigit():
            return base + min(int(digits), 999_999) / 1e6
    return _parse_glog_slow(text)


def _parse_glog_slow(text: str) -> float | None:
    m = _GLOG.match(text)
    if m is None:
        return None
    base = _seconds(m["y"], m["mo"], m["d"], m["h"], m["mi"], m["s"])
    if base is None:
        return None
    if len(_SECONDS) > 4096:
        _SECONDS.clear()
    _SECONDS[text[:19]] = base
    micros = int(str(m["a"]) + str(m["b"]))
    return base + min(micros, 999_999) / 1e6


def parse_iso(text: str) -> float | None:
    """Parse `2025-04-07 15:34:29,173` (MindFormers) or `2025-08-01 07:19:37` (Megatron)."""
    m = _ISO.search(text)
    if m is None:
        return None
    base = _seconds(m["y"], m["mo"], m["d"], m["h"], m["mi"], m["s"])
    if base is None:
        return None
    frac: str = m["frac"] or "0"
    return base + int(frac) / 10.0 ** len(frac)


def iso(seconds: float | None) -> str | None:
    """Format log seconds as ISO 8601 with microseconds, no zone (the log's local time)."""
    if seconds is None:
        return None
    return (
        datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
    )


def clock(seconds: float | None) -> str:
    """Short `HH:MM:SS.mmm` for terminal tables."""
    if seconds is None:
        return "-"
    whole = time.gmtime(seconds)
    millis = int((seconds - int(seconds)) * 1000)
    return time.strftime("%H:%M:%S", whole) + f".{millis:03d}"
