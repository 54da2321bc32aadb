"""File-system events that wake the live engine: watchdog marks paths dirty, nothing more.

inotify (or the platform's native API) tells which files changed, so a tick reads only
those; `--poll` uses watchdog's polling observer for network file systems (NFS, Lustre,
GPFS), where a write on another host raises no local event. Either way the engine also
stats every file on its own every second, so a missed event only delays a line, and the
handler does no I/O on the observer's thread.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from msrunwatch.live.run import DirtySet

POLL_INTERVAL_S = 0.5


class _MarkDirty(FileSystemEventHandler):
    def __init__(self, dirty: DirtySet) -> None:
        self.dirty = dirty

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        for attr in ("src_path", "dest_path"):
            raw = getattr(event, attr, "")
            if raw:
                path = raw.decode() if isinstance(raw, bytes) else str(raw)
                self.dirty.add(Path(path))


def start(targets: Sequence[str], dirty: DirtySet, poll: bool = False) -> BaseObserver:
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


def _start(observer: BaseObserver, targets: Sequence[str], dirty: DirtySet) -> BaseObserver:
    handler = _MarkDirty(dirty)
    watched: set[Path] = set()
    for target in targets:
        root = Path(target)
        directory = root if root.is_dir() else root.parent
        if directory.resolve() not in watched and directory.is_dir():
            watched.add(directory.resolve())
            observer.schedule(handler, str(directory), recursive=root.is_dir())
    observer.daemon = True
    observer.start()
    return observer
