"""Logs written in UTF-16 or UTF-32: told from their first bytes and read as UTF-8.

The readers work on bytes and look for ASCII shapes (`[ERROR]`, `Traceback`): in UTF-16
every other byte is a NUL, nothing matches, and a log whose fault is plain to read (a
Windows tool's redirect, PowerShell's `>`, a log copied through an editor) was silently
"unknown", exit 0. So the head of each file is looked at: a byte-order mark says which
encoding, else NULs at every other byte (or three bytes in four) beside printable ASCII
say UTF-16 (UTF-32) without one. Such a file is decoded as it is read, in any block size,
into the UTF-8 the readers expect; line numbers are the file's own, byte offsets those of
the UTF-8. Everything else is read as bytes, as before (UTF-8, GB18030 lines, and NULs
from a truncated or sparse file, which are no encoding).
"""

from __future__ import annotations

import codecs

PROBE = 4096
"""Bytes of the head looked at when there is no byte-order mark."""
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""The longest first: UTF-32 LE's mark starts with UTF-16 LE's. The `utf-16` and `utf-32`
codecs read the mark, take its byte order and drop it."""
NAMES = {
    "utf-16": "UTF-16",
    "utf-16-le": "UTF-16LE",
    "utf-16-be": "UTF-16BE",
    "utf-32": "UTF-32",
    "utf-32-le": "UTF-32LE",
    "utf-32-be": "UTF-32BE",
}


def detect(head: bytes) -> str | None:
    """The codec of a file that is UTF-16 or UTF-32 (with or without a byte-order mark),
    from its first bytes; None for anything else (read as bytes)."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    probe = head[:PROBE]
    if b"\0" not in probe:
        return None  # every unit _order counts holds a NUL: the common case, at C speed
    for width, codec in ((4, "utf-32"), (2, "utf-16")):
        order = _order(probe, width)
        if order:
            return f"{codec}-{order}"
    return None


def _order(probe: bytes, width: int) -> str | None:
    """`le` or `be` when most code units of this width hold one ASCII byte and NULs."""
    units = [probe[i : i + width] for i in range(0, len(probe) - width + 1, width)]
    if len(units) < 8:
        return None
    zeros = b"\0" * (width - 1)
    little = sum(1 for u in units if u[1:] == zeros and 0 < u[0] < 0x80)
    big = sum(1 for u in units if u[:-1] == zeros and 0 < u[-1] < 0x80)
    if little * 2 >= len(units) and big * 10 <= little:
        return "le"
    if big * 2 >= len(units) and little * 10 <= big:
        return "be"
    return None


def note(path: object, codec: str) -> str:
    """The warning that a log was not bytes read as they are."""
    return f"{path}: {NAMES.get(codec, codec)} text, read as such (converted to UTF-8)"


class Transcoder:
    """Bytes of one encoding in, UTF-8 out, in blocks of any size (a code unit or a
    surrogate pair cut between two blocks is kept for the next); what does not decode
    becomes U+FFFD."""

    def __init__(self, codec: str) -> None:
        self.codec = codec
        self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> bytes:
        return self._decoder.decode(data, final).encode("utf-8", "replace")

    def close(self) -> bytes:
        return self.feed(b"", final=True)
