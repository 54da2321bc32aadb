"""The central view's Prometheus metrics: the job as a whole, not every rank again (each
node's watcher exports its ranks; `msrunwatch_rank_info` joins them to hosts and devices).

======================================  =========  ==================  ========================
metric                                  type       labels              value
======================================  =========  ==================  ========================
msrunwatch_cluster_nodes                gauge      state               nodes per live state
                                                                       (reporting, stale, blind,
                                                                       ended, missing)
msrunwatch_cluster_node_state           gauge      host, state         1 for each node's state
msrunwatch_cluster_ranks                gauge      status              ranks per status
msrunwatch_run_outcome                  gauge      outcome             as a node's watcher
msrunwatch_findings                     gauge      category, severity  as a node's watcher
msrunwatch_root_cause_rank              gauge      rank, host,         1 for each root-cause
                                                   category            rank
======================================  =========  ==================  ========================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily, Metric

from msrunwatch.judge.model import Report, Status
from msrunwatch.live.cluster.feeds import LIVE_STATES
from msrunwatch.live.headless.metrics import RunCollector, findings_family, outcome_family


class ClusterCollector(RunCollector):
    """Builds the job's metrics from the latest verdict at each scrape."""

    def collect(self) -> Iterable[Metric]:
        report = self.snapshot.report
        yield from _nodes(report)
        yield _ranks(report)
        yield findings_family(report)
        yield outcome_family(report)
        yield _root_cause(report)


def _nodes(report: Report | None) -> list[GaugeMetricFamily]:
    counts = GaugeMetricFamily("msrunwatch_cluster_nodes", "Nodes per live state", labels=["state"])
    each = GaugeMetricFamily(
        "msrunwatch_cluster_node_state", "1 for each node's live state", labels=["host", "state"]
    )
    nodes = report.nodes if report else ()
    by_state = Counter(n.live for n in nodes)
    for state in LIVE_STATES:
        counts.add_metric([state], float(by_state[state]))
    for node in nodes:
        each.add_metric([node.name, node.live or "missing"], 1.0)
    return [counts, each]


def _ranks(report: Report | None) -> Metric:
    family = GaugeMetricFamily("msrunwatch_cluster_ranks", "Ranks per status", labels=["status"])
    by_status = Counter(r.status for r in report.ranks) if report else Counter()
    for status in Status:
        family.add_metric([status.value], float(by_status[status]))
    return family


def _root_cause(report: Report | None) -> Metric:
    family = GaugeMetricFamily(
        "msrunwatch_root_cause_rank",
        "1 for each rank the root cause names",
        labels=["rank", "host", "category"],
    )
    if report is not None and report.root_cause is not None:
        hosts = {r.rank: r.host or "" for r in report.ranks}
        for n in report.root_cause.ranks:
            family.add_metric([str(n), hosts.get(n, ""), report.root_cause.category], 1.0)
    return family
