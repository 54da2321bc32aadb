"""Headless live mode: JSON-lines events, Prometheus metrics and a hook, one instance per node.

`msrunwatch watch DIR... --headless` runs the live engine without a screen. Every tick
(0.25 s, sooner when the file watcher saw a change) it writes what changed as one JSON
object per line, flushed, to stdout or `--events FILE`; `--metrics-port` serves the
run's state for Prometheus; `--on-finding CMD` runs a command per new error finding; and
`--exit-when-done` ends with triage's exit code once every rank has ended. Nothing is
ever written into the watched directories.

Events (schema 1). Every event has "event", "time" (the wall clock when it was written,
ISO 8601 in UTC) and "schema": 1; a payload's own log time, where the JSON report calls
it "time", is renamed "log_time" (the log's clock, no zone, as in the JSON report).

=============  ================================================================
event          payload
=============  ================================================================
start          targets, consoles, version, host, pid, poll, metrics (URL or null)
rank_status    rank, status, previous (null for a new rank), reason, file, log_dir
finding        the JSON report's finding (rule, category, severity, ranks, ...),
               log_time, spread (true when an announced finding reached more ranks)
root_cause     the JSON report's root_cause, log_time, cleared: false; or only
               cleared: true when a restarted run no longer has one
restarted      file (relative to its log directory): truncated or replaced
caught_up      files, ranks, bytes_read: everything present at start was read
done           outcome, exit_code, reason ("done", "interrupted", "terminated"),
               statuses (rank count per status)
=============  ================================================================

Metrics (`--metrics-port`; a dedicated registry, so no process or platform metrics;
label values are strings; a rank's series appear once the rank is known):

======================================  =========  ==============  ============================
metric                                  type       labels          value
======================================  =========  ==============  ============================
msrunwatch_rank_status                  gauge      rank, status    1 for the rank's current
                                                                   status, 0 for every other
msrunwatch_rank_step                    gauge      rank            last training step logged
msrunwatch_rank_loss                    gauge      rank            last loss logged (NaN kept)
msrunwatch_rank_last_line_age_seconds   gauge      rank            seconds since the rank's
                                                                   log last grew (wall clock)
msrunwatch_rank_peak_memory_mb          gauge      rank, kind      MindSpore's teardown block:
                                                                   used = peak used, actual =
                                                                   actual peak, device = device
                                                                   memory, limit = memory
                                                                   MindSpore may use
msrunwatch_rank_compile_seconds         gauge      rank            graph compile time in total
msrunwatch_findings                     gauge      category,       findings now (every known
                                                   severity        category, zeros included)
msrunwatch_run_outcome                  gauge      outcome         1 for the current outcome
                                                                   (running, ok, failed,
                                                                   unknown), 0 for the others
msrunwatch_root_cause_rank              gauge      rank, category  1 for each root-cause rank
msrunwatch_bytes_read_total             counter                    log bytes read
msrunwatch_files                        gauge                      log files followed
msrunwatch_caught_up                    gauge                      1 once every file was read
                                                                   to its end, else 0
======================================  =========  ==============  ============================
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from socketserver import ThreadingMixIn
from types import FrameType
from typing import Any, TextIO
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from msrunwatch import __version__
from msrunwatch.exit_codes import ExitCode
from msrunwatch.live.run import LiveRun, Update
from msrunwatch.model import CATEGORIES, Severity, Status
from msrunwatch.report import jsonout
from msrunwatch.report.types import Finding, Report

SCHEMA = 1
"""Version of the event lines; bumped only when a field changes meaning or disappears."""
TICK_S = 0.25
"""Longest wait between two ticks."""
MIN_GAP_S = 0.1
"""Shortest wait between two ticks: a busy log must not make the loop spin."""
HOOK_TIMEOUT_S = 60.0
"""An --on-finding command running longer than this is killed."""
HOOK_WORKERS = 4
RUNNING = frozenset({Status.STARTING, Status.COMPILING, Status.TRAINING, Status.STALLED})
"""Statuses of a rank that has not ended yet."""
REPEAT_S = 1.0
"""A second SIGINT sooner than this after the first is the same Ctrl+C, delivered twice."""
OUTCOMES = ("running", "ok", "failed", "unknown")


class _PipeClosed(Exception):
    """The reader of stdout went away: end quietly."""


def _iso_now(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def _relabel_time(payload: dict[str, Any]) -> dict[str, Any]:
    """The report's log time as "log_time": "time" is the event's wall clock."""
    return {("log_time" if key == "time" else key): value for key, value in payload.items()}


# -- metrics ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Snapshot:
    """What the metrics show; replaced whole each tick, read by the HTTP threads."""

    report: Report | None = None
    silence: dict[int, float] = field(default_factory=dict)
    silence_at: float = 0.0
    bytes_read: int = 0
    files: int = 0
    caught_up: bool = False


class RunCollector:
    """Builds every metric from the latest snapshot when Prometheus scrapes."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.snapshot = _Snapshot()

    def collect(self) -> Iterable[Metric]:
        snap, now = self.snapshot, self.clock()
        report = snap.report
        ranks = report.ranks if report else ()
        status = GaugeMetricFamily(
            "msrunwatch_rank_status",
            "1 for the rank's current status, 0 for the others",
            labels=["rank", "status"],
        )
        step = GaugeMetricFamily(
            "msrunwatch_rank_step", "Last training step the rank logged", labels=["rank"]
        )
        loss = GaugeMetricFamily(
            "msrunwatch_rank_loss", "Last loss the rank logged", labels=["rank"]
        )
        age = GaugeMetricFamily(
            "msrunwatch_rank_last_line_age_seconds",
            "Seconds since the rank's log last grew",
            labels=["rank"],
        )
        memory = GaugeMetricFamily(
            "msrunwatch_rank_peak_memory_mb",
            "Device memory from MindSpore's teardown block, MB "
            "(used: peak used, actual: actual peak, device: device size, limit: usable)",
            labels=["rank", "kind"],
        )
        compile_s = GaugeMetricFamily(
            "msrunwatch_rank_compile_seconds", "Graph compile time in total", labels=["rank"]
        )
        for r in ranks:
            label = str(r.rank)
            for s in Status:
                status.add_metric([label, s.value], 1.0 if r.status is s else 0.0)
            p = r.progress
            if p is not None:
                step.add_metric([label], float(p.step))
                if p.loss is not None:
                    loss.add_metric([label], float(p.loss))
            if r.rank in snap.silence:
                age.add_metric([label], snap.silence[r.rank] + max(now - snap.silence_at, 0.0))
            m = r.memory
            if m is not None:
                for kind, value in (
                    ("used", m.peak_used_mb),
                    ("actual", m.peak_actual_mb),
                    ("device", m.device_mb),
                    ("limit", m.used_mb),
                ):
                    if value is not None:
                        memory.add_metric([label, kind], float(value))
            c = r.compile
            if c is not None and (c.count or c.total_ms):
                compile_s.add_metric([label], c.total_ms / 1000.0)
        yield from (status, step, loss, age, memory, compile_s)
        yield self._findings(report)
        outcome = GaugeMetricFamily(
            "msrunwatch_run_outcome", "1 for the run's current outcome", labels=["outcome"]
        )
        current = report.outcome if report else None
        for name in OUTCOMES:
            outcome.add_metric([name], 1.0 if name == current else 0.0)
        yield outcome
        cause = GaugeMetricFamily(
            "msrunwatch_root_cause_rank",
            "1 for each rank the root cause names",
            labels=["rank", "category"],
        )
        if report is not None and report.root_cause is not None:
            for n in report.root_cause.ranks:
                cause.add_metric([str(n), report.root_cause.category], 1.0)
        yield cause
        read = CounterMetricFamily("msrunwatch_bytes_read", "Log bytes read")
        read.add_metric([], float(snap.bytes_read))
        yield read
        yield GaugeMetricFamily("msrunwatch_files", "Log files followed", value=snap.files)
        yield GaugeMetricFamily(
            "msrunwatch_caught_up",
            "1 once every file was read to its end",
            value=1.0 if snap.caught_up else 0.0,
        )

    @staticmethod
    def _findings(report: Report | None) -> Metric:
        family = GaugeMetricFamily(
            "msrunwatch_findings",
            "Findings now, by category and severity",
            labels=["category", "severity"],
        )
        counts = {(c, s.value): 0 for c in CATEGORIES for s in Severity}
        for f in report.findings if report else ():
            key = (f.category, f.severity.value)
            counts[key] = counts.get(key, 0) + 1
        for (category, severity), n in sorted(counts.items()):
            family.add_metric([category, severity], float(n))
        return family


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not logged."""


def _serve(registry: CollectorRegistry, addr: str, port: int) -> tuple[WSGIServer, str]:
    """Serve the registry on a daemon thread; returns the server and its URL."""
    infos = socket.getaddrinfo(addr or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    af, _, _, _, sockaddr = infos[0]

    class Server(_Server):
        address_family = af

    server = make_server(
        str(sockaddr[0]), port, make_wsgi_app(registry), Server, handler_class=_QuietHandler
    )
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        name="msrunwatch-metrics",
        daemon=True,
    )
    thread.start()
    host = str(sockaddr[0])
    shown = f"[{host}]" if ":" in host else host
    return server, f"http://{shown}:{server.server_port}/metrics"


# -- the hook ---------------------------------------------------------------------------


class _Hook:
    """Runs --on-finding's command per new error finding, off the tick thread."""

    def __init__(self, command: str, err: TextIO, timeout_s: float = HOOK_TIMEOUT_S) -> None:
        self.command, self.err, self.timeout_s = command, err, timeout_s
        self._pool = concurrent.futures.ThreadPoolExecutor(
            HOOK_WORKERS, thread_name_prefix="msrunwatch-hook"
        )
        self._ran: set[tuple[str, str]] = set()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.futures: list[concurrent.futures.Future[None]] = []

    def submit(self, finding: Finding, event: dict[str, Any]) -> None:
        key = (finding.rule, finding.fingerprint)
        if finding.severity is not Severity.ERROR or key in self._ran:
            return
        self._ran.add(key)
        data = (json.dumps(event, ensure_ascii=False) + "\n").encode()
        env = {
            **os.environ,
            "MSRUNWATCH_RULE": finding.rule,
            "MSRUNWATCH_CATEGORY": finding.category,
            "MSRUNWATCH_SEVERITY": finding.severity.value,
            "MSRUNWATCH_RANKS": ",".join(str(n) for n in finding.ranks),
            "MSRUNWATCH_MESSAGE": finding.message,
        }
        self.futures.append(self._pool.submit(self._run, finding.rule, data, env))

    def _run(self, rule: str, data: bytes, env: dict[str, str]) -> None:
        try:
            proc = subprocess.Popen(
                self.command,
                shell=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            self._warn(rule, f"cannot start: {exc.strerror}")
            return
        with self._lock:
            self._running.add(proc)
        try:
            try:
                _, stderr = proc.communicate(data, timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                _kill(proc)
                proc.communicate()
                self._warn(rule, f"killed after {self.timeout_s:g} s")
                return
            if proc.returncode:
                last = stderr.decode(errors="replace").strip().splitlines()[-1:]
                why = f"exit code {proc.returncode}" if proc.returncode > 0 else "killed"
                self._warn(rule, why + (f": {last[0][:200]}" if last else ""))
        finally:
            with self._lock:
                self._running.discard(proc)

    def _warn(self, rule: str, why: str) -> None:
        with self._lock:
            try:
                print(f"msrunwatch: warning: --on-finding for {rule}: {why}", file=self.err)
                self.err.flush()
            except (OSError, ValueError):
                pass

    def close(self, wait: bool) -> None:
        """Wait for the commands (each bounded by the timeout), or stop them now."""
        if not wait:
            with self._lock:
                running = list(self._running)
            for proc in running:
                _kill(proc)
        self._pool.shutdown(wait=wait, cancel_futures=not wait)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()


# -- the loop ---------------------------------------------------------------------------


class Headless:
    """The headless loop over a LiveRun: `run()` for the command, `step()` for tests."""

    def __init__(
        self,
        live: LiveRun,
        args: argparse.Namespace,
        out: TextIO | None = None,
        err: TextIO | None = None,
        tick_s: float = TICK_S,
        hook_timeout_s: float = HOOK_TIMEOUT_S,
    ) -> None:
        self.live, self.args = live, args
        self.clock = live.clock
        self.tick_s = tick_s
        self.err = err or sys.stderr
        self.exit_when_done = bool(getattr(args, "exit_when_done", False))
        self._given_out = out
        self._out: TextIO | None = None
        self._owns_out = False
        self._hook_timeout_s = hook_timeout_s
        self.hook: _Hook | None = None
        self.collector = RunCollector(self.clock)
        self.registry = CollectorRegistry()
        self.registry.register(self.collector)
        self.server: WSGIServer | None = None
        self.metrics_url: str | None = None
        self.report: Report | None = None
        self._bytes = 0
        self._silence: dict[int, float] = {}
        self._silence_at = 0.0
        self._cause: tuple[Any, ...] | None = None
        self._announced: set[tuple[str, str]] = set()
        self._ranks_before: dict[tuple[str, str], frozenset[int]] = {}
        """Each finding's ranks in the last report: a finding is news when it has more."""
        self._caught_up = False
        self._stop_signal: int | None = None
        self._started = False
        self._write_failed = False

    # -- setup and teardown

    def start(self) -> None:
        """Open the event stream, serve metrics and write the start event."""
        from msrunwatch.cli import UsageError

        if self._started:
            return
        self._started = True
        self._out = self._open_events(UsageError)
        port = getattr(self.args, "metrics_port", None)
        if port is not None:
            addr = getattr(self.args, "metrics_addr", None) or "0.0.0.0"
            try:
                self.server, self.metrics_url = _serve(self.registry, addr, int(port))
            except OSError as exc:
                raise UsageError(
                    f"cannot serve metrics on {addr}:{port}: {exc.strerror or exc}"
                ) from None
        command = getattr(self.args, "on_finding", None)
        if command:
            self.hook = _Hook(command, self.err, self._hook_timeout_s)
        self._emit(
            "start",
            targets=list(self.live.targets),
            consoles=list(self.live.consoles),
            version=__version__,
            host=socket.gethostname(),
            pid=os.getpid(),
            poll=bool(getattr(self.args, "poll", False)),
            metrics=self.metrics_url,
        )

    def _open_events(self, usage_error: type[Exception]) -> TextIO:
        if self._given_out is not None:
            return self._given_out
        events = getattr(self.args, "events", None)
        if not events or events == "-":
            return sys.stdout
        path = Path(events).resolve()
        for target in (*self.live.targets, *self.live.consoles):
            root = Path(target).resolve()
            watched = root if root.is_dir() else root.parent
            if path.is_relative_to(watched):
                raise usage_error(
                    f"--events {events} is inside the watched directory {watched}; "
                    "msrunwatch never writes there"
                )
        try:
            stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
        except OSError as exc:
            raise usage_error(f"cannot write {events}: {exc.strerror}") from None
        self._owns_out = True
        return stream

    def close(self, wait_for_hooks: bool = True) -> None:
        """Stop the metrics server and the hook, close an events file."""
        if self.hook is not None:
            self.hook.close(wait_for_hooks)
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        if self._owns_out and self._out is not None:
            self._out.close()
            self._owns_out = False

    # -- events

    def _emit(self, event: str, **payload: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            "event": event,
            "time": _iso_now(self.clock()),
            "schema": SCHEMA,
            **payload,
        }
        self._write(record)
        return record

    def _write(self, record: dict[str, Any]) -> None:
        out = self._out
        if out is None or self._write_failed:
            return
        line = json.dumps(record, ensure_ascii=False, allow_nan=False, default=_plain) + "\n"
        try:
            out.write(line)
            out.flush()
        except BrokenPipeError:
            if out is sys.stdout:
                _silence_stdout()
            raise _PipeClosed from None
        except OSError as exc:
            self._write_failed = True
            print(f"msrunwatch: warning: cannot write events: {exc.strerror}", file=self.err)

    # -- one tick

    def step(self) -> int | None:
        """One tick: read, write what changed, update the metrics.

        Returns the exit code when --exit-when-done is given and every rank has ended.
        """
        if not self._started:
            self.start()
        update = self.live.tick()
        self._publish(update)
        if self.exit_when_done and self.done(update):
            return int(ExitCode.FINDINGS if update.report.has_errors else ExitCode.OK)
        return None

    def done(self, update: Update) -> bool:
        """Caught up, at least one rank, and none still starting, compiling, training or stalled."""
        ranks = update.report.ranks
        return update.caught_up and bool(ranks) and all(r.status not in RUNNING for r in ranks)

    def _publish(self, update: Update) -> None:
        report = update.report
        judged = report is not self.report
        self.report = report
        self._bytes += update.bytes_read
        for rel in update.restarted:
            self._emit("restarted", file=rel)
        if judged:
            self._silence, self._silence_at = dict(update.silence), update.time
        by_rank = {r.rank: r for r in report.ranks}
        for rank, before, after in update.status_changes:
            r = by_rank.get(rank)
            self._emit(
                "rank_status",
                rank=rank,
                status=after.value,
                previous=before.value if before is not None else None,
                reason=r.status_reason if r else "",
                file=r.file if r else None,
                log_dir=r.log_dir if r else None,
            )
        for f in update.new_findings:
            key = (f.rule, f.fingerprint)
            had = self._ranks_before.get(key)
            if had is not None and had.issuperset(f.ranks):
                continue  # fewer ranks than before (a restarted log): nothing new to say
            record = self._emit(
                "finding", **_relabel_time(jsonout.finding(f)), spread=key in self._announced
            )
            self._announced.add(key)
            if self.hook is not None:
                self.hook.submit(f, record)
        if judged:
            self._ranks_before = {
                (f.rule, f.fingerprint): frozenset(f.ranks) for f in report.findings
            }
            self._root_cause(report)
        self.collector.snapshot = _Snapshot(
            report,
            self._silence,
            self._silence_at,
            self._bytes,
            len(self.live.paths()),
            update.caught_up,
        )
        if update.caught_up and not self._caught_up:
            self._caught_up = True
            self._emit(
                "caught_up",
                files=len(self.live.paths()),
                ranks=len(report.ranks),
                bytes_read=self._bytes,
            )

    def _root_cause(self, report: Report) -> None:
        c = report.root_cause
        key = None if c is None else (c.rule, c.category, c.ranks, c.log_dir, c.file, c.line)
        if key == self._cause:
            return
        had = self._cause is not None
        self._cause = key
        payload = jsonout.root_cause(c)
        if payload is not None:
            self._emit("root_cause", **_relabel_time(payload), cleared=False)
        elif had:
            self._emit("root_cause", cleared=True)

    # -- the command

    def run(self) -> int:
        """Tick until done (--exit-when-done), Ctrl+C or SIGTERM; returns the exit code."""
        code: int | None = None
        reason = "done"
        try:
            self.start()
            with self._signals():
                try:
                    while code is None:
                        code = self.step()
                        if code is None and self._stop_signal is None:
                            self._wait()
                        if code is None and self._stop_signal is not None:
                            signum = self._stop_signal
                            code = 128 + signum
                            reason = "interrupted" if signum == signal.SIGINT else "terminated"
                except KeyboardInterrupt:
                    code, reason = int(ExitCode.INTERRUPTED), "interrupted"
                self._finish(code, reason)
        except _PipeClosed:
            self.close(wait_for_hooks=False)
            return int(ExitCode.OK)
        except BaseException:
            self.close(wait_for_hooks=False)
            raise
        self.close(wait_for_hooks=reason == "done")
        return code

    def _finish(self, code: int, reason: str) -> None:
        report = self.report
        statuses: dict[str, int] = {}
        for r in report.ranks if report else ():
            statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
        self._emit(
            "done",
            outcome=report.outcome if report else None,
            exit_code=code,
            reason=reason,
            statuses=statuses,
        )

    def _wait(self) -> None:
        """Until the next tick: no wait while catching up, else MIN_GAP_S to TICK_S."""
        if self._behind():
            return
        gap = min(MIN_GAP_S, self.tick_s)
        time.sleep(gap)  # a floor, so a busy log does not make the loop spin
        if self._stop_signal is None:
            self.live.dirty.wake.wait(max(self.tick_s - gap, 0.0))

    def _behind(self) -> bool:
        snap = self.collector.snapshot
        return snap.report is not None and not snap.caught_up

    @contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop the loop after the current tick.

        A second Ctrl+C stops at once, unless it came with the first (`timeout` and
        shells forward the signal the process group already got).
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        first: list[float] = []

        def stop(signum: int, frame: FrameType | None) -> None:
            if self._stop_signal is None:
                self._stop_signal = signum
                first.append(time.monotonic())
                self.live.dirty.wake.set()
            elif signum == signal.SIGINT and time.monotonic() - first[0] > REPEAT_S:
                raise KeyboardInterrupt  # a second Ctrl+C: a tick is stuck, stop at once

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def _plain(value: Any) -> Any:
    """JSON for what the report's dicts may still hold (they hold plain data today)."""
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
