"""One node's snapshot, fetched: over HTTP from its watcher, or read from a shared directory.

Everything that arrives is hostile: an answer is read in chunks, line by line, into a fresh
FactsReader (which checks every record against the schema), at most `max_bytes` of it and
only until its deadline; a server that trickles, sends without end or answers with huge
lines costs at most that time and memory, and is named in the error. The poller closes the
connection of a fetch still running at the poll's deadline, so no fetch outlives it.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from msrunwatch.core.fileio import open_regular
from msrunwatch.live.snapshot import AGE_HEADER
from msrunwatch.read.nodefacts.reader import MAX_LINE, FactsReader

CHUNK = 64 << 10
NEW, SAME, FAILED = "new", "same", "failed"


@dataclass(frozen=True)
class Got:
    """What one fetch gave."""

    outcome: str
    """new (a snapshot, read), same (the one held is still current) or failed."""
    reader: FactsReader | None = None
    tag: str | None = None
    """ETag (HTTP), or the file's identity and change time."""
    age_s: float | None = None
    """How old the snapshot was when it came (its watcher's word, or the file's time)."""
    error: str | None = None
    refused: bool = False
    """Nothing listens there: the watcher is gone (not merely slow)."""
    size: int = 0


class Aborts:
    """The connections of fetches under way, so the poller can close those still running
    at the poll's deadline."""

    def __init__(self) -> None:
        self._open: dict[int, socket.socket] = {}
        self._lock = threading.Lock()

    def hold(self, key: int, sock: socket.socket | None) -> None:
        with self._lock:
            if sock is None:
                self._open.pop(key, None)
            else:
                self._open[key] = sock

    def abort_all(self) -> None:
        with self._lock:
            socks = list(self._open.values())
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _TooLong(Exception):
    pass


def _feed(reader: FactsReader, chunks: Iterator[bytes], label: str, max_bytes: int) -> int:
    """Lines of the chunks into the reader; a line over MAX_LINE is passed over (counted)."""
    pending = b""
    skipping = False
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise _TooLong(f"answer over {max_bytes >> 20} MiB (not read further)")
        pending += chunk
        *whole, pending = pending.split(b"\n")
        for line in whole:
            if skipping:
                skipping = False
                continue
            reader.line(line, label)
        if len(pending) > MAX_LINE:
            reader.problems.add(f"lines over {MAX_LINE >> 20} MiB (not read)")
            pending, skipping = b"", True
    if pending and not skipping:
        reader.line(pending, label)
    return total


def _chunks(
    read: Callable[[int], bytes], deadline: float, sock: socket.socket | None = None
) -> Iterator[bytes]:
    """Chunks until the end, each read waiting at most until the deadline."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if sock is not None:
            sock.settimeout(left)
        data = read(CHUNK)
        if not data:
            return
        yield data


def fetch_url(
    url: str,
    tag: str | None,
    timeout_s: float,
    max_bytes: int,
    aborts: Aborts | None = None,
) -> Got:
    """GET a watcher's /facts (If-None-Match: the snapshot held)."""
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    deadline = time.monotonic() + timeout_s
    conn = kind(parts.hostname or "", parts.port, timeout=timeout_s)
    key = id(conn)
    try:
        conn.connect()
        sock = conn.sock
        if aborts is not None:
            aborts.hold(key, sock)
        headers = {"Accept": "application/x-ndjson", "Connection": "close"}
        if tag:
            headers["If-None-Match"] = tag
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", target, None, headers)
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        resp = conn.getresponse()
        age = _age(resp.getheader(AGE_HEADER))
        if resp.status == 304:
            return Got(SAME, tag=tag, age_s=age)
        if resp.status != 200:
            return Got(FAILED, error=f"HTTP {resp.status} {resp.reason}"[:120], age_s=age)
        reader = FactsReader()
        size = _feed(reader, _chunks(resp.read1, deadline, sock), url, max_bytes)
        return Got(NEW, reader, resp.getheader("ETag"), age, size=size)
    except ConnectionRefusedError:
        return Got(FAILED, error="connection refused (no watcher there)", refused=True)
    except _TooLong as exc:
        return Got(FAILED, error=str(exc))
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return Got(FAILED, error=_why(exc, timeout_s))
    finally:
        if aborts is not None:
            aborts.hold(key, None)
        conn.close()


def read_file(path: str, tag: str | None, timeout_s: float, max_bytes: int) -> Got:
    """A published snapshot file; read again only when it changed (it is replaced whole)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return Got(FAILED, error=f"cannot read: {exc.strerror or exc}")
    now = f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"
    age = max(time.time() - st.st_mtime, 0.0)
    if now == tag:
        return Got(SAME, tag=tag, age_s=age)
    reader = FactsReader()
    try:
        if path.endswith(".gz"):
            reader.read_path(path)
            size = st.st_size
        else:
            with open(open_regular(path), "rb") as fh:
                size = _feed(
                    reader, _chunks(fh.read, time.monotonic() + timeout_s), path, max_bytes
                )
    except _TooLong as exc:
        return Got(FAILED, error=str(exc))
    except OSError as exc:
        return Got(FAILED, error=f"cannot read: {exc.strerror or exc}")
    return Got(NEW, reader, now, age, size=size)


def _age(value: str | None) -> float | None:
    try:
        age = float(value) if value is not None else None
    except ValueError:
        return None
    return age if age is not None and 0 <= age < 1e9 else None


def _why(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return f"no whole answer within {timeout_s:g} s"
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text[:160]
