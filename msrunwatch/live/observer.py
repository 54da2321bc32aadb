"""File-system events that wake the live engine: new, moved and deleted files, nothing more.

Appends are not events here: at a thousand ranks logging at full speed, inotify raises tens
of thousands of modify events a second, and turning each into a Python object costs more
than the engine's own `stat` of every followed file each tick, which finds the same
growth. The observer (inotify, or the platform's native API) only tells the engine at once
that a file appeared (a worker started) or went, so it is followed from its first line.
`--poll` uses watchdog's polling observer instead, for network file systems (NFS, Lustre,
GPFS) where a file created on another host raises no local event; the engine also lists
the directories itself every few seconds, so a missed event only delays a new file.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from msrunwatch.live.run import DirtySet

STRUCTURE = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
"""The only events subscribed to (the kernel is not even asked for modify events)."""
POLL_INTERVAL_S = 1.0
"""`--poll`: how often the polling observer lists the directories."""
ARRIVAL_CHECK_S = 0.2
"""How often a target that does not exist yet is looked for."""


class Watcher(Protocol):
    """What the commands need of a running observer."""

    def stop(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


class _MarkDirty(FileSystemEventHandler):
    def __init__(self, dirty: DirtySet) -> None:
        self.dirty = dirty

    def on_any_event(self, event: FileSystemEvent) -> None:
        for attr in ("src_path", "dest_path"):
            raw = getattr(event, attr, "")
            if raw:
                path = raw.decode() if isinstance(raw, bytes) else str(raw)
                self.dirty.add(Path(path))


def start(targets: Sequence[str], dirty: DirtySet, poll: bool = False) -> Watcher:
    """Watch each target directory (or a file's directory), recursively.

    When the native observer cannot start (inotify's watch limit reached, say), the
    polling one takes over, with a warning on stderr.
    """
    if not poll:
        try:
            return _start(Observer(), targets, dirty)
        except OSError as exc:
            print(f"msrunwatch: warning: no file events ({exc}); polling instead", file=sys.stderr)
    return _start(PollingObserver(timeout=POLL_INTERVAL_S), targets, dirty)


def _start(observer: BaseObserver, targets: Sequence[str], dirty: DirtySet) -> Watcher:
    handler = _MarkDirty(dirty)
    watched: set[Path] = set()
    for target in targets:
        root = Path(target)
        directory = root if root.is_dir() else root.parent
        if directory.resolve() not in watched and directory.is_dir():
            watched.add(directory.resolve())
            observer.schedule(
                handler, str(directory), recursive=root.is_dir(), event_filter=STRUCTURE
            )
    observer.daemon = True
    observer.start()
    return observer


class Arrival:
    """Targets that may not exist yet (a job script starts the watcher before msrun):
    looked for until they all exist, then watched. `wait_s` None waits for ever."""

    def __init__(
        self,
        targets: Sequence[str],
        dirty: DirtySet,
        poll: bool = False,
        wait_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.targets, self.dirty, self.poll = list(targets), dirty, poll
        self.wait_s, self.clock = wait_s, clock
        self.since = clock()
        self.watcher: Watcher | None = None

    def missing(self) -> list[str]:
        """Targets not there yet; once none is missing, the observer is started."""
        if self.watcher is not None:
            return []
        absent = [t for t in self.targets if not Path(t).exists()]
        if not absent:
            self.watcher = start(self.targets, self.dirty, self.poll)
            self.dirty.add(Path(self.targets[0]))  # list the new directories at once
        return absent

    def expired(self) -> bool:
        """Waited longer than `wait_s` for a missing target."""
        return self.wait_s is not None and self.clock() - self.since > self.wait_s

    def wait(self, stop: threading.Event | None = None) -> bool:
        """Block until every target exists (True), time runs out or `stop` is set (False)."""
        stop = stop or threading.Event()
        while self.missing():
            if self.expired() or stop.wait(ARRIVAL_CHECK_S):
                return False
        return True

    def stop(self) -> None:
        """Stop the observer, if it was started."""
        if self.watcher is not None:
            self.watcher.stop()
