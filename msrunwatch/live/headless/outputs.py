"""What a watcher makes of each engine update besides a screen: the event lines, the
Prometheus metrics (and this node's /facts snapshot, --publish) and --on-finding.

The headless loop (`loop.Headless`) and the live view both feed it the engine's updates, so
`--events`, `--metrics-port`, `--publish` and `--on-finding` mean the same in both: the same
events in the same order, the same metrics, the hook once per cause. What differs is where
a line for a person goes (`err`: stderr headless, the view's notifications under the TUI)
and whether events go to stdout when no FILE is given (headless only: stdout is the view's).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from typing import Any, TextIO

from prometheus_client import CollectorRegistry

from msrunwatch import __version__
from msrunwatch.core.sanitize import terminal
from msrunwatch.judge.model import Finding, Report
from msrunwatch.live.headless.events import EventStream, relabel_time
from msrunwatch.live.headless.hooks import HOOK_TIMEOUT_S, Hook, cause_finding
from msrunwatch.live.headless.httpserve import Server
from msrunwatch.live.headless.metrics import RunCollector, Snapshot, serve
from msrunwatch.live.headless.options import HeadlessOptions
from msrunwatch.live.publish import NodeSnapshot
from msrunwatch.live.run import Engine, LiveRun, Update
from msrunwatch.report import jsonout

CAUSES = frozenset({"root-cause", "cause"})
"""Roles that run --on-finding: a rank's own fault, not the timeouts and kills it caused."""


class Outputs:
    """Events, metrics, the node's snapshot and the hook, driven by `publish(update)`:
    `start()` first (a usage error for a port in use, an --events FILE in a watched
    directory), `finish()` for the done event, `close()` last."""

    def __init__(
        self,
        live: Engine,
        options: HeadlessOptions,
        out: TextIO | None = None,
        err: TextIO | None = None,
        hook_timeout_s: float = HOOK_TIMEOUT_S,
        collector: RunCollector | None = None,
        events_to_stdout: bool = True,
        say_warnings: bool = True,
    ) -> None:
        self.live, self.options = live, options
        self.clock = live.clock
        self.err = err or sys.stderr
        self._given_out = out
        self._events_to_stdout = events_to_stdout
        """Without --events FILE, events go to stdout (headless), or nowhere (the view)."""
        self._say_warnings = say_warnings
        """A problem reading the run is also a line on `err` (headless; the view shows it)."""
        self.events = EventStream(self.clock, self.err)
        self._hook_timeout_s = hook_timeout_s
        self.hook: Hook | None = None
        self.collector = collector or RunCollector(self.clock)
        self.registry = CollectorRegistry()
        self.registry.register(self.collector)
        self.server: Server | None = None
        self.metrics_url: str | None = None
        self.report: Report | None = None
        self._bytes = 0
        self._silence: dict[int, float] = {}
        self._silence_at = 0.0
        self._cause: tuple[Any, ...] | None = None
        self._announced: set[tuple[str, str]] = set()
        self._nodes: dict[str, str] = {}
        """Each node's live state as last announced (the cluster view)."""
        self._ranks_before: dict[tuple[str, str], frozenset[int]] = {}
        """Each finding's ranks in the last report: a finding is news when it has more."""
        self._caught_up = False
        self._warned: set[str] = set()
        self._started = False
        self.node: NodeSnapshot | None = None
        """This node's facts snapshot (/facts, --publish), for a central `watch --cluster`."""
        if isinstance(live, LiveRun) and (options.metrics_port is not None or options.publish):
            warn = lambda line: self._stderr(f"msrunwatch: warning: {terminal(line)}")  # noqa: E731
            self.node = NodeSnapshot(live, options.publish, warn)

    # -- setup and teardown

    def start(self) -> None:
        """Open the event stream, serve metrics and write the start event."""
        from msrunwatch.core.errors import UsageError

        if self._started:
            return
        self._started = True
        watched = (*self.live.targets, *self.live.consoles)
        events = self.options.events
        if self._given_out is not None or events or self._events_to_stdout:
            self.events.open(self._given_out, events, watched, UsageError)
        port = self.options.metrics_port
        if port is not None:
            self._serve_metrics(port, UsageError)
        if self.node is not None:
            self.node.start()
        command = self.options.on_finding
        if command:
            self.hook = Hook(command, self.err, self._hook_timeout_s)
        self.events.emit(
            "start",
            targets=list(self.live.targets),
            consoles=list(self.live.consoles),
            version=__version__,
            host=socket.gethostname(),
            pid=os.getpid(),
            poll=self.options.poll,
            metrics=self.metrics_url,
            **({"cluster": cluster} if (cluster := getattr(self.live, "cluster", None)) else {}),
        )

    def _serve_metrics(self, port: Any, usage_error: type[Exception]) -> None:
        """Serve --metrics-port on --metrics-addr; a port in use is a usage error."""
        addr = self.options.metrics_addr
        try:
            routes = self.node.routes() if self.node is not None else None
            self.server, self.metrics_url = serve(self.registry, addr, int(port), routes)
        except OSError as exc:
            raise usage_error(
                f"cannot serve metrics on {addr}:{port}: {exc.strerror or exc}"
            ) from None

    def close(self, wait_for_hooks: bool = True) -> None:
        """Write the final snapshot, stop the metrics server and the hook, close an events
        file."""
        if self.node is not None:
            self.node.finish()
        if self.hook is not None:
            self.hook.close(wait_for_hooks)
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        self.events.close()

    def finish(self, code: int, reason: str, error: str | None = None) -> None:
        """The done event: outcome, exit code, why, and the ranks per status."""
        report = self.report
        statuses: dict[str, int] = {}
        for r in report.ranks if report else ():
            statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
        self.events.emit(
            "done",
            outcome=report.outcome if report else None,
            exit_code=code,
            reason=reason,
            statuses=statuses,
            warnings=list(report.warnings) if report else [],
            **({"error": error} if error else {}),
        )

    # -- one update

    def publish(self, update: Update) -> None:
        """Emit the update's events in order and replace the metrics snapshot."""
        report = update.report
        judged = report is not self.report
        self.report = report
        self._bytes += update.bytes_read
        for rel in update.restarted:
            self.events.emit("restarted", file=rel)
        if judged:
            self._silence, self._silence_at = dict(update.silence), update.time
        self._emit_warnings(report)
        self._emit_nodes(report)
        self._emit_statuses(update)
        self._emit_findings(update)
        if judged:
            self._ranks_before = {
                (f.rule, f.fingerprint): frozenset(f.ranks) for f in report.findings
            }
            self._root_cause(report)
        node = self.node
        if node is not None:
            node.tick()
        self.collector.snapshot = Snapshot(
            report,
            self._silence,
            self._silence_at,
            self._bytes,
            len(self.live.paths()),
            update.caught_up,
            node.host if node is not None else None,
            node.table if node is not None else (),
        )
        if update.caught_up and not self._caught_up:
            self._caught_up = True
            self.events.emit(
                "caught_up",
                files=len(self.live.paths()),
                ranks=len(report.ranks),
                bytes_read=self._bytes,
            )

    def _emit_warnings(self, report: Report) -> None:
        """A warning event, and a line on stderr, for each problem reading the run when it
        first appears (a file that cannot be opened, a directory that cannot be listed)."""
        for warning in report.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.events.emit("warning", message=warning)
                if self._say_warnings:
                    self._stderr(f"msrunwatch: warning: {terminal(warning)}")

    def _stderr(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # stderr closed: the event still went
            print(line, file=self.err, flush=True)

    def _emit_nodes(self, report: Report) -> None:
        """A node_state event per node whose live state changed (the cluster view)."""
        for node in report.nodes:
            before = self._nodes.get(node.name)
            if node.live is None or node.live == before:
                continue
            self._nodes[node.name] = node.live
            self.events.emit(
                "node_state",
                host=node.name,
                state=node.live,
                previous=before,
                why=node.why,
                ranks=list(node.ranks),
            )

    def _emit_statuses(self, update: Update) -> None:
        """One rank_status event per rank that appeared or changed status."""
        by_rank = {r.rank: r for r in update.report.ranks}
        for rank, before, after in update.status_changes:
            r = by_rank.get(rank)
            self.events.emit(
                "rank_status",
                rank=rank,
                status=after.value,
                previous=before.value if before is not None else None,
                reason=r.status_reason if r else "",
                file=r.file if r else None,
                log_dir=r.log_dir if r else None,
            )

    def _emit_findings(self, update: Update) -> None:
        """A finding event per new finding (or one on more ranks), and the hook once per
        cause: not for its symptoms and victims (unless every finding was asked for), and
        for a finding written before once it becomes the root cause."""
        for f in update.new_findings:
            key = (f.rule, f.fingerprint)
            had = self._ranks_before.get(key)
            if had is not None and had.issuperset(f.ranks):
                continue  # fewer ranks than before (a restarted log): nothing new to say
            record = self.events.emit(
                "finding", **relabel_time(jsonout.finding(f)), spread=key in self._announced
            )
            self._announced.add(key)
            self._hook(f, record)
        for f in update.report.findings:
            if f.role == "root-cause" and (f.rule, f.fingerprint) in self._announced:
                self._hook(f, self.events.record("finding", **relabel_time(jsonout.finding(f))))

    def _hook(self, f: Finding, record: dict[str, Any]) -> None:
        """Run --on-finding for a cause (or any finding, --on-every-finding); the cluster
        view runs it from the root cause instead (`hook_on_cause`)."""
        if self.hook is None or self.options.hook_on_cause:
            return
        if self.options.on_every_finding or f.role in CAUSES:
            self.hook.submit(f, record)

    def _root_cause(self, report: Report) -> None:
        """A root_cause event when the root cause appears, changes or is cleared."""
        c = report.root_cause
        key = None if c is None else (c.rule, c.category, c.ranks, c.log_dir, c.file, c.line)
        if key == self._cause:
            return
        had = self._cause is not None
        self._cause = key
        payload = jsonout.root_cause(c)
        if payload is not None:
            record = self.events.emit("root_cause", **relabel_time(payload), cleared=False)
            if self.hook is not None and self.options.hook_on_cause and c is not None:
                self.hook.submit(cause_finding(report, c), record)
        elif had:
            self.events.emit("root_cause", cleared=True)
