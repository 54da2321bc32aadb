"""The headless tick loop: read the run, emit what changed, update the metrics, stop cleanly."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from typing import Any, TextIO

from prometheus_client import CollectorRegistry

from msrunwatch import __version__
from msrunwatch.core.exit_codes import ExitCode
from msrunwatch.core.sanitize import terminal
from msrunwatch.judge.model import Finding, Report
from msrunwatch.live.headless.events import EventStream, PipeClosed, relabel_time
from msrunwatch.live.headless.hooks import HOOK_TIMEOUT_S, Hook, cause_finding
from msrunwatch.live.headless.httpserve import Server
from msrunwatch.live.headless.metrics import RunCollector, Snapshot, serve
from msrunwatch.live.headless.options import HeadlessOptions
from msrunwatch.live.headless.signals import StopSignals
from msrunwatch.live.publish import NodeSnapshot
from msrunwatch.live.run import IDLE_TICK_S, Engine, LiveRun, Update
from msrunwatch.report import jsonout

CAUSES = frozenset({"root-cause", "cause"})
"""Roles that run --on-finding: a rank's own fault, not the timeouts and kills it caused."""
TICK_S = 0.1
"""Period of the ticks: each one stats every followed file, so this bounds the latency."""
MIN_GAP_S = 0.02
"""Shortest pause between two ticks, even after a slow one, so the loop never spins."""


class Headless:
    """The headless loop over a LiveRun: `run()` for the command, `step()` for tests."""

    def __init__(
        self,
        live: Engine,
        options: HeadlessOptions,
        out: TextIO | None = None,
        err: TextIO | None = None,
        tick_s: float = TICK_S,
        hook_timeout_s: float = HOOK_TIMEOUT_S,
        collector: RunCollector | None = None,
    ) -> None:
        self.live, self.options = live, options
        self.clock = live.clock
        self.tick_s = tick_s
        self.err = err or sys.stderr
        self.exit_when_done = options.exit_when_done
        self._given_out = out
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
        self._stop = StopSignals(lambda: self.live.dirty.wake.set())
        self._started = False
        self._tick_began = 0.0
        self._idle = False
        """The run has ended and the last tick read nothing: tick at the slow heartbeat."""
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

    # -- one tick

    def step(self) -> int | None:
        """One tick: read, write what changed, update the metrics.

        Returns the exit code when --exit-when-done is given and every rank has ended.
        """
        if not self._started:
            self.start()
        self._tick_began = time.monotonic()
        update = self.live.tick()
        self._idle = update.ended and not update.bytes_read
        self._publish(update)
        if self.exit_when_done and self.done(update):
            return int(ExitCode.FINDINGS if update.report.has_errors else ExitCode.OK)
        return None

    def done(self, update: Update) -> bool:
        """The run has ended (live.run.run_ended), as the view decides it too."""
        return update.ended

    def _publish(self, update: Update) -> None:
        """Emit the tick's events in order and replace the metrics snapshot."""
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
        files = len(self.live.paths())
        node = self.node
        if node is not None:
            node.tick()
        self.collector.snapshot = Snapshot(
            report,
            self._silence,
            self._silence_at,
            self._bytes,
            files,
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

    # -- the command

    def run(self) -> int:
        """Tick until done (--exit-when-done), Ctrl+C or SIGTERM; returns the exit code."""
        try:
            self.start()
            with self._stop.installed():
                code, reason = self._ticks()
                self._finish(code, reason)
            if reason != "done":  # as every other command stopped by a signal says it
                self._stderr(f"msrunwatch: {reason}")
        except PipeClosed:  # the events' reader went away: no `done` event can reach it
            self.close(wait_for_hooks=False)
            return int(ExitCode.OUTPUT_CLOSED)
        except Exception as exc:  # a bug: still say so in a done event before it is reported
            with contextlib.suppress(Exception):
                self._finish(int(ExitCode.USAGE), "error", f"{type(exc).__name__}: {exc}"[:300])
            self.close(wait_for_hooks=False)
            raise
        except BaseException:
            self.close(wait_for_hooks=False)
            raise
        self.close(wait_for_hooks=reason == "done")
        return code

    def _ticks(self) -> tuple[int, str]:
        """Step until an exit code: done, a stop signal, or a second Ctrl+C."""
        code: int | None = None
        try:
            while code is None:
                code = self.step()
                if code is None and self._stop.signum is None:
                    self._wait()
                if code is None and self._stop.signum is not None:
                    signum = self._stop.signum
                    reason = "interrupted" if signum == signal.SIGINT else "terminated"
                    return 128 + signum, reason
        except KeyboardInterrupt:
            return int(ExitCode.INTERRUPTED), "interrupted"
        return code, "done"

    def _finish(self, code: int, reason: str, error: str | None = None) -> None:
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

    def _wait(self) -> None:
        """Until the next tick: none while catching up, else the rest of the period (a new
        file or a stop signal wakes it early), and never less than MIN_GAP_S."""
        if self._behind():
            return
        period = IDLE_TICK_S if self._idle else self.tick_s
        rest = period - (time.monotonic() - self._tick_began)
        time.sleep(min(MIN_GAP_S, self.tick_s))
        if self._stop.signum is None and rest > MIN_GAP_S:
            self.live.dirty.wake.wait(rest - MIN_GAP_S)

    def _behind(self) -> bool:
        snap = self.collector.snapshot
        return snap.report is not None and not snap.caught_up
