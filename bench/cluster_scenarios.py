#!/usr/bin/env python3
"""The cluster scenarios: simulated jobs (bench/cluster_sim.py), each node's facts as
`msrunwatch facts` writes them, the faults a scenario injects into them, and what the
verdict must say (`expected.yaml`, as the fixtures').

    python bench/cluster_scenarios.py OUT --nodes 256 --per-node 8 [--only hang,healthy]

| scenario | built from | the verdict must say |
|---|---|---|
| hang | cpu_dp4_hang_rank2_allreduce_timeout | stalled, the hung rank (its node's clock -3 s) |
| two-faults | cpu_two_faults_rank0_rank1 | the first fault's rank; the second's node 1 s behind |
| two-faults-no-scheduler | the same, no scheduler.log collected | both ranks: a tie |
| oom-hccl | synth_hccl_ei0006_after_oom_8p (synthetic) | oom on its rank; EI0006 victims |
| node-lost | hang, the hung rank's node sends nothing | that node named missing, no victim blamed |
| never-joined | cpu_cluster_timeout_missing_node | cluster-init-timeout, the absent node's ranks |
| no-node-rank | hang without --node_rank (worker_<local>.log, UUIDs) | as hang |
| container-pids | hang with the same pids on every node | as hang |
| faulty-facts | hang; facts cut, duplicated, of another rule set; a node +8 h | as hang, says so |
| healthy | cpu_2nodes_noderank_ok | ok, no error finding |
| hostile-facts | hang, with hostile facts files beside | as hang, bounded |
| shared-shard | hang's logs in one shared directory, read by 8 shards | as hang |
| prefixes | hang's facts through srun -l, pdsh and kubectl --prefix, interleaved | as hang |
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster_sim import Base, Job, offsets, write_logs

HANG = "cpu_dp4_hang_rank2_allreduce_timeout"
TWO = "cpu_two_faults_rank0_rank1"
OOM = "synth_hccl_ei0006_after_oom_8p"
NEVER = "cpu_cluster_timeout_missing_node"
HEALTHY = "cpu_2nodes_noderank_ok"


@dataclass(frozen=True)
class Shape:
    nodes: int
    per_node: int
    seed: int = 1

    @property
    def ranks(self) -> int:
        return self.nodes * self.per_node

    def node_at(self, share: float) -> int:
        """A node part of the way along (not node 0: the scheduler's)."""
        return max(1, min(self.nodes - 1, int(self.nodes * share)))

    def distinct(self, shares: tuple[float, ...], avoid: set[int]) -> list[int]:
        """Different nodes about these parts of the way along (none of `avoid`, not 0)."""
        free = [k for k in range(1, self.nodes) if k not in avoid]
        picked: list[int] = []
        for share in shares:
            left = [k for k in free if k not in picked]
            picked.append(min(left, key=lambda k: abs(k - share * self.nodes)))
        return picked

    def rank_on(self, node: int, local: int) -> int:
        return node * self.per_node + min(local, self.per_node - 1)


def _rules() -> list[object]:
    from msrunwatch.rules.loader import load_rules

    return load_rules()  # type: ignore[return-value]


def write_facts(
    dirs: list[Path], out: Path, hosts: list[str], rules: list[object], shards: int = 0
) -> None:
    """What `msrunwatch facts DIR -o out/` writes on each node (or on each of `shards`
    nodes sharing one directory), run in this process to spare 256 start-ups."""
    from msrunwatch.drivers.facts import SUFFIX, stream_lines

    out.mkdir(parents=True, exist_ok=True)
    jobs = (
        [(d, h, None) for d, h in zip(dirs, hosts)]
        if not shards
        else [(dirs[0], hosts[k], (k, shards)) for k in range(shards)]
    )
    for folder, host, shard in jobs:
        lines, _, _ = stream_lines([str(folder)], rules, host, shard)  # type: ignore[arg-type]
        name = host if shard is None else f"{host}.shard-{shard[0]}-of-{shard[1]}"
        (out / f"{name}{SUFFIX}").write_text("".join(line + "\n" for line in lines))


def _expected(folder: Path, **fields: object) -> None:
    lines = [f"{k}: {json.dumps(v)}" for k, v in fields.items()]
    (folder / "expected.yaml").write_text("\n".join(lines) + "\n")


def _truth(folder: Path, job: Job, **more: object) -> None:
    truth = {
        "base": job.base.name,
        "synthetic": job.base.synthetic,
        "nodes": job.nodes,
        "per_node": job.per_node,
        "culprit": job.culprit,
        "offsets_s": {
            job.host(k): v for k, v in enumerate(job.offsets) if k not in job.absent_nodes
        },
        **more,
    }
    (folder / "truth.json").write_text(json.dumps(truth, indent=1))


def _build(
    folder: Path, job: Job, rules: list[object], shared: bool = False, shards: int = 0
) -> list[Path]:
    if folder.exists():
        shutil.rmtree(folder)
    dirs = write_logs(job, folder / "logs", shared=shared)
    hosts = [job.host(k) for k in range(job.nodes)]
    write_facts(dirs, folder / "facts", hosts, rules, shards)
    return dirs


def hang_job(shape: Shape, **changes: object) -> Job:
    node = shape.node_at(137 / 256)
    forced = {node: -3.0}
    job = Job(
        Base.load(HANG), shape.nodes, shape.per_node, culprit=shape.rank_on(node, 3),
        culprit_base=2, offsets=offsets(shape.nodes, 0.2, shape.seed, forced), unique_pids=True,
    )  # fmt: skip
    return replace(job, **changes)  # type: ignore[arg-type]


def hang(folder: Path, shape: Shape, rules: list[object], **changes: object) -> None:
    job = hang_job(shape, **changes)
    _build(folder, job, rules)
    _truth(folder, job)
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["stalled"])


def two_faults(folder: Path, shape: Shape, rules: list[object], scheduler: bool = True) -> None:
    a, b = shape.node_at(0.25), shape.node_at(0.75)
    first, second = shape.rank_on(a, 0), shape.rank_on(b, 5)
    job = Job(
        Base.load(TWO), shape.nodes, shape.per_node, culprit=first, culprit_base=0,
        second=(1, second), victim_base=0,
        offsets=offsets(shape.nodes, 0.05, shape.seed, {a: 0.0, b: -1.0}), unique_pids=True,
    )  # fmt: skip
    dirs = _build(folder, job, rules)
    if not scheduler:  # the master's scheduler.log was not collected
        (dirs[0] / "scheduler.log").unlink()
        write_facts(dirs[:1], folder / "facts", [job.host(0)], rules)
    _truth(folder, job, second=second)
    ranks = [first] if scheduler else [first, second]
    _expected(folder, outcome="failed", root_cause_ranks=ranks, categories=["python-exception"],
              other_failed_ranks=[second] if scheduler else [])  # fmt: skip


def oom_hccl(folder: Path, shape: Shape, rules: list[object]) -> None:
    node = shape.node_at(200 / 256)
    job = Job(
        Base.load(OOM), shape.nodes, shape.per_node, culprit=shape.rank_on(node, 3),
        culprit_base=3, offsets=offsets(shape.nodes, 0.2, shape.seed), unique_pids=True,
    )  # fmt: skip
    _build(folder, job, rules)
    _truth(folder, job)
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["oom"])


def from_hang(folder: Path, shape: Shape, rules: list[object]) -> Job:
    """The hang scenario's logs and facts, reused when it was built beside this one at the
    same size (its logs linked, its facts copied), built here otherwise."""
    job = hang_job(shape)
    hang_dir = folder.parent / "hang"
    truth = hang_dir / "truth.json"
    if folder.exists():
        shutil.rmtree(folder)
    if truth.exists() and json.loads(truth.read_text())["nodes"] == shape.nodes:
        folder.mkdir(parents=True)
        (folder / "logs").symlink_to((hang_dir / "logs").resolve())
        shutil.copytree(hang_dir / "facts", folder / "facts")
    else:
        _build(folder, job, rules)
    return job


def node_lost(folder: Path, shape: Shape, rules: list[object]) -> None:
    job = from_hang(folder, shape, rules)
    lost = job.culprit // job.per_node  # type: ignore[operator]
    (folder / "facts" / f"{job.host(lost)}.facts.jsonl").unlink()
    ranks = list(range(lost * job.per_node, (lost + 1) * job.per_node))
    _truth(folder, job, lost_node=job.host(lost))
    _expected(folder, outcome="failed", root_cause_ranks=ranks, categories=["unclassified"],
              missing_nodes=[job.host(lost)])  # fmt: skip


def never_joined(folder: Path, shape: Shape, rules: list[object]) -> None:
    absent = shape.node_at(129 / 256)
    job = Job(
        Base.load(NEVER), shape.nodes, shape.per_node,
        offsets=offsets(shape.nodes, 0.2, shape.seed),
        unique_pids=True, absent_nodes=frozenset({absent}),
    )  # fmt: skip
    _build(folder, job, rules)
    ranks = list(range(absent * job.per_node, (absent + 1) * job.per_node))
    _truth(folder, job, absent_node=job.host(absent))
    _expected(folder, outcome="failed", root_cause_ranks=ranks, categories=["cluster-init-timeout"])


def healthy(folder: Path, shape: Shape, rules: list[object]) -> None:
    job = Job(
        Base.load(HEALTHY), shape.nodes, shape.per_node,
        offsets=offsets(shape.nodes, 0.2, shape.seed), unique_pids=True,
    )  # fmt: skip
    _build(folder, job, rules)
    _truth(folder, job)
    _expected(folder, outcome="ok", root_cause_ranks=[], categories=[])


def shared_shard(folder: Path, shape: Shape, rules: list[object]) -> None:
    job = hang_job(shape)
    _build(folder, job, rules, shared=True, shards=min(8, shape.nodes))
    _truth(folder, job)
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["stalled"])


def faulty_facts(folder: Path, shape: Shape, rules: list[object]) -> None:
    """A node's facts cut short (no `end`), one node's sent twice (and collected twice),
    one extracted with another rule set, and one node whose logs are 8 h ahead (a
    container on UTC+8 beside hosts on UTC): the verdict is the hang's, and says so."""
    culprit_node = shape.node_at(137 / 256)
    cut, twice, other, ahead = shape.distinct((0.1, 0.3, 0.4, 0.9), avoid={culprit_node})
    job = hang_job(shape)
    forced = {culprit_node: -3.0, ahead: 8 * 3600.0}
    job = replace(job, offsets=offsets(shape.nodes, 0.2, shape.seed, forced))
    dirs = _build(folder, job, rules)
    facts = folder / "facts"
    path = facts / f"{job.host(cut)}.facts.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: max(1, len(lines) // 2)]))
    shutil.copy(
        facts / f"{job.host(twice)}.facts.jsonl", facts / f"{job.host(twice)}.copy.facts.jsonl"
    )
    write_facts([dirs[twice]], folder / "again", [job.host(twice)], rules)
    shutil.move(
        str(folder / "again" / f"{job.host(twice)}.facts.jsonl"),
        facts / f"{job.host(twice)}.again.facts.jsonl",
    )
    shutil.rmtree(folder / "again")
    path = facts / f"{job.host(other)}.facts.jsonl"
    text = path.read_text()
    path.write_text(text.replace('"rules_digest":"', '"rules_digest":"0ther', 1))
    _truth(folder, job, truncated=job.host(cut), duplicated=job.host(twice),
           other_rules=job.host(other), ahead_8h=job.host(ahead))  # fmt: skip
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["stalled"],
              partial_nodes=[job.host(cut)], warnings_contain=["another rule set"])  # fmt: skip


def hostile(folder: Path, count: int) -> None:
    """Hostile facts files beside the real ones: not JSON, torn, a 2 MiB line, deep
    nesting, a flood of `count` records, a time far in the future, an impostor."""
    facts = folder / "facts"
    rng = random.Random(5)
    junk = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))) for _ in range(200)]
    (facts / "junk.facts.jsonl").write_bytes(b'{"kind":"node"}\n' + b"\n".join(junk) + b"\n")
    first = (facts / "node-001.facts.jsonl").read_text().splitlines()
    torn = [line[: len(line) // 2] for line in first]
    (facts / "torn.facts.jsonl").write_text("\n".join(first[:1] + torn) + "\n")
    (facts / "long.facts.jsonl").write_text(
        '{"kind":"node","x":"' + "a" * (2 << 20) + '"}\n' + first[0] + "\n"
    )
    (facts / "deep.facts.jsonl").write_text(
        first[0] + "\n" + "[" * 200_000 + "]" * 200_000 + "\n" + '{"kind":' * 50_000 + "\n"
    )
    head = '{"kind":"group","schema":1,"host":"flood","stream":"f100d","seq":'
    with (facts / "flood.facts.jsonl").open("w") as fh:
        fh.write(
            '{"kind":"node","schema":1,"host":"flood","stream":"f100d","seq":0,"version":"x","rules_digest":"x","log_dirs":[],"collected_at_utc":""}\n'
        )
        for i in range(1, count):
            fh.write(f'{head}{i},"name":"g{i}","digest":"{i:x}","members":[[0,1]]}}\n')
    future = first[1].replace('"first_time":', '"first_time":9e15,"x":', 1)
    (facts / "future.facts.jsonl").write_text(first[0] + "\n" + future + "\n")
    impostor = "\n".join(
        line.replace('"host":"node-001"', '"host":"impostor"').replace(
            '"stream":"', '"stream":"1mp', 1
        )
        for line in first
    )
    (facts / "impostor.facts.jsonl").write_text(impostor + "\n")


def hostile_facts(folder: Path, shape: Shape, rules: list[object], count: int = 1_000_000) -> None:
    job = from_hang(folder, shape, rules)
    _truth(folder, job)
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["stalled"])
    hostile(folder, count)


def prefixes(folder: Path, shape: Shape, rules: list[object]) -> None:
    """Every node's facts in one stream, line by line in turn, each line prefixed as
    `srun -l`, `pdsh` or `kubectl logs --prefix` prefix it."""
    job = from_hang(folder, shape, rules)
    _truth(folder, job)
    _expected(folder, outcome="failed", root_cause_ranks=[job.culprit], categories=["stalled"])
    facts = folder / "facts"
    per_node = [(p, p.read_text().splitlines()) for p in sorted(facts.glob("*.facts.jsonl"))]
    styles = ("{k}: ", "node-{k:03d}: ", "[pod/trainer-{k}/main] ")
    out = []
    for i in range(max(len(lines) for _, lines in per_node)):
        for k, (_, lines) in enumerate(per_node):
            if i < len(lines):
                out.append(styles[k % 3].format(k=k) + lines[i])
    for path, _ in per_node:
        path.unlink()
    (facts / "all.facts.jsonl").write_text("\n".join(out) + "\n")


SCENARIOS: dict[str, Callable[[Path, Shape, list[object]], None]] = {
    "hang": hang,
    "two-faults": two_faults,
    "two-faults-no-scheduler": lambda f, s, r: two_faults(f, s, r, scheduler=False),
    "oom-hccl": oom_hccl,
    "node-lost": node_lost,
    "never-joined": never_joined,
    "no-node-rank": lambda f, s, r: hang(f, s, r, node_rank=False),
    "container-pids": lambda f, s, r: hang(f, s, r, unique_pids=False),
    "healthy": healthy,
    "shared-shard": shared_shard,
    "faulty-facts": faulty_facts,
    "hostile-facts": hostile_facts,
    "prefixes": prefixes,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--per-node", type=int, default=8)
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--keep", action="store_true", help="skip scenarios already built")
    a = ap.parse_args()
    shape = Shape(a.nodes, a.per_node)
    rules = _rules()
    chosen = a.only.split(",") if a.only else list(SCENARIOS)
    for name in chosen:
        if a.keep and (a.out / name / "expected.yaml").exists():
            continue
        SCENARIOS[name](a.out / name, shape, rules)
        print(f"built {name}", flush=True)


if __name__ == "__main__":
    main()
