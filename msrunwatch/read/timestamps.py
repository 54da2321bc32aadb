"""Timestamps as MindSpore, MindFormers and Megatron print them, as float seconds.

Log times are local wall-clock times without a zone; they are kept as seconds on a
naive UTC scale so that they order and subtract correctly, and printed back unchanged.
"""

from __future__ import annotations

import calendar
import time
from datetime import datetime, timezone

from msrunwatch.core.numbers import to_int
from msrunwatch.rules.programs import regex_compiled

_GLOG = (
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)-(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"\.(?P<a>\d{1,3})\.(?P<b>\d{0,3})"
)
_ISO = (
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<frac>\d{1,6}))?"
)
"""The two stamps, `regex` patterns compiled on first use through rules.programs."""


YEARS = (1900, 2999)
"""Years a log line may carry: anything else is a corrupt or forged stamp, left undated
(and every date in range prints back as ISO 8601)."""


def _seconds(y: str, mo: str, d: str, h: str, mi: str, s: str) -> float | None:
    """Seconds of a wall-clock time, None for an impossible one: day 99 of a month is not
    rolled into the next month, it is undated."""
    parts = [to_int(part) for part in (y, mo, d, h, mi, s)]
    if None in parts:
        return None
    year, month, day, hour, minute, second = (p or 0 for p in parts)
    if not YEARS[0] <= year <= YEARS[1]:
        return None
    try:
        datetime(year, month, day, hour, minute, min(second, 59))  # 60: a leap second
    except ValueError:
        return None
    return float(calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)))


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
        if dot and 0 < len(a) <= 3 and len(b) <= 3 and digits.isascii() and digits.isdigit():
            return base + min(int(digits), 999_999) / 1e6
    return _parse_glog_slow(text)


def _parse_glog_slow(text: str) -> float | None:
    m = regex_compiled(_GLOG).match(text)
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
    m = regex_compiled(_ISO).search(text)
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
    try:
        moment = datetime.fromtimestamp(seconds, timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None  # not a time any log line gives: parsing bounds the years
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds")


def clock(seconds: float | None) -> str:
    """Short `HH:MM:SS.mmm` for terminal tables."""
    if seconds is None or iso(seconds) is None:
        return "-"
    whole = time.gmtime(seconds)
    millis = int((seconds - int(seconds)) * 1000)
    return time.strftime("%H:%M:%S", whole) + f".{millis:03d}"
