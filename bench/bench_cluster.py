#!/usr/bin/env python3
"""The cluster scenarios, triaged and measured (issue 19's acceptance figures).

    python bench/cluster_scenarios.py /tmp/sim --nodes 256 --per-node 8   # build them first
    python bench/bench_cluster.py verdicts /tmp/sim      # each scenario against expected.yaml
    python bench/bench_cluster.py clocks /tmp/sim        # offsets against the truth, real runs
    python bench/bench_cluster.py sizes /tmp/sim/hang    # facts bytes per rank, per record
    python bench/bench_cluster.py speed /tmp/sim/hang [/tmp/sim4096/hang]  # triage facts/
    python bench/bench_cluster.py write /tmp/sim/hang    # facts vs triage of one node's logs
    python bench/bench_cluster.py phases /tmp/sim/hang   # each merge step, for linearity

Times are CPU seconds (user + sys of the child, from os.wait4), which a busy machine does
not inflate as it does wall time; wall time is printed beside them. Peak memory is the
child's max RSS. Every command runs `msrunwatch` from this checkout.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MSRUNWATCH = [sys.executable, "-m", "msrunwatch"]
sys.path.insert(0, str(ROOT / "bench"))
from bench_triage import compile_bytecode  # noqa: E402

SLACK_MS = 0.001
"""The logs' resolution (1 us): a shifted timestamp is rounded to it."""


def measured(args: list[str]) -> tuple[subprocess.CompletedProcess[str], float, float, float]:
    """Like run(), reading the child's own usage through a wrapper that reports it."""
    probe = (
        "import os,resource,subprocess,sys,time,json;t=time.monotonic();"
        "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
        "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(json.dumps({'rc':p.returncode,'out':p.stdout,'err':p.stderr,"
        "'cpu':u.ru_utime+u.ru_stime,'wall':time.monotonic()-t,'rss':u.ru_maxrss/1024}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT
    )
    got = json.loads(done.stdout)
    result = subprocess.CompletedProcess(args, got["rc"], got["out"], got["err"])
    return result, got["cpu"], got["wall"], got["rss"]


def row(*cells: object) -> str:
    """A Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / max(whole, 1):.0f}%)"


def load_expected(folder: Path) -> dict[str, object]:
    import yaml

    return yaml.safe_load((folder / "expected.yaml").read_text()) or {}


def verdict(folder: Path) -> tuple[bool, str, dict[str, object], float, float, float]:
    """Is the scenario's verdict right? (and what triage said, CPU, wall, RSS)"""
    result, cpu, wall, rss = measured(
        [*MSRUNWATCH, "triage", str(folder / "facts"), "--format", "json", "-q"]
    )
    if result.returncode not in (0, 1):
        return False, f"exit {result.returncode}: {result.stderr.strip()[:200]}", {}, cpu, wall, rss
    report = json.loads(result.stdout)
    want = load_expected(folder)
    cause = report["root_cause"] or {}
    errors = sum(1 for f in report["findings"] if f["severity"] == "error")
    problems = []
    if report["outcome"] != want.get("outcome"):
        problems.append(f"outcome {report['outcome']}")
    if want.get("root_cause_ranks") and sorted(cause.get("ranks", [])) != sorted(
        want["root_cause_ranks"]
    ):  # type: ignore[arg-type]
        problems.append(f"ranks {cause.get('ranks')}")
    if want.get("outcome") == "failed" and cause.get("category") not in (
        want.get("categories") or []
    ):  # type: ignore[operator]
        problems.append(f"category {cause.get('category')}")
    if want.get("outcome") == "ok" and errors:
        problems.append(f"{errors} error findings")
    states = {n["host"]: n["state"] for n in report.get("nodes", [])}
    for state in ("missing", "partial"):
        named = want.get(f"{state}_nodes") or []
        problems += [f"{h} not named {state}" for h in named if states.get(h) != state]  # type: ignore[union-attr]
    texts = want.get("warnings_contain") or []
    problems += [
        f"no warning saying {t!r}" for t in texts if not any(t in w for w in report["warnings"])
    ]  # type: ignore[union-attr]
    said = f"{report['outcome']} {cause.get('category')} {cause.get('ranks')}"
    return not problems, "; ".join(problems) or said, report, cpu, wall, rss


def cmd_verdicts(top: Path) -> int:
    wrong = 0
    print("| scenario | right | verdict | CPU s | wall s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for folder in sorted(p for p in top.iterdir() if (p / "expected.yaml").exists()):
        ok, said, _, cpu, wall, rss = verdict(folder)
        wrong += not ok
        print(
            row(folder.name, "yes" if ok else "NO", said, f"{cpu:.2f}", f"{wall:.2f}", f"{rss:.0f}")
        )
    return 1 if wrong else 0


def offsets_from(report: dict[str, object]) -> dict[str, tuple[float | None, float | None, int]]:
    """Each host's measured offset and uncertainty, from its ranks (a shared directory's
    ranks carry the clock of the host that wrote them)."""
    out: dict[str, tuple[float | None, float | None, int]] = {}
    for r in report.get("ranks", []):  # type: ignore[union-attr]
        host, offset = r.get("host"), r.get("clock_offset_ms")
        if host and offset is not None:
            out[host] = (offset, r["clock_uncertainty_ms"], 1)
    return out


def clock_check(folder: Path) -> tuple[int, int, float, float]:
    """(nodes with a registration, of them with the truth inside their interval, widest
    interval ms, worst error ms) for one simulated scenario."""
    truth = json.loads((folder / "truth.json").read_text())["offsets_s"]
    _, _, report, *_ = verdict(folder)
    found = offsets_from(report)
    total = inside = 0
    widest = worst = 0.0
    for host, true_s in truth.items():
        offset, error, _ = found.get(host, (None, None, 0))
        if offset is None or error is None:
            continue
        total += 1
        true_ms = true_s * 1000
        inside += abs(offset - true_ms) <= error + SLACK_MS
        widest, worst = max(widest, 2 * error), max(worst, abs(offset - true_ms))
    return total, inside, widest, worst


def real_multi_node() -> list[Path]:
    """Real runs with several msrun nodes (node*/msrun_log): two nodes on one host, some with
    a shifted clock (expected.yaml's clock_offsets_s: each node's true offset, else 0)."""
    fixtures = ROOT / "fixtures"
    return sorted(p for p in fixtures.glob("cpu_*") if len(list(p.glob("node*/msrun_log"))) > 1)


def real_clock_check(base: Path) -> tuple[int, int, int, float, float]:
    """(nodes, with a bracket, of them holding their true offset, widest bracket ms, worst
    midpoint error ms) for one real multi-node run, through `facts` per node and `triage`."""
    truth = load_expected(base).get("clock_offsets_s") or {}
    with tempfile.TemporaryDirectory(prefix="msrunwatch-clock-") as facts:
        nodes = sorted(base.glob("node*/msrun_log"))
        for node in nodes:
            argv = ["facts", str(node), "--host", node.parent.name, "-o", f"{facts}/", "-q"]
            subprocess.run([*MSRUNWATCH, *argv], cwd=ROOT, check=True)
        argv = ["triage", facts, "--format", "json", "-q"]
        result = subprocess.run([*MSRUNWATCH, *argv], capture_output=True, text=True, cwd=ROOT)
    report = json.loads(result.stdout)
    bracketed = inside = 0
    widest = worst = 0.0
    for node in report["nodes"]:
        if not node["clock_bracket_ms"]:
            continue
        low, high = node["clock_bracket_ms"]
        true_ms = float(truth.get(node["host"], 0)) * 1000  # type: ignore[union-attr]
        bracketed += 1
        inside += low - SLACK_MS <= true_ms <= high + SLACK_MS
        widest = max(widest, high - low)
        worst = max(worst, abs((low + high) / 2 - true_ms))
    return len(nodes), bracketed, inside, widest, worst


def cmd_clocks(top: Path) -> int:
    print(
        row(
            "scenario",
            "nodes with a registration",
            "interval holds the true offset",
            "widest interval ms",
            "worst midpoint error ms",
        )
    )
    print("|---|---|---|---|---|")
    bad = 0
    for folder in sorted(p for p in top.iterdir() if (p / "truth.json").exists()):
        total, inside, widest, worst = clock_check(folder)
        bad += total - inside
        print(row(folder.name, total, share(inside, total), f"{widest:.3f}", f"{worst:.3f}"))
    for base in real_multi_node():
        _, total, inside, widest, worst = real_clock_check(base)
        bad += total - inside  # a node that never registered has no bracket to hold anything
        print(
            row(f"{base.name} (real)", total, share(inside, total), f"{widest:.3f}", f"{worst:.3f}")
        )
    return 1 if bad else 0


def cmd_sizes(folder: Path) -> int:
    """Facts bytes per rank (each worker file's record and its hits records) and per record."""
    per_file: dict[tuple[str, str, int], int] = {}
    roles: dict[tuple[str, str, int], str] = {}
    longest, total, ranks = 0, 0, 0
    for path in sorted((folder / "facts").glob("*.facts.jsonl")):
        for line in path.open("rb"):
            size = len(line)
            longest, total = max(longest, size), total + size
            record = json.loads(line)
            if record["kind"] in ("file", "hits"):
                key = (record["host"], record["stream"], record["fid"])
                per_file[key] = per_file.get(key, 0) + size
                if record["kind"] == "file":
                    roles[key] = record["facts"]["role"]
                    ranks += record["facts"]["role"] == "worker"
    workers = sorted(v for k, v in per_file.items() if roles.get(k) == "worker")
    print(
        f"facts: {total / 1e6:.2f} MB for {ranks} ranks; per worker file median "
        f"{statistics.median(workers) / 1024:.2f} KiB, max {workers[-1] / 1024:.2f} KiB; "
        f"longest record {longest / 1024:.2f} KiB"
    )
    return 0 if statistics.median(workers) <= 4096 and longest <= 64 << 10 else 1


def cmd_speed(folders: list[Path], repeat: int) -> int:
    """Triage of each job's facts, the jobs taken in turn within each round, so that a change
    in the machine's speed during the run (a shared or virtual machine drifts by a quarter)
    weighs on every size alike; the ratios are to the first job's medians."""
    rounds = [[verdict(folder) for folder in folders] for _ in range(repeat)]
    print(
        row(
            "facts of",
            "ranks",
            "CPU s (median)",
            "wall s (median)",
            "peak RSS MiB",
            "verdict",
            "CPU ratio",
        )
    )
    print("|---|---|---|---|---|---|---|")
    first = 0.0
    for i, folder in enumerate(folders):
        rows = [r[i] for r in rounds]
        cpu = statistics.median(r[3] for r in rows)
        wall = statistics.median(r[4] for r in rows)
        first = first or cpu
        print(
            row(
                f"{folder.name} ({folder.parent.name})",
                len(rows[0][2].get("ranks", [])),
                f"{cpu:.2f}",
                f"{wall:.2f}",
                f"{max(r[5] for r in rows):.0f}",
                "right" if rows[0][0] else rows[0][1],
                f"x{cpu / first:.2f}",
            )
        )
    return 0


def cmd_write(folder: Path, repeat: int) -> int:
    """`facts` of one node's directory against `triage` of the same directory."""
    nodes = sorted((folder / "logs").glob("*/msrun_log"))
    picks = [nodes[0], nodes[len(nodes) // 2]] if len(nodes) > 1 else nodes
    print("| node | facts CPU s | triage CPU s | facts / triage |")
    print("|---|---|---|---|")
    worst = 0.0
    for node in picks:
        out = Path(tempfile.gettempdir()) / f"msrunwatch-write-{os.getpid()}.jsonl"
        facts = statistics.median(
            measured([*MSRUNWATCH, "facts", str(node), "-o", str(out), "-q"])[1]
            for _ in range(repeat)
        )
        triage = statistics.median(
            measured([*MSRUNWATCH, "triage", str(node), "--format", "json", "-q"])[1]
            for _ in range(repeat)
        )
        worst = max(worst, facts / triage)
        print(f"| {node.parent.name} | {facts:.3f} | {triage:.3f} | {facts / triage:.2f} |")
        out.unlink(missing_ok=True)
    return 0 if worst <= 1.1 else 1


T = TypeVar("T")


class Meter:
    """Runs each step, keeping its CPU seconds or, when profiling, its count of calls."""

    def __init__(self, profile: bool) -> None:
        self.profile = profile
        self.seconds: list[float] = []
        self.calls: list[int] = []

    def __call__(self, action: Callable[[], T]) -> T:
        profiler = cProfile.Profile() if self.profile else None
        start = time.process_time()
        if profiler is None:
            result = action()
        else:
            result = profiler.runcall(action)
            self.calls.append(pstats.Stats(profiler).total_calls)  # type: ignore[attr-defined]
        self.seconds.append(time.process_time() - start)
        return result


def cmd_phases(folders: list[Path]) -> int:
    """CPU seconds and Python calls per rank of each step of `triage facts/`, in this process.

    Times vary with the machine's load; the calls each step makes (cProfile's count of every
    Python and built-in call) do not. A step linear in ranks makes the same number of calls
    per rank at every size, so the last table compares the largest job's calls per rank with
    the smallest's: about 1.0 for a linear step, about the ratio of the sizes for a quadratic
    one. The run is repeated for the counts, so the times are not inflated by the profiler.
    """
    from msrunwatch.drivers import cluster
    from msrunwatch.judge.context import Context
    from msrunwatch.judge.verdict import judge
    from msrunwatch.read.nodefacts.merge import merge
    from msrunwatch.read.nodefacts.nodes import collect
    from msrunwatch.read.nodefacts.write import rules_digest
    from msrunwatch.read.runstate import assemble
    from msrunwatch.rules.loader import load_rules

    rules = load_rules()
    names = ("read", "collect", "merge", "assemble", "judge")

    def steps(folder: Path, meter: Meter) -> int:
        """Runs `triage facts/`'s steps under the meter; the job's rank count."""
        reader = meter(lambda: cluster.read_targets([str(folder / "facts")])[0])
        collected = meter(lambda: collect(reader.streams.values()))
        view = meter(lambda: merge(collected, [], 1.0, rules_digest(rules)))
        run = meter(lambda: assemble([str(folder)], view.files))
        context = Context(clocks=view.clock_errors, blind=view.blind)
        meter(lambda: judge(run, rules, [], context))
        return len(run.ranks)

    print("| facts of | ranks | " + " | ".join(names) + " | total |")
    print("|---|---|" + "---|" * (len(names) + 1))
    per_rank: list[tuple[int, list[float]]] = []
    for folder in folders:
        timed, counted = Meter(profile=False), Meter(profile=True)
        ranks = steps(folder, timed)
        steps(folder, counted)
        per_rank.append((ranks, [c / ranks for c in counted.calls]))
        cells = " | ".join(f"{s:.3f}" for s in timed.seconds)
        print(row(f"{folder.parent.name}/{folder.name}", ranks, cells, f"{sum(timed.seconds):.3f}"))
    print()
    print("Python calls per rank (cProfile), by step:")
    print()
    print("| ranks | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for ranks, counts in per_rank:
        print(row(ranks, *(f"{c:.1f}" for c in counts)))
    if len(per_rank) > 1:
        (small, low), (large, high) = min(per_rank), max(per_rank)
        ratios = [h / max(lo, 1e-9) for lo, h in zip(low, high)]
        print(row(f"{large}/{small} ranks", *(f"x{r:.2f}" for r in ratios)))
        worst = max(ratios)
        print(f"\nworst growth of calls per rank: x{worst:.2f} for x{large / small:.1f} the ranks")
        return 0 if worst < 1.5 else 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("verdicts", "clocks", "sizes", "speed", "write", "phases"))
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.what in ("verdicts", "speed", "write"):
        print(compile_bytecode(), end="\n\n")
    if a.what == "verdicts":
        return cmd_verdicts(a.paths[0])
    if a.what == "clocks":
        return cmd_clocks(a.paths[0])
    if a.what == "sizes":
        return cmd_sizes(a.paths[0])
    if a.what == "speed":
        return cmd_speed(a.paths, a.repeat)
    if a.what == "write":
        return cmd_write(a.paths[0], a.repeat)
    return cmd_phases(a.paths)


if __name__ == "__main__":
    sys.exit(main())
