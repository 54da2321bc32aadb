"""Each node as the central view sees it: its newest snapshot, and whether it is reporting.

- reporting: its snapshot is fresh (its watcher takes one at least every 10 s);
- stale: it answers, but its snapshot is older than STALE_AFTER_S (a hung watcher, a shared
  file system that lags); quiet ranks alone never make a node stale;
- blind: nothing came (connection refused, errors, no file), or never anything;
- ended: its watcher stopped and said so in a final snapshot.

A snapshot replaces the node's previous one whole; a failed poll keeps the one held, so a
node that goes blind keeps the faults it showed. Nothing here outlives a restart of the
central view that the nodes do not hold themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from msrunwatch.live.cluster.fetch import NEW, SAME, Got
from msrunwatch.live.cluster.sources import Feed
from msrunwatch.live.snapshot import HEARTBEAT_S
from msrunwatch.read.nodefacts.reader import Stream

REPORTING, STALE, BLIND, ENDED, MISSING = "reporting", "stale", "blind", "ended", "missing"
LIVE_STATES = (REPORTING, STALE, BLIND, ENDED, MISSING)
"""`missing`: the scheduler registered workers on a host no source is for."""
STALE_AFTER_S = 3 * HEARTBEAT_S
BLIND_AFTER = 2
"""Failed polls in a row that make a node blind (a refused connection does at once)."""
MAX_PROBLEMS = 4


@dataclass(frozen=True)
class Held:
    """A feed's newest snapshot."""

    streams: tuple[Stream, ...]
    tag: str | None
    received: float
    """The central view's monotonic clock when it came."""
    age_s: float
    """How old it was then."""
    problems: tuple[str, ...]
    signature: frozenset[tuple[str, ...]]
    """Its files and their hits: a new key is news that cannot wait."""

    @property
    def live(self) -> dict[str, object]:
        node = next((s.node for s in self.streams if s.node), None) or {}
        live = node.get("live")
        return live if isinstance(live, dict) else {}

    @property
    def final(self) -> bool:
        return bool(self.live.get("final"))

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(sorted({s.host for s in self.streams}))


def signature(streams: tuple[Stream, ...]) -> frozenset[tuple[str, ...]]:
    keys: set[tuple[str, ...]] = set()
    for stream in streams:
        for entry in stream.files.values():
            f = entry.facts
            keys.add(("file", stream.host, f.log_dir, f.path))
            keys.update(("hit", stream.host, f.path, h.rule, h.fingerprint) for h in f.hits)
            for parts in entry.more_hits.values():
                keys.update(("hit", stream.host, f.path, h.rule, h.fingerprint) for h in parts)
    return frozenset(keys)


class FeedState:
    """One feed: what it last gave, and when it last answered."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        self.held: Held | None = None
        self.failures = 0
        self.refused = False
        self.error: str | None = None
        self.answered: float | None = None
        self.answered_age: float | None = None
        self.busy = False
        """A fetch of it is still under way (the next poll passes it over)."""

    def took(self, got: Got, now: float) -> bool:
        """What a fetch gave; True when it is news that cannot wait (a new fault or file,
        a file that shrank, the final snapshot)."""
        if got.outcome == NEW and got.reader is not None:
            return self._new(got, now)
        if got.outcome == SAME:
            self.failures, self.refused, self.error = 0, False, None
            self.answered, self.answered_age = now, got.age_s
            return False
        was_blind = self.blind_now()
        self.failures += 1
        self.refused, self.error = got.refused, got.error
        return self.blind_now() and not was_blind

    def _new(self, got: Got, now: float) -> bool:
        assert got.reader is not None
        streams = tuple(got.reader.streams.values())
        problems = tuple(got.reader.problems.lines()[:MAX_PROBLEMS])
        age = got.age_s if got.age_s is not None else 0.0
        held = Held(streams, got.tag, now, age, problems, signature(streams))
        before = self.held
        was_blind = self.blind_now()
        self.held = held
        self.failures, self.refused, self.error = 0, False, None
        self.answered, self.answered_age = now, age
        if before is None or was_blind or held.final != before.final:
            return True
        return bool(held.signature - before.signature) or _shrank(before, held)

    def blind_now(self) -> bool:
        return (
            self.refused
            or self.failures >= BLIND_AFTER
            or (self.held is None and self.failures > 0)
        )

    def age(self, now: float) -> float | None:
        """How old the snapshot held is now (as of the last answer, and time since)."""
        if self.answered is None or self.answered_age is None:
            return None
        return self.answered_age + max(now - self.answered, 0.0)

    def state(self, now: float) -> tuple[str, str]:
        """The node's state, and why."""
        if self.blind_now():
            had = " (its last snapshot is kept)" if self.held is not None else ""
            return BLIND, f"{self.error or 'no answer'}{had}"
        if self.held is None:
            return BLIND, "no snapshot yet" if self.answered is None else "no snapshot"
        if self.held.final:
            return ENDED, "its watcher stopped (final snapshot)"
        age = self.age(now)
        if age is not None and age > STALE_AFTER_S:
            return STALE, f"its newest snapshot is {age:,.0f} s old (its watcher may hang)"
        return REPORTING, ""


def _shrank(before: Held, after: Held) -> bool:
    """A file smaller than before: truncated (a new run)."""
    sizes = {
        (s.host, e.facts.log_dir, e.facts.path): e.facts.size
        for s in before.streams
        for e in s.files.values()
    }
    return any(
        e.facts.size < sizes.get((s.host, e.facts.log_dir, e.facts.path), 0)
        for s in after.streams
        for e in s.files.values()
    )
