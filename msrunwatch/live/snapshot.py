"""A node's facts, live: the snapshot `GET /facts` serves and `--publish DIR` writes.

The per-node watcher already holds every file's facts; here they become the stream
`msrunwatch facts` writes (read.nodefacts.write), with what only a live watcher knows: when
each file last grew and the node's clocks at that instant (the `node` record's `live`), so
a central view (`watch --cluster`) can tell how long a rank has been quiet without comparing
two machines' clocks. Each snapshot is whole (a stream of its own, `end` last) and replaces
the node's previous one. The tick thread takes one when the facts changed, and at least every
HEARTBEAT_S even when nothing did, so a watcher whose loop hangs goes stale; the last one,
taken as the watcher stops, says `final`.
"""

from __future__ import annotations

import calendar
import operator
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from msrunwatch import __version__
from msrunwatch.drivers.facts import utc_offset_s
from msrunwatch.read.facts import FileFacts
from msrunwatch.read.nodefacts.write import NodeInfo, Stream, new_stream, rules_digest
from msrunwatch.rules.model import Rule

HEARTBEAT_S = 10.0
"""A snapshot is taken at least this often, changed or not: its age tells a hung watcher."""
AGE_HEADER = "X-Msrunwatch-Age"
"""Seconds since the snapshot served was taken (the watcher's own monotonic clock)."""
CONTENT_TYPE = "application/x-ndjson; charset=utf-8"

Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def log_clock(wall: float) -> float:
    """A wall-clock instant on the logs' clock: the local time, read as if it were UTC (how
    the read layer reads a GLOG timestamp)."""
    whole = int(wall)
    return calendar.timegm(time.localtime(whole)) + (wall - whole)


def node_info(host: str, targets: Sequence[str], rules: Sequence[Rule]) -> NodeInfo:
    """Who the snapshots come from (the `node` record, without its `live` part)."""
    return NodeInfo(
        host=host,
        log_dirs=tuple(targets),
        version=__version__,
        rules_digest=rules_digest(rules),
        tz_offset_s=utc_offset_s(),
    )


@dataclass(frozen=True)
class Moment:
    """What the live engine held at one tick."""

    facts: tuple[FileFacts, ...]
    grew: tuple[float | None, ...]
    """When each file last grew (the node's wall clock), None when not known."""
    wall_s: float
    taken: float
    """The watcher's monotonic clock."""
    final: bool = False


@dataclass(frozen=True)
class Built:
    """One snapshot as bytes, with its ETag (the stream id: one per snapshot)."""

    body: bytes
    etag: str
    taken: float


class Snapshots:
    """The node's snapshots: the tick thread offers what the engine holds; HTTP threads and
    the publisher take the newest, built once."""

    def __init__(
        self,
        node: NodeInfo,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self.node = node
        self.wall, self.monotonic, self.heartbeat_s = wall, monotonic, heartbeat_s
        self._base = new_stream()
        self._lock = threading.Lock()
        self._moment: Moment | None = None
        self._seq = 0
        self._built: Built | None = None
        self.fresh = threading.Event()
        """Set when a snapshot was taken (the publisher waits on it)."""

    def offer(self, files: Sequence[tuple[FileFacts, float | None]], final: bool = False) -> bool:
        """Take a snapshot when the facts changed (the engine replaces a file's facts when it
        read more of it), the last one is HEARTBEAT_S old, or this is the final one."""
        facts = tuple(f for f, _ in files)
        grew = tuple(g for _, g in files)
        now = self.monotonic()
        last = self._moment
        if last is not None and last.final:
            return False
        if last is not None and not final and now - last.taken < self.heartbeat_s:
            same = len(facts) == len(last.facts) and all(map(operator.is_, facts, last.facts))
            if same:
                return False
        moment = Moment(facts, grew, self.wall(), now, final)
        with self._lock:
            self._moment, self._built = moment, None
            self._seq += 1
        self.fresh.set()
        return True

    def current(self) -> Built | None:
        """The newest snapshot, None before the first."""
        with self._lock:
            if self._built is None and self._moment is not None:
                self._built = self._build(self._moment, self._seq)
            return self._built

    def age(self, built: Built) -> float:
        return max(self.monotonic() - built.taken, 0.0)

    def _build(self, moment: Moment, seq: int) -> Built:
        stream = f"{self._base}.{seq:08d}"
        live = {
            "seq": seq,
            "final": moment.final,
            "wall_s": round(moment.wall_s, 3),
            "log_s": round(log_clock(moment.wall_s), 3),
        }
        stamp = datetime.fromtimestamp(moment.wall_s, timezone.utc).isoformat(timespec="seconds")
        node = replace(self.node, collected_at_utc=stamp, live=live)
        lines = Stream(node, stream).lines(moment.facts, None, moment.grew)
        body = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
        return Built(body, f'"{stream}"', moment.taken)


def facts_app(snapshots: Snapshots) -> Wsgi:
    """`GET /facts`: the newest snapshot, 304 when the client has it (If-None-Match), with
    its age; 503 before the first one."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
            return [b""]
        built = snapshots.current()
        if built is None:
            start_response("503 Service Unavailable", [("Retry-After", "1")])
            return [b"no snapshot yet\n"]
        headers = [
            ("ETag", built.etag),
            (AGE_HEADER, f"{snapshots.age(built):.3f}"),
            ("Cache-Control", "no-cache"),
        ]
        wanted = environ.get("HTTP_IF_NONE_MATCH", "")
        if built.etag in (tag.strip() for tag in wanted.split(",")):
            start_response("304 Not Modified", headers)
            return [b""]
        start_response(
            "200 OK",
            [*headers, ("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(built.body)))],
        )
        return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else built.body]

    return app
