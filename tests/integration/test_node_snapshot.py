"""A node's watcher serves its facts (`GET /facts`, with an ETag) and publishes them
(`--publish DIR`): the snapshot is `msrunwatch facts` of what the watcher has read, whole,
and the last one, written as the watcher stops, is the node's post-mortem facts."""

from __future__ import annotations

import io
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from msrunwatch.core.errors import UsageError
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import RankReport, Report, RootCause, Status
from msrunwatch.live.headless import Headless, HeadlessOptions
from msrunwatch.live.headless.metrics import RunCollector, Snapshot
from msrunwatch.live.run import LiveRun
from msrunwatch.live.snapshot import AGE_HEADER
from msrunwatch.read.facts import CompileStats, MemorySummary, Progress, Registration
from msrunwatch.read.nodefacts.nodes import COMPLETE, collect
from msrunwatch.read.nodefacts.reader import FactsReader
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, ROOT

HANG = FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout" / "msrun_log"
README = ROOT / "README.md"


def watcher(log_dir: Path, rules: list[Rule], **given: object) -> Headless:
    live = LiveRun([str(log_dir)], rules)
    opts = HeadlessOptions(**{"metrics_addr": "127.0.0.1", **given})  # type: ignore[arg-type]
    return Headless(live, opts, out=io.StringIO(), err=io.StringIO())


def settle(h: Headless) -> None:
    for _ in range(4):
        h.step()


def get(url: str, tag: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"If-None-Match": tag} if tag else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), b""


def read(body: bytes) -> FactsReader:
    reader = FactsReader()
    reader.read_lines(io.BytesIO(body), "snapshot")
    assert not reader.problems, reader.problems.lines()
    return reader


def test_facts_are_served_whole_with_an_etag_and_304_when_unchanged(
    rules: list[Rule], tmp_path: Path
) -> None:
    log_dir = tmp_path / "msrun_log"
    shutil.copytree(HANG, log_dir)
    h = watcher(log_dir, rules, metrics_port=0)
    try:
        settle(h)
        assert h.metrics_url is not None
        url = h.metrics_url.replace("/metrics", "/facts")
        status, headers, body = get(url)
        assert status == 200 and float(headers[AGE_HEADER]) >= 0
        (node,) = collect(read(body).streams.values()).nodes
        assert node.state == COMPLETE
        assert {f.path for f in node.files} == {p.name for p in HANG.iterdir()}
        tag = headers["ETag"]
        assert get(url, tag)[0] == 304
        with (log_dir / "worker_0.log").open("a") as fh:
            fh.write("epoch: 1 step: 99, loss is 0.5\n")
        settle(h)
        status, headers, body = get(url, tag)
        assert status == 200 and headers["ETag"] != tag
        (node,) = collect(read(body).streams.values()).nodes
        worker0 = next(f for f in node.files if f.path == "worker_0.log")
        assert worker0.progress is not None and worker0.progress.step == 99
    finally:
        h.close()


def test_the_published_file_is_the_nodes_post_mortem_facts(
    rules: list[Rule], tmp_path: Path
) -> None:
    """Replaced whole as it changes; the last one, written as the watcher stops, says final
    and triages as the logs do."""
    out = tmp_path / "pub"
    h = watcher(HANG, rules, publish=str(out))
    settle(h)
    h.close()
    (published,) = out.iterdir()
    reader = read(published.read_bytes())
    (stream,) = reader.streams.values()
    assert stream.node is not None and stream.node["live"]["final"] is True
    assert all(e.grew is not None for e in stream.files.values())
    plain, merged = triage([str(HANG)], rules), triage([str(out)], rules)
    assert merged.root_cause is not None and plain.root_cause is not None
    assert (merged.outcome, merged.root_cause.ranks) == (plain.outcome, plain.root_cause.ranks)
    assert [r.status for r in merged.ranks] == [r.status for r in plain.ranks]


def test_publish_never_writes_into_a_watched_directory(rules: list[Rule], tmp_path: Path) -> None:
    log_dir = tmp_path / "msrun_log"
    shutil.copytree(HANG, log_dir)
    with pytest.raises(UsageError, match="never writes there"):
        watcher(log_dir, rules, publish=str(log_dir / "pub"))


def test_a_watcher_without_a_snapshot_yet_says_so(rules: list[Rule], tmp_path: Path) -> None:
    h = watcher(tmp_path / "not-yet", rules, metrics_port=0)
    try:
        h.start()
        assert h.metrics_url is not None
        assert get(h.metrics_url.replace("/metrics", "/facts"))[0] == 503
    finally:
        h.close()


def test_info_metrics_join_ranks_to_host_device_and_pid(rules: list[Rule]) -> None:
    """The node holding the scheduler's log also says how many ranks registered."""
    h = watcher(HANG, rules, metrics_port=0)
    try:
        settle(h)
        text = generate_latest(h.registry).decode()
    finally:
        h.close()
    host = h.node.host if h.node is not None else ""
    assert f'msrunwatch_info{{host="{host}"' in text
    infos = re.findall(
        r'msrunwatch_rank_info\{device="(\d*)",host="([^"]*)",pid="(\d+)",rank="(\d+)"', text
    )
    assert sorted((int(r), d, h) for d, h, _, r in infos) == [
        (n, str(n), host)
        for n in range(4)  # the scheduler's table gives the devices
    ]
    assert "msrunwatch_registered_ranks 4.0" in text
    assert "msrunwatch_expected_ranks 4.0" in text


def test_a_node_of_8_ranks_exports_at_most_300_series() -> None:
    """Every per-rank figure present, a root cause on all 8 ranks: the worst case."""
    ranks = tuple(
        RankReport(
            rank=n,
            log_dir="d",
            file=f"worker_{n}.log",
            status=Status.TRAINING,
            pid=100 + n,
            host="node-1",
            memory=MemorySummary(1, 2, None, 3, 4, 5, None),
            compile=CompileStats(count=1, total_ms=5.0),
            progress=Progress(step=10, loss=0.5),
        )
        for n in range(8)
    )
    cause = RootCause(tuple(range(8)), "oom", "r", "d", "f", 1, None, "m", "why")
    report = Report(("d",), "failed", cause, ranks, ())
    table = tuple(Registration(str(n), n, "node-1", 2048, n) for n in range(8))
    collector = RunCollector(lambda: 0.0)
    silence = dict.fromkeys(range(8), 1.0)
    collector.snapshot = Snapshot(report, silence, 0.0, 1, 9, True, "node-1", table)
    series = [m for family in collector.collect() for m in family.samples]
    assert len(series) <= 300, len(series)
    stated = re.search(r"a root cause on\nevery rank: (\d+)\)", README.read_text(encoding="utf-8"))
    assert stated is not None and int(stated[1]) == len(series), "the README states the count"
    info = [m for m in series if m.name == "msrunwatch_rank_info"]
    assert {(m.labels["rank"], m.labels["device"], m.labels["pid"]) for m in info} == {
        (str(n), str(n), str(100 + n)) for n in range(8)
    }
