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
from collections.abc import Sequence
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
