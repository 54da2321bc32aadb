#!/usr/bin/env python3
"""A simulated msrun job of N nodes x P ranks, built from the real runs in fixtures/.

One real run (MindSpore 2.10 on the CPU; one synthetic Ascend run, said so) is tiled around
its culprit: global rank G replays the culprit's own log, every other rank replays a victim
of the same run, and every rank reference a log carries is renumbered relative to the rank
(`This node N rank id: R`, `rank=R size=S`, ring peers `receiving [p,...]`, world-group
lists, the scheduler's node ids, time-out lists and counts), so the cross-rank story of the
real run holds at any size: the ring neighbour names the hung rank, the others time out.

Each node writes its own `msrun_log/` (`--node_rank` layout: files numbered by global rank;
or without `--node_rank`: `worker_<local>.log` on every node, UUID node ids and the
scheduler's `Assign rank id` lines), node 0 holds the scheduler's log with one
registration per rank at the instant the real scheduler registered that rank's template,
and every node's timestamps are shifted by its own clock offset, so the registration
handshake still brackets each node's true offset. Pids are kept (the same on every node,
as in containers) unless asked otherwise.

    python bench/cluster_sim.py OUT --nodes 256 --per-node 8    # every scenario
    python bench/cluster_sim.py OUT --only hang,two-faults      # some

Each scenario directory holds `logs/node-XXX/msrun_log`, `facts/` (what `msrunwatch facts`
wrote on each node, with the faults the scenario injects), `truth.json` (the offsets, the
culprit) and `expected.yaml` (what the verdict must say, as the fixtures' do).
bench/bench_cluster.py triages them and measures.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
TS = re.compile(r"(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d)\.(\d{1,3})\.(\d{0,3})")
WORKER_FILE = re.compile(r"^worker_(\d+)\.log$")
REGISTERED = re.compile(
    r"^(?P<head>.*ProcessRegister\] The new node: )(?P<node>\S+?)\(role: MS_WORKER\), rank id: "
    r"(?P<rank>\d+), device id: \d+, hostname: [^,]*, ip: \S+ is registered successfully\. "
    r"Currently registered node number: \d+, expected node number: \d+\.?$"
)
FAULT_START = re.compile(r"^(?:\[(?:ERROR|CRITICAL)\] |Traceback \(most recent call last\):)")
Mapper = Callable[[int], int]


def parse_ts(m: re.Match[str]) -> datetime:
    base = datetime.strptime(m.group(1), "%Y-%m-%d-%H:%M:%S")
    return base + timedelta(microseconds=min(int(m.group(2) + m.group(3).ljust(3, "0")), 999_999))


def shift_times(text: str, seconds: float) -> str:
    """Every GLOG timestamp moved by `seconds` (the node's clock offset), format kept."""
    if not seconds:
        return text

    def one(m: re.Match[str]) -> str:
        t = parse_ts(m) + timedelta(seconds=seconds)
        return f"{t:%Y-%m-%d-%H:%M:%S}.{t.microsecond // 1000:03d}.{t.microsecond % 1000:03d}"

    return TS.sub(one, text)


@dataclass
class Base:
    """A real run: each rank's log, the scheduler's, and when it registered each rank."""

    name: str
    workers: dict[int, str]
    scheduler: str
    registered: dict[int, datetime]
    synthetic: bool = False

    @classmethod
    def load(cls, name: str) -> Base:
        """A fixture's run: `msrun_log/`, or its nodes' `node*/msrun_log/` together."""
        folders = [FIXTURES / name / "msrun_log", *sorted((FIXTURES / name).glob("*/msrun_log"))]
        paths = [p for folder in folders if folder.is_dir() for p in sorted(folder.iterdir())]
        workers = {
            int(m[1]): p.read_text(errors="replace")
            for p in paths
            if (m := WORKER_FILE.match(p.name))
        }
        sched = next(p for p in paths if p.name == "scheduler.log").read_text(errors="replace")
        registered = {}
        for line in sched.splitlines():
            m = REGISTERED.match(line)
            if m and (ts := TS.search(line)):
                registered[int(m["rank"])] = parse_ts(ts)
        return cls(name, workers, sched, registered, name.startswith("synth_"))

    @property
    def size(self) -> int:
        return len(self.workers)

    def world(self) -> str:
        return "{" + ", ".join(str(r) for r in range(self.size)) + "}"


@dataclass
class Job:
    """The shape of the simulated job and what each global rank replays."""

    base: Base
    nodes: int
    per_node: int
    culprit: int | None = None
    """The global rank that replays the base's culprit (None: a healthy job)."""
    culprit_base: int = 0
    second: tuple[int, int] | None = None
    """(base rank, global rank) of an independent second fault."""
    victim_base: int | None = None
    """Replay this base rank, cut before its fault, for every other rank (a rank msrun
    killed), instead of tiling the base's own victims."""
    offsets: list[float] = field(default_factory=list)
    """Each node's clock minus node 0's, seconds."""
    unique_pids: bool = False
    node_rank: bool = True
    absent_nodes: frozenset[int] = frozenset()
    """Nodes whose workers never started (no logs, never registered)."""
    provisional: dict[int, int] = field(default_factory=dict)
    """Without --node_rank: the rank each registration line shows (arrival order)."""

    @property
    def ranks(self) -> int:
        return self.nodes * self.per_node

    def template(self, g: int) -> int:
        """The base rank whose log global rank g replays."""
        k, c = self.base.size, self.culprit_base
        if self.second is not None and g == self.second[1]:
            return self.second[0]
        if self.culprit is None:
            return g % k
        if g == self.culprit:
            return c
        if self.victim_base is not None:
            return self.victim_base
        t = (c + g - self.culprit) % k
        return (c + 1) % k if t == c else t

    def mapper(self, g: int) -> Mapper:
        """Base rank -> global rank in the log of g: offsets from g's template kept (the
        symmetric way round, so a ring's left neighbour stays the left neighbour)."""
        t, k, n = self.template(g), self.base.size, self.ranks
        half = k // 2

        def to_global(r: int) -> int:
            d = (r - t) % k
            return (g + (d - k if d > half else d)) % n

        return to_global

    def node_id(self, g: int) -> str:
        if self.node_rank:
            return str(g)
        return str(uuid.UUID(int=random.Random(g * 7919 + 17).getrandbits(128), version=4))

    def file_name(self, g: int) -> str:
        """`worker_<global rank>.log`; without --node_rank `worker_<local>.log`, and the
        scheduler's sort makes file numbers differ from ranks within a node too."""
        if self.node_rank:
            return f"worker_{g}.log"
        local = g % self.per_node
        return f"worker_{(local + 3) % self.per_node}.log"

    def host(self, node: int) -> str:
        return f"node-{node:03d}"


def _world(job: Job) -> str:
    return "{" + ", ".join(str(r) for r in range(job.ranks)) + "}"


def worker_text(job: Job, g: int) -> str:
    """Global rank g's log: its template renumbered, cut when it is a killed victim, with
    its node's pids and clock."""
    t = job.template(g)
    text = job.base.workers[t]
    if job.victim_base is not None and t == job.victim_base and g != job.culprit:
        text = cut_before_fault(text)
    to_g = job.mapper(g)
    node = g // job.per_node
    sub = re.sub
    text = sub(
        r"This node (\S+) rank id: (\d+)",
        lambda m: f"This node {job.node_id(g)} rank id: {g}",
        text,
    )
    text = sub(r"rank=(\d+)( size=| ?/ ?)\d+", lambda m: f"rank={g}{m[2]}{job.ranks}", text)
    text = sub(r"(receiving|sending) \[(\d+),", lambda m: f"{m[1]} [{to_g(int(m[2]))},", text)
    text = sub(r"RANK_ID=(\d+)", lambda m: f"RANK_ID={g}", text)
    text = sub(r"device_id=(\d+)", lambda m: f"device_id={g % job.per_node}", text)
    text = text.replace(job.base.world(), _world(job))
    if job.unique_pids:
        text = sub(r"\((\d+)([,:])", lambda m: f"({int(m[1]) + 100_000 * node}{m[2]}", text)
    return shift_times(text, job.offsets[node])


def cut_before_fault(text: str) -> str:
    """A log msrun killed: it stops before the fault its template went on to log."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if FAULT_START.match(line) and i > 10:
            return "".join(lines[:i])
    return text


def _registration_lines(job: Job, head: str) -> list[tuple[datetime, str]]:
    """One registration per global rank that started, at the instant the real scheduler
    registered its template (on the scheduler's clock, node 0's)."""
    lines = []
    order = sorted(
        (g for g in range(job.ranks) if g // job.per_node not in job.absent_nodes),
        key=lambda g: (job.base.registered.get(job.template(g), datetime.min), g),
    )
    for count, g in enumerate(order, 1):
        job.provisional[g] = count - 1
        node, local = divmod(g, job.per_node)
        when = job.base.registered.get(job.template(g), datetime.min)
        stamp = (
            f"{when:%Y-%m-%d-%H:%M:%S}.{when.microsecond // 1000:03d}.{when.microsecond % 1000:03d}"
        )
        rank = g if job.node_rank else count - 1
        prefix = TS.sub(stamp, head, count=1)
        lines.append(
            (
                when,
                f"{prefix}{job.node_id(g)}(role: MS_WORKER), rank id: {rank}, device id: "
                f"{local}, hostname: {job.host(node)}, ip: 10.0.{node // 250}.{node % 250 + 1} "
                f"is registered successfully. Currently registered node number: {count}, "
                f"expected node number: {job.ranks}.",
            )
        )
    return lines


def _assign_lines(job: Job, head: str, when: datetime) -> list[str]:
    """Without --node_rank: the scheduler assigns the final ranks once all registered."""
    stamp = f"{when:%Y-%m-%d-%H:%M:%S}.{when.microsecond // 1000:03d}.{when.microsecond % 1000:03d}"
    prefix = TS.sub(
        stamp,
        head.replace(
            "meta_server_node.cc:254] ProcessRegister] The new node: ",
            "meta_server_node.cc:752] ReassignNodeRank] ",
        ),
        count=1,
    )
    out = []
    for g in range(job.ranks):
        node = g // job.per_node
        if node in job.absent_nodes:
            continue
        out.append(
            f"{prefix}Assign rank id of node id: {job.node_id(g)}, role: MS_WORKER, with host "
            f"ip: 10.0.{node // 250}.{node % 250 + 1}, old rank id: {job.provisional[g]}, "
            f"new rank id: {g}"
        )
    return out


def scheduler_text(job: Job) -> str:
    """The scheduler's log on node 0: the real one, with a registration per rank and every
    node id, count and list renumbered."""
    lines = job.base.scheduler.splitlines()
    first = next(i for i, line in enumerate(lines) if REGISTERED.match(line))
    head = REGISTERED.match(lines[first])["head"]  # type: ignore[index]
    regs = _registration_lines(job, head)
    body = [line for _, line in regs]
    if not job.node_rank and regs:
        body += _assign_lines(job, head, regs[-1][0])
    to_g = job.mapper(job.culprit if job.culprit is not None else 0)
    out = []
    for i, line in enumerate(lines):
        if i == first:
            out.extend(body)
        elif not REGISTERED.match(line):
            out.append(_remap_scheduler(job, line, to_g))
    return "\n".join(out) + "\n"


def _remap_scheduler(job: Job, line: str, to_g: Mapper) -> str:
    sub = re.sub
    node = lambda m: f"{m[1]}{job.node_id(to_g(int(m[2])))}{m[3]}"  # noqa: E731
    line = sub(r"(node: )(\d+)( is timed out)", node, line)
    line = sub(r"(Node )(\d+)( has unregistered)", node, line)
    line = sub(r"(worker )(\d+)( is the first)", node, line)
    line = sub(
        r"(node list is: \[const vector\]\{)([\d, ]+)(\})",
        lambda m: m[1] + ", ".join(job.node_id(to_g(int(x))) for x in m[2].split(", ")) + m[3],
        line,
    )
    started = job.ranks - len(job.absent_nodes) * job.per_node
    line = sub(r"has \d+ alive nodes", f"has {started} alive nodes", line)
    return line.replace(job.base.world(), _world(job))


def write_logs(job: Job, out: Path, shared: bool = False) -> list[Path]:
    """Every node's msrun_log (or one shared directory); the node directories."""
    dirs = []
    for node in range(job.nodes):
        folder = out / ("shared" if shared else job.host(node)) / "msrun_log"
        folder.mkdir(parents=True, exist_ok=True)
        if folder not in dirs:
            dirs.append(folder)
        if node in job.absent_nodes:
            continue
        for local in range(job.per_node):
            g = node * job.per_node + local
            (folder / job.file_name(g)).write_text(worker_text(job, g))
        if node == 0:
            (folder / "scheduler.log").write_text(scheduler_text(job))
    return dirs


def offsets(
    nodes: int, skew_s: float, seed: int, forced: dict[int, float] | None = None
) -> list[float]:
    rng = random.Random(seed)
    values = [0.0] + [rng.gauss(0.0, skew_s) for _ in range(nodes - 1)]
    for node, value in (forced or {}).items():
        if node < nodes:
            values[node] = value
    return values
