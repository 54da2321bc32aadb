"""The per-node watcher's side of a cluster view: its snapshot served at `/facts` on the
metrics port, and written to `--publish DIR` for a central view that reads a shared
directory instead.

The file is replaced whole (a temporary file beside it, renamed over it), on a thread of its
own, at most once per PUBLISH_GAP_S, so a slow shared file system never delays the tick;
the final snapshot is written before the watcher exits, and is the node's post-mortem facts
(`msrunwatch triage DIR` reads it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence

from msrunwatch.core.errors import UsageError
from msrunwatch.drivers.facts import atomic_write, inside, output_path, this_host
from msrunwatch.live.run import LiveRun
from msrunwatch.live.snapshot import Built, Snapshots, Wsgi, facts_app, node_info
from msrunwatch.read.facts import FileRole, Registration

PUBLISH_GAP_S = 0.5
"""Shortest time between two writes of the published file."""
FINAL_WAIT_S = 10.0
"""How long stopping waits for the final snapshot to be written."""


class Publisher:
    """Writes each new snapshot to DIR/<host>.facts.jsonl, replacing the previous one."""

    def __init__(
        self,
        snapshots: Snapshots,
        path: str,
        warn: Callable[[str], None],
        gap_s: float = PUBLISH_GAP_S,
    ) -> None:
        self.snapshots, self.path, self.warn, self.gap_s = snapshots, path, warn, gap_s
        self._stop = threading.Event()
        self._written: str | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="msrunwatch-publish", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.snapshots.fresh.wait()
            if self._stop.is_set():
                return
            self.snapshots.fresh.clear()
            self.write()
            self._stop.wait(self.gap_s)

    def write(self) -> None:
        """Write the newest snapshot if it is not written yet; a failure is one warning
        (again only once it has worked in between)."""
        with self._lock:
            built = self.snapshots.current()
            if built is None or built.etag == self._written:
                return
            try:
                atomic_write(self.path, _lines(built))
            except UsageError as exc:
                if str(exc) != self._failed:
                    self._failed = str(exc)
                    self.warn(f"--publish: {exc}")
                return
            self._written, self._failed = built.etag, None

    def stop(self) -> None:
        """Stop the thread, then write what is newest (the final snapshot) on this one."""
        self._stop.set()
        self.snapshots.fresh.set()
        self._thread.join(FINAL_WAIT_S)
        self.write()


def _lines(built: Built) -> list[str]:
    return built.body.decode("utf-8", "surrogateescape").splitlines()


class NodeSnapshot:
    """The snapshots of one watcher, where they go, and when they are taken."""

    def __init__(
        self,
        live: LiveRun,
        publish: str | None,
        warn: Callable[[str], None],
        host: str | None = None,
    ) -> None:
        self.live = live
        self.host = host or this_host()
        self.snapshots = Snapshots(node_info(self.host, live.targets, live.rules))
        self.table: tuple[Registration, ...] = ()
        """The scheduler's registrations, when this node holds its log (for the metrics)."""
        self.publisher: Publisher | None = None
        if publish:
            path = output_path(publish if publish.endswith("/") else publish + "/", self.host, None)
            _refuse_inside(path, [*live.targets, *live.consoles])
            self.publisher = Publisher(self.snapshots, path, warn)

    def routes(self) -> dict[str, Wsgi]:
        """What the metrics server serves besides /metrics."""
        return {"/facts": facts_app(self.snapshots)}

    def start(self) -> None:
        if self.publisher is not None:
            self.publisher.start()

    def tick(self) -> None:
        """After each tick: a snapshot when the facts changed or the heartbeat is due."""
        files = self.live.current_facts()
        if self.snapshots.offer(files):
            tables = [f.registrations for f, _ in files if f.role is FileRole.SCHEDULER]
            self.table = max(tables, key=len, default=())

    def finish(self) -> None:
        """The final snapshot, written before the watcher exits."""
        self.snapshots.offer(self.live.current_facts(), final=True)
        if self.publisher is not None:
            with contextlib.suppress(Exception):
                self.publisher.stop()


def _refuse_inside(path: str, watched: Sequence[str]) -> None:
    within = inside(path, watched)
    if within is not None:
        raise UsageError(
            f"--publish {path}: inside {within}, which is watched: msrunwatch never writes there"
        )
