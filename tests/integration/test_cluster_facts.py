"""`msrunwatch facts` on each node, `msrunwatch triage` over all the facts: the same verdict
as triage of the logs themselves, and the cluster scenarios of bench/ at a small size."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers.facts import stream_lines
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, ROOT

SCENARIOS = sorted(
    p.parent
    for p in FIXTURES.glob("*/expected.yaml")
    if not p.parent.name.startswith("public") and (p.parent / "msrun_log").is_dir()
)


def verdict(report: Report) -> tuple[object, ...]:
    cause = report.root_cause
    statuses = tuple((r.rank, r.status.value, r.exit_code) for r in report.ranks)
    return (
        report.outcome,
        cause and cause.ranks,
        cause and cause.category,
        cause and cause.rule,
        statuses,
        tuple((f.rule, f.role, f.ranks) for f in report.findings),
    )


def facts_file(
    folder: Path, out: Path, host: str, rules: list[Rule], consoles: tuple[str, ...] = ()
) -> Path:
    lines, _, _ = stream_lines([str(folder)], rules, host, None, consoles)
    out.write_text("".join(line + "\n" for line in lines))
    return out


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: p.name)
def test_facts_of_one_node_give_its_triage(folder: Path, rules: list[Rule], tmp_path: Path) -> None:
    """The facts path against the logs path, on every real and synthetic run: the same
    outcome, root cause, statuses and findings."""
    consoles = tuple(str(p) for p in folder.glob("msrun_console.txt"))
    plain = triage([str(folder / "msrun_log")], rules, consoles)
    facts = facts_file(folder / "msrun_log", tmp_path / "n.facts.jsonl", "n0", rules, consoles)
    merged = triage([str(facts)], rules)
    assert verdict(merged) == verdict(plain)
    assert [n.state for n in merged.nodes] == ["complete"]


@pytest.mark.parametrize("name", ["cpu_2nodes_noderank_ok", "synth_multinode_no_node_rank"])
def test_facts_of_each_node_give_the_multi_node_triage(
    name: str, rules: list[Rule], tmp_path: Path
) -> None:
    base = FIXTURES / name
    nodes = sorted(base.glob("node*/msrun_log"))
    consoles = [str(base / f"{n.parent.name}_console.txt") for n in nodes]
    plain = triage([str(n) for n in nodes], rules, consoles)
    for node, console in zip(nodes, consoles):
        host = f"ascend-{node.parent.name}"
        facts_file(node, tmp_path / f"{host}.facts.jsonl", host, rules, (console,))
    merged = triage([str(tmp_path)], rules)
    assert verdict(merged) == verdict(plain)
    assert [n.state for n in merged.nodes] == ["complete", "complete"]


def _bench(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every cluster scenario of bench/cluster_scenarios.py, 6 nodes x 2 ranks."""
    sim = _bench("cluster_scenarios")
    top = tmp_path_factory.mktemp("sim")
    shape = sim.Shape(6, 2)
    rules = sim._rules()
    for name, build in sim.SCENARIOS.items():
        if name == "hostile-facts":
            sim.hostile_facts(top / name, shape, rules, count=20_000)
        else:
            build(top / name, shape, rules)
    return top


SIMULATED = [
    "hang", "two-faults", "two-faults-no-scheduler", "oom-hccl", "node-lost", "never-joined",
    "no-node-rank", "container-pids", "healthy", "shared-shard", "faulty-facts",
    "hostile-facts", "prefixes",
]  # fmt: skip


@pytest.mark.parametrize("name", SIMULATED)
def test_each_cluster_scenario_is_right(simulated: Path, name: str) -> None:
    bench = _bench("bench_cluster")
    ok, said, report, *_ = bench.verdict(simulated / name)
    assert ok, said
    if name == "healthy":
        assert not [f for f in report["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize(
    "name", ["hang", "two-faults", "no-node-rank", "shared-shard", "faulty-facts"]
)
def test_every_registered_node_gets_an_interval_holding_its_true_offset(
    simulated: Path, name: str
) -> None:
    bench = _bench("bench_cluster")
    total, inside, _, _ = bench.clock_check(simulated / name)
    assert total >= 5 and inside == total


REAL_MULTI_NODE = [
    "cpu_2nodes_noderank_ok", "cpu_2nodes_no_node_rank_ok", "cpu_2nodes_node1_killed",
    "cpu_2nodes_no_node_rank_node1_killed", "cpu_2nodes_node1_utc8",
    "cpu_2nodes_two_faults_node1_clock_behind", "cpu_wrong_master_addr_node1",
]  # fmt: skip
NEVER_REGISTERED = {"cpu_wrong_master_addr_node1": 1}
"""Nodes of a run that never registered (a wrong master address): they have no bracket."""


def test_the_real_multi_node_runs_are_all_checked() -> None:
    bench = _bench("bench_cluster")
    assert [p.name for p in bench.real_multi_node()] == sorted(REAL_MULTI_NODE)


@pytest.mark.parametrize("name", REAL_MULTI_NODE)
def test_every_node_of_a_real_run_gets_an_interval_holding_its_true_offset(name: str) -> None:
    """Two msrun nodes on one host; node 1 8 h ahead (TZ) or 5 s behind (libfaketime) in
    two of them: each node that registered gets a bracket, and it holds its true offset."""
    bench = _bench("bench_cluster")
    nodes, bracketed, inside, widest, _ = bench.real_clock_check(FIXTURES / name)
    assert nodes - NEVER_REGISTERED.get(name, 0) == bracketed == inside
    assert widest < 50.0  # milliseconds: a registration handshake on one host


def test_two_faults_on_skewed_clocks_are_ordered_by_the_measured_offset(rules: list[Rule]) -> None:
    """Rank 2's fault is logged 4.6 s before rank 0's on its node's clock (5 s behind), and
    happened 0.4 s after it: logs copied to one place and facts merged both say rank 0."""
    base = FIXTURES / "cpu_2nodes_two_faults_node1_clock_behind"
    nodes = [str(base / f"node{k}/msrun_log") for k in (0, 1)]
    report = triage(nodes, rules)
    assert report.root_cause is not None and report.root_cause.ranks == (0,)
    assert "rank(s) 2 hit the same fault later" in report.root_cause.reason


def triage_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`msrunwatch triage ARGS...` in this process: exit code and standard output."""
    code = main(["triage", *args])
    return code, capsys.readouterr().out


def test_the_two_faults_without_clocks_are_a_tie_said_so(
    simulated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = triage_cli(capsys, str(simulated / "two-faults-no-scheduler" / "facts"))
    assert code == 1
    assert "within the clock uncertainty (±1,000 ms): their order is not known" in out


def test_a_lost_node_is_named_with_its_ranks_and_never_blamed_as_silent(
    simulated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = triage_cli(capsys, str(simulated / "node-lost" / "facts"), "--format", "json")
    report = json.loads(out)
    missing = [n for n in report["nodes"] if n["state"] == "missing"]
    assert [(n["host"], n["ranks"]) for n in missing] == [("node-003", [6, 7])]
    assert report["root_cause"]["rule"] == "cause-not-in-logs"
    assert report["root_cause"]["ranks"] == [6, 7]
    said = "node node-003 (ranks 6-7): missing, no facts from this node; the scheduler timed out rank 6"
    assert said in report["warnings"]


def test_a_healthy_run_with_a_node_missing_is_never_ok(
    simulated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = sorted((simulated / "healthy" / "facts").glob("*.facts.jsonl"))
    for path in facts[:-1]:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    code, out = triage_cli(capsys, str(tmp_path), "--format", "json")
    report = json.loads(out)
    assert report["outcome"] == "unknown" and code == 0
    assert [n["host"] for n in report["nodes"] if n["state"] == "missing"] == ["node-005"]
