"""`watch --cluster`: every node's snapshot pulled, merged and judged as `triage FACTS...`
judges them; each node reporting, stale, blind or ended; a blind node never healthy;
hostile answers bounded and named, never hiding the other nodes; a restart loses nothing."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.drivers.triage import find_logs, scan_all, triage
from msrunwatch.judge.model import Report, Status
from msrunwatch.live.cluster.feeds import BLIND, ENDED, REPORTING, STALE
from msrunwatch.live.cluster.run import ClusterRun
from msrunwatch.live.cluster.sources import Sources
from msrunwatch.live.cluster.view import Options
from msrunwatch.live.headless import Headless, HeadlessOptions
from msrunwatch.live.snapshot import AGE_HEADER, Snapshots, node_info
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, HANG_S, ROOT, before_shutdown

TWO = FIXTURES / "cpu_2nodes_noderank_ok"
HANG = FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout" / "msrun_log"


def snapshot(
    folder: Path, host: str, rules: list[Rule], final: bool = False, quiet_s: float = 5.0
) -> bytes:
    """What a watcher of `folder` on `host` serves once it has read it all, its files
    quiet for `quiet_s` seconds."""
    facts = scan_all(find_logs([str(folder)]), rules)
    snaps = Snapshots(node_info(host, [str(folder)], rules))
    snaps.offer([(f, time.time() - quiet_s) for f in facts], final=final)
    built = snaps.current()
    assert built is not None
    return built.body


class Stub:
    """A node's watcher as the central view sees it: /facts answered as told."""

    def __init__(self, body: bytes = b"", age: float = 0.5, mode: str = "ok") -> None:
        self.body, self.age, self.mode, self.etag = body, age, mode, '"1"'
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stub.serve(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def serve(self, h: BaseHTTPRequestHandler) -> None:
        if h.headers.get("If-None-Match") == self.etag and self.mode == "ok":
            h.send_response(304)
            h.send_header(AGE_HEADER, str(self.age))
            h.end_headers()
            return
        h.send_response(200)
        h.send_header("ETag", self.etag)
        h.send_header(AGE_HEADER, str(self.age))
        h.end_headers()
        with contextlib.suppress(OSError):
            self._body(h)

    def _body(self, h: BaseHTTPRequestHandler) -> None:
        if self.mode == "ok":
            h.wfile.write(self.body)
        elif self.mode == "trickle":  # one byte at a time, for ever
            while True:
                h.wfile.write(b"{")
                h.wfile.flush()
                time.sleep(0.05)
        elif self.mode == "endless":  # valid-looking records without end
            line = self.body.splitlines()[0] + b"\n"
            while True:
                h.wfile.write(line * 64)
        elif self.mode == "huge":
            h.wfile.write(b'{"kind":"node",' + b"x" * (3 << 20) + b"\n" + self.body)
        elif self.mode == "garbage":
            h.wfile.write(b"\x00\xff not facts at all\n" * 1000)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stubs() -> Iterator[list[Stub]]:
    made: list[Stub] = []
    yield made
    for stub in made:
        stub.stop()


def central(sources: list[str], rules: list[Rule], **given: Any) -> ClusterRun:
    """A central view polling at every tick; its fetches wait long enough for a busy
    machine (the hostile test gives its own bound)."""
    settings = {"interval_s": 0.0, "timeout_s": 30.0, **given}
    return ClusterRun(Sources(sources), Options(rules), **settings)


def published(folder: Path, rules: list[Rule]) -> None:
    """The real two-node run's snapshots, as its watchers --publish them."""
    for host in ("node0", "node1"):
        body = snapshot(TWO / host / "msrun_log", host, rules)
        (folder / f"{host}.facts.jsonl").write_bytes(body)


def nodes(report: Report) -> dict[str, str]:
    return {n.name: n.live or "" for n in report.nodes}


def test_two_nodes_judged_as_triage_judges_their_facts(
    rules: list[Rule], stubs: list[Stub], tmp_path: Path
) -> None:
    bodies = {h: snapshot(TWO / h / "msrun_log", h, rules) for h in ("node0", "node1")}
    stubs += [Stub(bodies["node0"]), Stub(bodies["node1"])]
    run = central([s.address for s in stubs], rules)
    report = run.tick().report
    run.close()
    for host, body in bodies.items():
        (tmp_path / f"{host}.facts.jsonl").write_bytes(body)
    after = triage([str(tmp_path)], rules)
    assert nodes(report) == {"node0": REPORTING, "node1": REPORTING}
    assert report.outcome == after.outcome == "ok"
    assert [(r.rank, r.status) for r in report.ranks] == [(r.rank, r.status) for r in after.ranks]


def test_a_run_quiet_for_hours_gets_the_verdict_triage_gives_its_facts(
    rules: list[Rule], tmp_path: Path
) -> None:
    """The trial's N22: node1 of a two-node run lost whole, its logs hours old; the live
    view named ranks 0 and 2 `waiting` and rank 3 alone failed, while `triage` of the same
    facts said the node was lost whole. Past the stall threshold the view judges post
    mortem, as triage does at this clock."""
    lost = FIXTURES / "cpu_2nodes_node1_killed"
    for host in ("node0", "node1"):
        body = snapshot(lost / host / "msrun_log", host, rules, quiet_s=3 * 3600.0)
        (tmp_path / f"{host}.facts.jsonl").write_bytes(body)
    run = central([str(tmp_path)], rules)
    report = run.tick().report
    run.close()
    after = triage([str(tmp_path)], rules)
    assert report.root_cause is not None and after.root_cause is not None
    assert report.root_cause.ranks == after.root_cause.ranks == (2, 3)
    assert "the node was lost whole" in report.root_cause.reason
    statuses = {r.rank: r.status for r in report.ranks}
    assert statuses == {r.rank: r.status for r in after.ranks}
    assert Status.WAITING not in statuses.values()
    assert nodes(report) == {"node0": REPORTING, "node1": REPORTING}


def test_a_run_quiet_for_less_than_the_threshold_is_still_judged_live(
    rules: list[Rule], tmp_path: Path
) -> None:
    """Rank 0 waits while the job may go on; once node 0's scheduler gave up on it (its
    shutdown found the abnormal nodes), msrun stops it: `killed`, live too."""
    lost = tmp_path / "logs"
    shutil.copytree(FIXTURES / "cpu_2nodes_node1_killed", lost)
    shutdown = before_shutdown(lost / "node0" / "msrun_log" / "scheduler.log")
    assert central_status(lost, rules, tmp_path / "before")[0] is Status.WAITING
    with (lost / "node0" / "msrun_log" / "scheduler.log").open("ab") as fh:
        fh.write(shutdown)
    assert central_status(lost, rules, tmp_path / "after")[0] is Status.KILLED


def central_status(lost: Path, rules: list[Rule], facts: Path) -> dict[int, Status]:
    """Each rank's status in the central view of both nodes' facts, quiet for 30 s."""
    facts.mkdir()
    for host in ("node0", "node1"):
        body = snapshot(lost / host / "msrun_log", host, rules, quiet_s=30.0)
        (facts / f"{host}.facts.jsonl").write_bytes(body)
    run = central([str(facts)], rules)
    report = run.tick().report
    run.close()
    return {r.rank: r.status for r in report.ranks}


def test_a_killed_watcher_is_blind_and_its_ranks_never_look_healthy(
    rules: list[Rule], stubs: list[Stub]
) -> None:
    """Its last snapshot is kept (nothing is lost), but what its ranks do now is unknown."""
    running = snapshot(HANG, "node0", rules)
    stubs += [Stub(running)]
    run = central([stubs[0].address], rules)
    first = run.tick().report
    assert nodes(first) == {"node0": REPORTING}
    findings = {f.rule for f in first.findings}
    stubs[0].stop()
    stubs.clear()
    later = run.tick().report
    run.close()
    assert nodes(later) == {"node0": BLIND}
    statuses = {r.rank: r.status for r in later.ranks}
    assert statuses[2] is Status.UNKNOWN  # it was waiting: what it does now is not known
    assert [statuses[r] for r in (0, 1, 3)] == [Status.TIMED_OUT] * 3  # ended: kept
    assert {f.rule for f in later.findings} == findings


def test_a_blind_node_with_active_ranks_makes_them_unknown(
    rules: list[Rule], stubs: list[Stub], tmp_path: Path
) -> None:
    stubs += [Stub(snapshot(training(tmp_path), "node1", rules))]
    run = central([stubs[0].address], rules)
    assert run.tick().report.ranks[0].status is Status.TRAINING
    stubs[0].stop()
    stubs.clear()
    report = run.tick().report
    run.close()
    assert nodes(report) == {"node1": BLIND}
    (rank,) = report.ranks
    assert rank.status is Status.UNKNOWN
    assert "node node1 blind" in rank.status_reason and "connection refused" in rank.status_reason
    assert report.outcome != "ok"


def training(tmp_path: Path) -> Path:
    """Node 1 of the real two-node run, cut while its rank 2 still trains."""
    log_dir = tmp_path / "node1" / "msrun_log"
    log_dir.mkdir(parents=True)
    text = (TWO / "node1" / "msrun_log" / "worker_2.log").read_text()
    (log_dir / "worker_2.log").write_text(text[: text.index("epoch: 1 step: 3")])
    return log_dir


def test_an_old_snapshot_is_stale(rules: list[Rule], stubs: list[Stub], tmp_path: Path) -> None:
    stubs += [Stub(snapshot(training(tmp_path), "node1", rules), age=100.0)]
    run = central([stubs[0].address], rules)
    report = run.tick().report
    run.close()
    assert nodes(report) == {"node1": STALE}
    assert report.ranks[0].status is Status.UNKNOWN and "100 s old" in report.ranks[0].status_reason


def fetched(rules: list[Rule], stubs: list[Stub], timeout_s: float) -> tuple[Report, list[Any]]:
    """One tick of a central view over the stubs (the first a good node): its report, and
    each stub's feed state in the stubs' order. Every node, the good one included, is named."""
    run = central([s.address for s in stubs], rules, timeout_s=timeout_s, max_bytes=6 << 20)
    report = run.tick().report
    run.close()
    states = {s.feed.label: s for s in run.states.values()}
    assert states[stubs[0].address].state(time.monotonic())[0] == REPORTING
    assert "node0" in nodes(report) and report.ranks
    return report, [states[s.address] for s in stubs]


def test_an_answer_without_end_meets_the_deadline_and_hides_no_other_node(
    rules: list[Rule], stubs: list[Stub]
) -> None:
    """A node that trickles a byte at a time is cut at the fetch deadline: its own outcome
    whatever the machine's speed (no answer ever ends)."""
    good = snapshot(TWO / "node0" / "msrun_log", "node0", rules)
    stubs += [Stub(good), Stub(good, mode="trickle")]
    _, (_, trickle) = fetched(rules, stubs, timeout_s=20.0)
    assert trickle.error and "no whole answer within 20 s" in trickle.error


def test_oversized_and_foreign_answers_meet_their_bounds_and_hide_no_other_node(
    rules: list[Rule], stubs: list[Stub]
) -> None:
    """An endless, a huge and a garbage answer each meet their byte or record bound. The
    deadline is only a net (HANG_S): with 20 s, a loaded machine could reach it before the
    6 MiB bound, and the endless answer would read as the trickling one."""
    good = snapshot(TWO / "node0" / "msrun_log", "node0", rules)
    stubs += [Stub(good)] + [Stub(good, mode=m) for m in ("endless", "huge", "garbage")]
    began = time.monotonic()
    report, (_, endless, huge, garbage) = fetched(rules, stubs, timeout_s=HANG_S)
    assert time.monotonic() - began < HANG_S, "an answer met the deadline, not its bound"
    assert endless.error and "over 6 MiB" in endless.error
    assert huge.held is not None and any("over 1 MiB" in p for p in huge.held.problems)
    assert garbage.held is not None and any("not facts" in p for p in garbage.held.problems)
    assert "not facts records" in "\n".join(report.warnings)


def test_a_node_claiming_another_nodes_ranks_is_named(rules: list[Rule], stubs: list[Stub]) -> None:
    """node9 sends the ranks the scheduler registered on vm (the host of the real run)."""
    real = snapshot(HANG, "vm", rules)
    impostor = snapshot(HANG, "node9", rules)
    stubs += [Stub(real), Stub(impostor)]
    run = central([s.address for s in stubs], rules)
    report = run.tick().report
    run.close()
    assert "node9 sent ranks the scheduler registered on vm" in report.warnings
    for rank in range(4):
        (twice,) = [w for w in report.warnings if f"rank {rank} has logs from two" in w]
        assert "vm:" in twice and "node9:" in twice
    assert nodes(report) == {"vm": REPORTING, "node9": REPORTING}


def test_a_restarted_central_view_has_the_whole_picture_after_one_poll(
    rules: list[Rule], tmp_path: Path
) -> None:
    published(tmp_path, rules)
    first = central([str(tmp_path)], rules)
    for _ in range(3):
        before = first.tick().report
    first.close()
    again = central([str(tmp_path)], rules)
    after = again.tick().report
    again.close()
    assert nodes(after) == nodes(before) == {"node0": REPORTING, "node1": REPORTING}
    assert [(r.rank, r.status) for r in after.ranks] == [(r.rank, r.status) for r in before.ranks]


def test_a_watcher_gone_after_its_ranks_finished_is_ended(
    rules: list[Rule], stubs: list[Stub]
) -> None:
    stubs += [Stub(snapshot(TWO / "node1" / "msrun_log", "node1", rules))]
    run = central([stubs[0].address], rules)
    run.tick()
    stubs[0].stop()
    stubs.clear()
    report = run.tick().report
    run.close()
    assert nodes(report) == {"node1": ENDED}
    assert {r.status for r in report.ranks} == {Status.FINISHED}


def test_a_final_snapshot_is_ended(rules: list[Rule], tmp_path: Path) -> None:
    body = snapshot(TWO / "node1" / "msrun_log", "node1", rules, final=True)
    (tmp_path / "node1.facts.jsonl").write_bytes(body)
    run = central([str(tmp_path)], rules)
    assert nodes(run.tick().report) == {"node1": ENDED}
    run.close()


def test_the_hook_runs_once_per_cause_not_per_symptom(
    rules: list[Rule], stubs: list[Stub], tmp_path: Path
) -> None:
    stubs += [Stub(snapshot(HANG, "node0", rules))]
    run = central([stubs[0].address], rules)
    calls = tmp_path / "calls"
    command = f"{sys.executable} -c \"import os;open({str(calls)!r},'a').write(os.environ['MSRUNWATCH_RULE']+chr(10))\""
    options = HeadlessOptions(on_finding=command, hook_on_cause=True)
    h = Headless(run, options, out=io.StringIO(), err=io.StringIO(), tick_s=0.01)
    for _ in range(4):
        h.step()
    report = h.report
    h.close()
    assert report is not None and report.root_cause is not None
    symptoms = [f for f in report.findings if f.role != "root-cause" and f.severity == "error"]
    assert symptoms, "the run has symptoms the hook must not run for"
    assert calls.read_text().splitlines() == [report.root_cause.rule]


def test_node_state_events_name_the_node_and_its_ranks(
    rules: list[Rule], stubs: list[Stub]
) -> None:
    stubs += [Stub(snapshot(HANG, "node0", rules))]
    run = central([stubs[0].address], rules)
    out = io.StringIO()
    h = Headless(run, HeadlessOptions(), out=out, err=io.StringIO(), tick_s=0.01)
    h.step()
    stubs[0].stop()
    stubs.clear()
    h.step()
    h.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    states = [(e["host"], e["state"], e["previous"]) for e in events if e["event"] == "node_state"]
    assert states == [("node0", REPORTING, None), ("node0", BLIND, REPORTING)]


def msrunwatch(*args: str) -> subprocess.CompletedProcess[str]:
    """The command, without a terminal."""
    command = [sys.executable, "-m", "msrunwatch", *args]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL
    )


def test_without_a_terminal_the_command_prints_one_polls_verdict(
    rules: list[Rule], tmp_path: Path
) -> None:
    published(tmp_path, rules)
    done = msrunwatch("watch", "--cluster", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK") and "nodes: 2 reporting (facts: 2 complete)" in done.stdout


def test_a_source_that_is_none_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = msrunwatch("watch", "--cluster", "no such thing")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--cluster no such thing" in done.stderr
