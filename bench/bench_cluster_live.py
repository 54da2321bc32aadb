#!/usr/bin/env python3
"""The live cluster view measured (issue 19's live acceptance figures).

    python bench/bench_cluster_live.py /tmp/live --real 16 --stubs 256 --faults 40

builds a job of (real + stubs) nodes x 8 ranks from a real healthy run (bench/cluster_sim.py,
each node on its own clock, the scheduler's table on node 0), then runs on this machine:

- `--real` per-node watchers (`msrunwatch watch node-XXX/msrun_log --headless
  --metrics-port P`), over logs a writer grows by one step line per rank every STEP_S;
- one process serving `--stubs` more nodes' snapshots on as many ports (what those nodes'
  watchers would serve: their facts, renewed at every step, so the central view parses
  every node at every poll, as in steady training);
- one central `msrunwatch watch --cluster nodes.txt --headless --interval I`.

and measures: the time from a fault line appended to a real node's log to the central
view's event naming that rank (each fault on another rank: the finding spreads), its p50,
p99 and worst; the time from a watcher killed (SIGKILL) to the central view's `node_state`
event saying `blind`, in poll intervals; the central process's CPU (user + sys from
/proc, per second of wall time: the cores it uses, which a busy machine does not inflate as
it does wall times) and its peak RSS. Every process it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cluster_sim import Base, Job, offsets, write_logs  # noqa: E402

BASE = "cpu_2nodes_noderank_ok"
STEP_S = 1.0
FIRST_STEP = "epoch: 1 step: 1,"
FAULT = (
    "Traceback (most recent call last):\n"
    '  File "train_dense.py", line 48, in on_train_step_end\n'
    "RuntimeError: msrunwatch bench: injected fault\n"
)
MSRUNWATCH = [sys.executable, "-m", "msrunwatch"]


# -- the job ---------------------------------------------------------------------------------


def build(out: Path, nodes: int, per_node: int) -> Job:
    """Every node's logs, cut before the first step (the writer appends the steps)."""
    job = Job(Base.load(BASE), nodes, per_node, offsets=offsets(nodes, 0.2, 7), unique_pids=True)
    for folder in write_logs(job, out / "logs"):
        for path in folder.glob("worker_*.log"):
            text = path.read_text()
            path.write_text(text[: text.index(FIRST_STEP)] if FIRST_STEP in text else text)
    return job


def stub_bodies(job: Job, out: Path, first: int, wall: float) -> dict[int, bytes]:
    """The snapshot each stub node serves, with `wall` where its clock's readings go."""
    from msrunwatch.drivers.triage import find_logs, scan_all
    from msrunwatch.live.snapshot import Snapshots, node_info
    from msrunwatch.rules.loader import load_rules

    rules = load_rules()
    bodies = {}
    for node in range(first, job.nodes):
        folder = out / "logs" / job.host(node) / "msrun_log"
        facts = scan_all(find_logs([str(folder)]), rules)
        snaps = Snapshots(node_info(job.host(node), [str(folder)], rules), wall=lambda: wall)
        snaps.offer([(f, wall) for f in facts])
        built = snaps.current()
        assert built is not None
        bodies[node] = built.body
    return bodies


# -- the stub nodes ----------------------------------------------------------------------------


def serve_stubs(
    bodies: dict[int, bytes], base_port: int, wall: float, ready: threading.Event
) -> None:
    """Each body on its own port; the clock readings renewed and the ETag changed every
    STEP_S (what steady training does to a watcher's snapshot)."""
    token = f"{wall:.3f}".encode()

    async def answer(node: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        step = int(time.time() / STEP_S)
        etag = f'"{node}-{step}"'.encode()
        if b"if-none-match: " + etag in head.lower():
            writer.write(b"HTTP/1.0 304 Not Modified\r\nX-Msrunwatch-Age: 0.1\r\n\r\n")
        else:
            body = bodies[node].replace(token, f"{time.time():.3f}".encode())
            writer.write(
                b"HTTP/1.0 200 OK\r\nETag: " + etag + b"\r\nX-Msrunwatch-Age: 0.1\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
        try:
            await writer.drain()
        finally:
            writer.close()

    async def main() -> None:
        servers = []
        for k, node in enumerate(sorted(bodies)):
            handler = lambda r, w, n=node: answer(n, r, w)  # noqa: E731
            servers.append(await asyncio.start_server(handler, "127.0.0.1", base_port + k))
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


def stub_process(bodies_file: Path, base_port: int, wall: float) -> subprocess.Popen[bytes]:
    paths, source = [str(ROOT), str(ROOT / "bench")], str(bodies_file)
    code = (
        f"import json,sys,threading;sys.path[:0]={paths!r};import bench_cluster_live as b;"
        f"d={{int(k):v.encode('latin-1') for k,v in json.load(open({source!r})).items()}};"
        f"e=threading.Event();b.serve_stubs(d,{base_port},{wall!r},e)"
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)


# -- the writer ----------------------------------------------------------------------------------


class Writer(threading.Thread):
    """One step line per rank of the real nodes every STEP_S; faults when asked."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__(daemon=True)
        self.files, self.step, self.stop = files, 1, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(STEP_S):
            for path in self.files:
                with path.open("a") as fh:
                    fh.write(f"epoch: 1 step: {self.step}, loss is {1.0 / self.step:.6f}\n")
            self.step += 1


# -- measuring ------------------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Events:
    """The central view's events, read as they come."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.seen = path, 0, []

    def poll(self) -> list[dict[str, object]]:
        if not self.path.exists():
            return []
        with self.path.open() as fh:
            fh.seek(self.offset)
            data = fh.read()
        complete = data[: data.rfind("\n") + 1]
        self.offset += len(complete.encode())
        new = [json.loads(line) for line in complete.splitlines() if line]
        self.seen += new
        return new


def when(event: dict[str, object]) -> float:
    return datetime.fromisoformat(str(event["time"])).timestamp()


def wait_for(events: Events, test: object, timeout: float) -> dict[str, object] | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for event in events.poll():
            if test(event):  # type: ignore[operator]
                return event
        time.sleep(0.05)
    return None


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("out", type=Path)
    p.add_argument("--real", type=int, default=16)
    p.add_argument("--stubs", type=int, default=256)
    p.add_argument("--per-node", type=int, default=8)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--faults", type=int, default=40)
    p.add_argument("--gap", type=float, default=3.0, help="seconds between two faults")
    p.add_argument("--warmup", type=float, default=30.0)
    p.add_argument("--port", type=int, default=21000)
    args = p.parse_args()
    nodes = args.real + args.stubs
    print(f"building {nodes} nodes x {args.per_node} ranks in {args.out} ...", flush=True)
    job = build(args.out, nodes, args.per_node)
    wall = 1_000_000_000.125
    bodies = stub_bodies(job, args.out, args.real, wall)
    bodies_file = args.out / "stubs.json"
    bodies_file.write_text(json.dumps({k: v.decode("latin-1") for k, v in bodies.items()}))
    procs: list[subprocess.Popen[bytes]] = []
    writer: Writer | None = None
    try:
        procs.append(stub_process(bodies_file, args.port + 1000, wall))
        listed = []
        env = dict(os.environ)
        for node in range(args.real):
            host = job.host(node)
            folder = args.out / "logs" / host / "msrun_log"
            port = args.port + node
            cmd = [*MSRUNWATCH, "watch", str(folder), "--headless", "--metrics-port", str(port)]
            cmd += ["--events", str(args.out / f"{host}.events.jsonl")]
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env={**env, "MSRUNWATCH_HOST": host}))
            listed.append(f"127.0.0.1:{port}")
        listed += [f"127.0.0.1:{args.port + 1000 + k}" for k in range(args.stubs)]
        (args.out / "nodes.txt").write_text("\n".join(listed) + "\n")
        files = sorted((args.out / "logs").glob("node-0[0-9][0-9]/msrun_log/worker_*.log"))
        files = [f for f in files if int(f.parent.parent.name[5:]) < args.real]
        writer = Writer(files)
        writer.start()
        events_path = args.out / "central.events.jsonl"
        events_path.unlink(missing_ok=True)
        cmd = [*MSRUNWATCH, "watch", "--cluster", str(args.out / "nodes.txt"), "--headless"]
        cmd += ["--interval", str(args.interval), "--events", str(events_path)]
        central = subprocess.Popen(cmd, cwd=ROOT)
        procs.append(central)
        events = Events(events_path)
        time.sleep(args.warmup)
        events.poll()
        cpu0, wall0 = cpu_s(central.pid), time.monotonic()
        latencies = measure_faults(args, job, events)
        cpu1, wall1 = cpu_s(central.pid), time.monotonic()
        blind = measure_kill(args, job, events, procs)
        rss = peak_rss_mib(central.pid)
        report(args, nodes, latencies, blind, (cpu1 - cpu0) / (wall1 - wall0), rss, events)
    finally:
        if writer is not None:
            writer.stop.set()
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


def measure_faults(args: argparse.Namespace, job: Job, events: Events) -> list[float]:
    """A fault on another real rank every `gap` s; how long until the central view names it."""
    rng = random.Random(3)
    ranks = rng.sample(
        range(args.real * args.per_node), min(args.faults, args.real * args.per_node)
    )
    out = []
    for rank in ranks:
        node = rank // args.per_node
        path = args.out / "logs" / job.host(node) / "msrun_log" / job.file_name(rank)
        began = time.time()
        with path.open("a") as fh:
            fh.write(FAULT)
        named = wait_for(
            events,
            lambda e, r=rank: (
                e.get("event") in ("finding", "root_cause") and r in (e.get("ranks") or [])
            ),
            60,
        )
        out.append(when(named) - began if named else float("inf"))
        time.sleep(max(args.gap - (time.time() - began), 0))
    return out


def measure_kill(
    args: argparse.Namespace, job: Job, events: Events, procs: list[subprocess.Popen[bytes]]
) -> float:
    """SIGKILL the last real watcher; intervals until the central view says blind."""
    victim = procs[args.real]  # procs[0] is the stub server
    host = job.host(args.real - 1)
    began = time.time()
    victim.kill()
    said = wait_for(
        events,
        lambda e: (
            e.get("event") == "node_state" and e.get("host") == host and e.get("state") == "blind"
        ),
        10 * args.interval + 30,
    )
    return (when(said) - began) / args.interval if said else float("inf")


def report(
    args: argparse.Namespace,
    nodes: int,
    latencies: list[float],
    blind: float,
    cores: float,
    rss: float,
    events: Events,
) -> None:
    ranks = nodes * args.per_node
    finite = [x for x in latencies if x != float("inf")]
    print(
        f"\nnodes {nodes} ({args.real} real watchers, {args.stubs} stubs), ranks {ranks}, "
        f"interval {args.interval} s"
    )
    print(
        f"fault -> central verdict: {len(finite)}/{len(latencies)} seen; "
        f"p50 {statistics.median(finite):.2f} s, p99 {percentile(finite, 0.99):.2f} s, "
        f"max {max(finite):.2f} s (bound: interval + 2 = {args.interval + 2:.1f} s)"
    )
    print(f"killed watcher -> blind: {blind:.2f} intervals (bound: 3)")
    print(
        f"central view: {cores:.3f} cores (CPU s per wall s) while faults came; "
        f"peak RSS {rss:.0f} MiB"
    )
    states = [e for e in events.seen if e.get("event") == "node_state"]
    print(f"node_state events: {len(states)}")


if __name__ == "__main__":
    sys.exit(main())
