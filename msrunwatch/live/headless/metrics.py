"""Serve the run's state as Prometheus metrics, built from a snapshot at each scrape.

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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from msrunwatch import __version__
from msrunwatch.judge.model import Report, Status
from msrunwatch.live.headless.httpserve import Server
from msrunwatch.read.facts import MemorySummary, Progress, Registration
from msrunwatch.rules.vocab import CATEGORIES, Severity

OUTCOMES = ("running", "ok", "failed", "unknown")
CONNECTION_TIMEOUT_S = 10.0
"""A connection whose request has not come whole this long after it opened is closed
(Prometheus sends its request at once; one byte every few seconds is not a scrape)."""
_RANK_GAUGES = (
    (
        "msrunwatch_rank_status",
        "1 for the rank's current status, 0 for the others",
        ["rank", "status"],
    ),
    ("msrunwatch_rank_step", "Last training step the rank logged", ["rank"]),
    ("msrunwatch_rank_loss", "Last loss the rank logged", ["rank"]),
    ("msrunwatch_rank_last_line_age_seconds", "Seconds since the rank's log last grew", ["rank"]),
    (
        "msrunwatch_rank_peak_memory_mb",
        "Device memory from MindSpore's teardown block, MB "
        "(used: peak used, actual: actual peak, device: device size, limit: usable)",
        ["rank", "kind"],
    ),
    ("msrunwatch_rank_compile_seconds", "Graph compile time in total", ["rank"]),
)
"""Name, help and labels of the per-rank gauges, in the order they are exposed."""


@dataclass(frozen=True)
class Snapshot:
    """What the metrics show; replaced whole each tick, read by the HTTP threads."""

    report: Report | None = None
    silence: dict[int, float] = field(default_factory=dict)
    silence_at: float = 0.0
    bytes_read: int = 0
    files: int = 0
    caught_up: bool = False
    host: str | None = None
    """This watcher's node (the info metrics' join key), when it serves its facts."""
    table: tuple[Registration, ...] = ()
    """The scheduler's registrations, on the node that holds its log."""


class RunCollector:
    """Builds every metric from the latest snapshot when Prometheus scrapes."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.snapshot = Snapshot()

    def collect(self) -> Iterable[Metric]:
        """Every family, in a fixed order; the snapshot is read once per scrape."""
        snap = self.snapshot
        yield from _rank_metrics(snap, self.clock())
        yield from _info(snap)
        yield findings_family(snap.report)
        yield outcome_family(snap.report)
        yield _root_cause(snap.report)
        read = CounterMetricFamily("msrunwatch_bytes_read", "Log bytes read")
        read.add_metric([], float(snap.bytes_read))
        yield read
        yield GaugeMetricFamily("msrunwatch_files", "Log files followed", value=snap.files)
        yield GaugeMetricFamily(
            "msrunwatch_caught_up",
            "1 once every file was read to its end",
            value=1.0 if snap.caught_up else 0.0,
        )


def _rank_metrics(snap: Snapshot, now: float) -> list[GaugeMetricFamily]:
    """The per-rank gauges, with a series for each rank the report knows."""
    families = [GaugeMetricFamily(name, doc, labels=labels) for name, doc, labels in _RANK_GAUGES]
    status, step, loss, age, memory, compile_s = families
    for r in snap.report.ranks if snap.report else ():
        label = str(r.rank)
        for s in Status:
            status.add_metric([label, s.value], 1.0 if r.status is s else 0.0)
        _add_progress(step, loss, label, r.progress)
        if r.rank in snap.silence:
            age.add_metric([label], snap.silence[r.rank] + max(now - snap.silence_at, 0.0))
        _add_memory(memory, label, r.memory)
        c = r.compile
        if c is not None and (c.count or c.total_ms):
            compile_s.add_metric([label], c.total_ms / 1000.0)
    return families


def _info(snap: Snapshot) -> list[GaugeMetricFamily]:
    """Who this watcher and its ranks are (host, device, pid), for joins with node and
    device metrics (NPU-Exporter); the scheduler's counts on the node that holds its log."""
    info = GaugeMetricFamily(
        "msrunwatch_info", "1, naming this watcher", labels=["host", "version", "log_dirs"]
    )
    ranks = GaugeMetricFamily(
        "msrunwatch_rank_info",
        "1 per rank, naming its host, device and pid",
        labels=["rank", "host", "device", "pid"],
    )
    host = snap.host or ""
    if snap.report is not None:
        info.add_metric([host, __version__, ",".join(snap.report.log_dirs)], 1.0)
    devices = {r.rank: r.device for r in snap.table}
    for r in snap.report.ranks if snap.report else ():
        device = devices.get(r.rank)
        labels = [str(r.rank), r.host or host, "" if device is None else str(device)]
        ranks.add_metric([*labels, "" if r.pid is None else str(r.pid)], 1.0)
    out = [info, ranks]
    if snap.table:
        registered = {r.node for r in snap.table}
        expected = max(r.expected for r in snap.table)
        out.append(
            GaugeMetricFamily(
                "msrunwatch_registered_ranks",
                "Workers the scheduler registered",
                value=float(len(registered)),
            )
        )
        if expected:
            out.append(
                GaugeMetricFamily(
                    "msrunwatch_expected_ranks",
                    "Workers the scheduler waits for",
                    value=float(expected),
                )
            )
    return out


def _add_progress(
    step: GaugeMetricFamily, loss: GaugeMetricFamily, label: str, p: Progress | None
) -> None:
    """The last step, and the last loss when one was logged."""
    if p is not None:
        step.add_metric([label], float(p.step))
        if p.loss is not None:
            loss.add_metric([label], float(p.loss))


def _add_memory(memory: GaugeMetricFamily, label: str, m: MemorySummary | None) -> None:
    """One series per figure the teardown block gave."""
    if m is None:
        return
    for kind, value in (
        ("used", m.peak_used_mb),
        ("actual", m.peak_actual_mb),
        ("device", m.device_mb),
        ("limit", m.used_mb),
    ):
        if value is not None:
            memory.add_metric([label, kind], float(value))


def findings_family(report: Report | None) -> Metric:
    """Findings by category and severity, every known pair present (zeros included)."""
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


def outcome_family(report: Report | None) -> Metric:
    """1 for the run's current outcome, 0 for the others."""
    family = GaugeMetricFamily(
        "msrunwatch_run_outcome", "1 for the run's current outcome", labels=["outcome"]
    )
    current = report.outcome if report else None
    for name in OUTCOMES:
        family.add_metric([name], 1.0 if name == current else 0.0)
    return family


def _root_cause(report: Report | None) -> Metric:
    """1 for each rank the root cause names; no series while there is none."""
    family = GaugeMetricFamily(
        "msrunwatch_root_cause_rank",
        "1 for each rank the root cause names",
        labels=["rank", "category"],
    )
    if report is not None and report.root_cause is not None:
        for n in report.root_cause.ranks:
            family.add_metric([str(n), report.root_cause.category], 1.0)
    return family


def _routed(metrics: Any, routes: Mapping[str, Any]) -> Any:
    """/metrics and the other paths given (a watcher's /facts)."""

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        return routes.get(environ.get("PATH_INFO", ""), metrics)(environ, start_response)

    return app


def serve(
    registry: CollectorRegistry, addr: str, port: int, routes: Mapping[str, Any] | None = None
) -> tuple[Server, str]:
    """Serve the registry (and `routes`: path -> WSGI app) on a daemon thread; returns the
    server and its URL."""
    app = _routed(make_wsgi_app(registry), routes or {})
    server = Server(app, addr, port, lambda: CONNECTION_TIMEOUT_S)
    shown = f"[{server.host}]" if ":" in server.host else server.host
    return server, f"http://{shown}:{server.server_port}/metrics"
