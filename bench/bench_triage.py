"""Time `msrunwatch triage` against GNU grep over the same markers, on a large msrun_log/.

    python bench/bench_triage.py [--ranks 64 --mb 16] [--dir DIR] [--repeat 3]
                                 [--msrunwatch PATH] [--sizes 4,8,16]

Generates the data with gen_msrun_log.py (or reuses --dir), writes the marker list triage
looks for, warms the page cache, then alternates grep and msrunwatch runs and reports the
median wall times, their ratio, throughput, CPU time and peak memory (the sum of RSS over
msrunwatch's whole process tree, sampled from /proc every 10 ms). It also checks that
triage named the injected fault. Results are printed, never asserted: timing belongs here,
not in the tests. Linux only (/proc, os.wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # a checkout without `pip install -e .` still finds msrunwatch

import gen_msrun_log as gen  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30
SAMPLE_S = 0.010
GREP_BASELINES = {
    "pipe": "grep -F -f markers -r DIR | cat > /dev/null",
    "file": "grep -F -f markers -r DIR > grep_hits.txt",
    "count": "grep -c -F -f markers -r DIR | cat > /dev/null",
}
"""What each --grep-mode times; `pipe` is the default baseline (see grep_command)."""
GREP_MODES = tuple(GREP_BASELINES)


# -- measuring one command ---------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One timed run of one command."""

    wall_s: float
    cpu_s: float
    """User + system time of the process and every descendant it waited for."""
    peak_tree_mib: float
    """Peak of the summed RSS of the process and all its descendants, as sampled.

    Not ru_maxrss: that counts the forked copy of this Python before exec, and only
    the largest single process, not the sum over triage's pool.
    """
    returncode: int


HAS_CHILDREN_LIST = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
"""Kernels without CONFIG_PROC_CHILDREN lack it; then parents are read from /proc/*/stat."""


def _children(pid: int) -> list[int]:
    """Direct children of pid, from every thread's /proc children list."""
    if not HAS_CHILDREN_LIST:
        return _children_by_stat(pid)
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids.extend(int(k) for k in fh.read().split())
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return kids


def _children_by_stat(pid: int) -> list[int]:
    """Direct children of pid, the slow way: every process's parent from /proc/<pid>/stat."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            kids.append(int(entry))
    return kids


def _rss_kib(pid: int) -> int:
    """VmRSS of one process in KiB, 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def tree_rss_kib(root: int) -> int:
    """Summed RSS of root and all its descendants right now."""
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss_kib(pid)
        todo.extend(_children(pid))
    return total


class TreeSampler(threading.Thread):
    """Samples a process tree's summed RSS until stopped; keeps the peak.

    Summing matters: triage forks a pool, and each worker's RSS counts against the budget.
    Shared pages (the forked interpreter) are counted once per process, as `ps` would,
    so the figure errs on the high side.
    """

    def __init__(self, roots: Sequence[int]) -> None:
        super().__init__(daemon=True)
        self.roots = list(roots)
        self.peak_kib = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.peak_kib = max(self.peak_kib, sum(tree_rss_kib(r) for r in self.roots))
            self._done.wait(SAMPLE_S)

    def stop(self) -> None:
        self._done.set()
        self.join()


def measure(
    cmd: Sequence[str], stdout: int = subprocess.DEVNULL, drain: Sequence[str] | None = None
) -> Run:
    """Run cmd (optionally piped into drain) and measure it; waits with wait4 for rusage."""
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if drain else stdout)
    sink = None
    if drain:
        sink = subprocess.Popen(drain, stdin=proc.stdout, stdout=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.close()
    sampler = TreeSampler([proc.pid])
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if sink is not None:
        sink.wait()
    wall = time.perf_counter() - began
    sampler.stop()
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_tree_mib=sampler.peak_kib / 1024,
        returncode=proc.returncode,
    )


# -- the data ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """A generated (or given) msrun_log/ and what triage should find in it."""

    path: Path
    files: int
    bytes: int
    fault_rank: int | None
    label: str


def ensure_dataset(
    out: Path,
    ranks: int,
    mb: float,
    seed: int,
    fault_rank: int | None,
    steps_per_epoch: int = gen.DEFAULT_STEPS_PER_EPOCH,
) -> Dataset:
    """Generate bench/out/<name>/msrun_log unless an identical one is already there."""
    fault = fault_rank if fault_rank is not None else gen.default_fault_rank(ranks)
    root = out / f"r{ranks}_mb{mb:g}_f{fault}_s{seed}_spe{steps_per_epoch}"
    log_dir = root / "msrun_log"
    stamp = root / "params.json"
    params = {
        "ranks": ranks,
        "mb": mb,
        "fault_rank": fault,
        "seed": seed,
        "steps_per_epoch": steps_per_epoch,
        "generator": _generator_version(),
    }
    if not (stamp.exists() and json.loads(stamp.read_text()) == params and log_dir.is_dir()):
        began = time.perf_counter()
        print(f"generating {ranks} x {mb:g} MiB into {log_dir} ...", file=sys.stderr, flush=True)
        plan = gen.plan_run(
            ranks, mb, fault, seed, steps_per_epoch, gen.DEFAULT_STEP_MS, gen.DEFAULT_HCCL_TIMEOUT_S
        )
        gen.generate(log_dir, plan)
        stamp.write_text(json.dumps(params))
        print(f"  done in {time.perf_counter() - began:.1f} s", file=sys.stderr)
    return describe(log_dir, fault, f"{ranks} x {mb:g} MiB")


def _generator_version() -> int:
    """Changes when gen_msrun_log.py does, so stale data is regenerated."""
    return os.stat(gen.__file__).st_mtime_ns


def describe(log_dir: Path, fault_rank: int | None, label: str | None = None) -> Dataset:
    """Size up a log directory: both tools read every file under it."""
    files = [p for p in sorted(log_dir.rglob("*")) if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    return Dataset(log_dir, len(files), size, fault_rank, label or _short(log_dir))


def _short(log_dir: Path) -> str:
    """`run/msrun_log` rather than just `msrun_log`, for the table."""
    return f"{log_dir.resolve().parent.name}/{log_dir.name}"


def warm_cache(data: Dataset) -> None:
    """Read every file once so that both tools read from the page cache, not the disk."""
    for path in data.path.rglob("*"):
        if path.is_file():
            with path.open("rb", buffering=0) as fh:
                while fh.read(8 * MIB):
                    pass


def write_markers(out: Path) -> Path:
    """The fixed strings triage looks for, one per line, for `grep -F -f`."""
    from msrunwatch.read.markers import grep_markers
    from msrunwatch.rules.loader import load_rules

    path = out / "markers.txt"
    path.write_text("\n".join(grep_markers(load_rules())) + "\n", encoding="utf-8")
    return path


# -- the two contenders --------------------------------------------------------------------------


def grep_command(
    markers: Path, data: Dataset, mode: str, out: Path
) -> tuple[list[str], int | None, list[str] | None]:
    """grep's argv, stdout and drain for the chosen baseline.

    Never plain `> /dev/null`: GNU grep notices that its output is /dev/null and stops at
    the first match, as with -q, so it would read almost nothing.
    """
    base = ["grep", "-F", "-f", str(markers), "-r", str(data.path)]
    if mode == "pipe":  # grep ... | cat > /dev/null: every matching line is printed
        return base, None, ["cat"]
    if mode == "file":  # grep ... > hits.txt
        hits = os.open(out / "grep_hits.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        return base, hits, None
    return ["grep", "-c", *base[1:]], None, ["cat"]  # count matching lines per file


def run_grep(markers: Path, data: Dataset, mode: str, out: Path) -> Run:
    cmd, stdout, drain = grep_command(markers, data, mode, out)
    if stdout is None:
        return measure(cmd, drain=drain)
    try:
        return measure(cmd, stdout)
    finally:
        os.close(stdout)


def run_triage(msrunwatch: Sequence[str], data: Dataset, report: Path) -> Run:
    """The report goes to a file (a few KB; same cost as /dev/null) so it can be checked."""
    report.unlink(missing_ok=True)  # a failed run must not be judged by the last one's report
    return measure(
        [*msrunwatch, "triage", str(data.path), "--format", "json", "--output", str(report)]
    )


def check_report(report: Path, fault_rank: int | None) -> tuple[bool, str]:
    """Did triage blame the injected OOM on the right rank?"""
    try:
        root = json.loads(report.read_text()).get("root_cause") or {}
    except (OSError, ValueError) as exc:
        return False, f"no JSON report: {exc}"
    ranks, category = root.get("ranks"), root.get("category")
    said = f"root_cause.ranks={ranks} category={category!r} rule={root.get('rule')!r}"
    if fault_rank is None:
        return True, f"{said} (no expected fault given)"
    return ranks == [fault_rank] and category == "oom", said


TRIAGE_EXITS = (0, 1)
"""Exit codes of a triage that produced a verdict: healthy, or faults found."""


# -- one benchmark -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """Every run of both tools on one dataset, and whether triage got the fault right."""

    data: Dataset
    grep: list[Run]
    triage: list[Run]
    correct: bool
    verdict: str

    @staticmethod
    def median(runs: list[Run], attr: str) -> float:
        return float(statistics.median(getattr(r, attr) for r in runs))

    @property
    def grep_s(self) -> float:
        return self.median(self.grep, "wall_s")

    @property
    def triage_s(self) -> float:
        return self.median(self.triage, "wall_s")

    @property
    def ratio(self) -> float:
        return self.triage_s / self.grep_s

    @property
    def triage_peak_mib(self) -> float:
        return max(r.peak_tree_mib for r in self.triage)


def bench(
    data: Dataset, markers: Path, msrunwatch: Sequence[str], repeat: int, grep_mode: str, out: Path
) -> Result:
    """Alternate the two tools `repeat` times each so drift hurts both alike.

    The cache is re-warmed before every run: some hosts (this VM's DAMON pageout, for one)
    evict page cache that has been idle for a minute.
    """
    report = out / "triage.json"
    grep_runs, triage_runs, problems = [], [], []
    verdict = ""
    for i in range(repeat):
        warm_cache(data)
        grep_runs.append(run_grep(markers, data, grep_mode, out))
        warm_cache(data)
        run = run_triage(msrunwatch, data, report)
        print(
            f"  run {i + 1}/{repeat}: grep {grep_runs[-1].wall_s:.2f} s, "
            f"msrunwatch {run.wall_s:.2f} s "
            f"(peak {run.peak_tree_mib:.0f} MiB, exit {run.returncode})",
            file=sys.stderr,
            flush=True,
        )
        if run.returncode not in TRIAGE_EXITS:  # an error, not a verdict: time nothing
            problems.append(f"run {i + 1} exited {run.returncode}")
            continue
        triage_runs.append(run)
        ok, verdict = check_report(report, data.fault_rank)
        if not ok:
            problems.append(f"run {i + 1} wrong")
    if not triage_runs:
        sys.exit(f"msrunwatch failed on every run ({', '.join(problems)})")
    if problems:
        verdict = f"{verdict}; {', '.join(problems)} (left out of the timings)"
    return Result(data, grep_runs, triage_runs, not problems, verdict)


def print_result(r: Result, grep_mode: str) -> None:
    """The figures of one dataset, one per line, with the targets next to them."""
    mib = r.data.bytes / MIB
    g_cpu, t_cpu = Result.median(r.grep, "cpu_s"), Result.median(r.triage, "cpu_s")
    rows = [
        ("data", f"{r.data.path}"),
        ("files", f"{r.data.files}"),
        ("bytes", f"{r.data.bytes} ({mib:.1f} MiB)"),
        ("grep baseline", GREP_BASELINES[grep_mode]),
        ("grep median", f"{r.grep_s:.3f} s   (runs: {_runs(r.grep)})"),
        ("msrunwatch median", f"{r.triage_s:.3f} s   (runs: {_runs(r.triage)})"),
        (
            "ratio msrunwatch/grep",
            f"{r.ratio:.2f}   (target <= 1.00; best-of-runs ratio "
            f"{_best(r.triage) / _best(r.grep):.2f})",
        ),
        ("grep throughput", f"{mib / r.grep_s:.0f} MiB/s"),
        ("msrunwatch throughput", f"{mib / r.triage_s:.0f} MiB/s"),
        ("grep CPU (median)", f"{g_cpu:.2f} s"),
        (
            "msrunwatch CPU (median)",
            f"{t_cpu:.2f} s user+sys over all processes ({t_cpu / g_cpu:.2f} x grep's)",
        ),
        (
            "msrunwatch peak RSS",
            f"{r.triage_peak_mib:.1f} MiB, summed over its process tree (target < 200)",
        ),
        ("grep peak RSS", f"{max(x.peak_tree_mib for x in r.grep):.1f} MiB"),
        (
            "root cause",
            f"{'OK' if r.correct else 'MISMATCH'}: {r.verdict} "
            f"(expected ranks=[{r.data.fault_rank}] category='oom')",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def _runs(runs: list[Run]) -> str:
    return ", ".join(f"{r.wall_s:.2f}" for r in runs)


def _best(runs: list[Run]) -> float:
    """Fastest wall time: on a shared machine, the run least disturbed by others."""
    return min(r.wall_s for r in runs)


def markdown_table(results: list[Result]) -> str:
    head = (
        "| data | files | GiB | grep s | msrunwatch s | ratio | grep MiB/s | msrunwatch MiB/s "
        "| msrunwatch s/GiB | peak RSS MiB | root cause |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        gib, mib = r.data.bytes / GIB, r.data.bytes / MIB
        lines.append(
            f"| {r.data.label} | {r.data.files} | {gib:.2f} | {r.grep_s:.2f} | {r.triage_s:.2f} "
            f"| {r.ratio:.2f} | {mib / r.grep_s:.0f} | {mib / r.triage_s:.0f} "
            f"| {r.triage_s / gib:.2f} "
            f"| {r.triage_peak_mib:.0f} | {'OK' if r.correct else 'MISMATCH'} |"
        )
    return "\n".join(lines)


def environment(msrunwatch: Sequence[str], grep_mode: str) -> str:
    """One line on the machine and tool versions, to paste next to the table."""
    grep_version = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout
    mw = subprocess.run([*msrunwatch, "--version"], capture_output=True, text=True).stdout.strip()
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in _read("/proc/cpuinfo").splitlines()
            if ln.startswith("model name")
        ),
        platform.processor() or "?",
    )
    return (
        f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, Python "
        f"{platform.python_version()}, "
        f"{grep_version.splitlines()[0] if grep_version else 'grep ?'}"
        f" (LC_ALL={os.environ.get('LC_ALL') or os.environ.get('LANG', '')}), {mw}; "
        f"grep baseline: `{GREP_BASELINES[grep_mode]}`; "
        "medians of alternating runs, warm page cache"
    )


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


# -- driver --------------------------------------------------------------------------------------


def resolve_msrunwatch(given: str | None) -> list[str]:
    """The command to time: --msrunwatch, else the one beside this Python, else PATH."""
    if given:
        return shlex.split(given)
    beside = Path(sys.executable).parent / "msrunwatch"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("msrunwatch")
    return [found] if found else [sys.executable, "-m", "msrunwatch"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=16.0, help="MiB per worker log")
    parser.add_argument(
        "--dir", type=Path, help="benchmark this msrun_log/ instead of generating one"
    )
    parser.add_argument(
        "--fault-rank", type=int, help="rank expected as root cause (default: 37 / generator's)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--steps-per-epoch",
        type=int,
        default=gen.DEFAULT_STEPS_PER_EPOCH,
        help="LossMonitor epoch length in the generated logs",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--msrunwatch", help="msrunwatch command (default: beside this Python, then PATH)"
    )
    parser.add_argument(
        "--grep-mode",
        choices=GREP_MODES,
        default="pipe",
        help="pipe: print matches into a pipe (default); file: into a file; count: -c",
    )
    parser.add_argument(
        "--sizes", help="comma-separated MiB per rank, e.g. 4,8,16: check cost is linear"
    )
    parser.add_argument("--out", type=Path, default=BENCH / "out", help="where data and reports go")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if shutil.which("grep") is None:
        parser.error("GNU grep not found")
    args.out.mkdir(parents=True, exist_ok=True)
    msrunwatch = resolve_msrunwatch(args.msrunwatch)
    markers = write_markers(args.out)

    results = []
    for data in datasets(args):
        print(
            f"benchmarking {data.path} ({data.bytes / MIB:.0f} MiB, {data.files} files), "
            f"{args.repeat} alternating runs ...",
            file=sys.stderr,
            flush=True,
        )
        results.append(bench(data, markers, msrunwatch, args.repeat, args.grep_mode, args.out))
        print()
        print_result(results[-1], args.grep_mode)
    if len(results) > 1:
        print()
        print(linearity(results))
    print()
    print(environment(msrunwatch, args.grep_mode))
    print()
    print(markdown_table(results))
    save_results(results, args.out / "last_results.json")
    return 0 if all(r.correct for r in results) else 1


def save_results(results: list[Result], path: Path) -> None:
    """Every run's raw figures, for comparing before/after a change to msrunwatch."""
    rows = [
        {
            "data": str(r.data.path),
            "bytes": r.data.bytes,
            "files": r.data.files,
            "grep": [asdict(x) for x in r.grep],
            "triage": [asdict(x) for x in r.triage],
            "correct": r.correct,
            "verdict": r.verdict,
        }
        for r in results
    ]
    path.write_text(json.dumps(rows, indent=1))


def datasets(args: argparse.Namespace) -> list[Dataset]:
    """--dir as given, or one generated dataset per size (--sizes, else --mb)."""
    if args.dir:
        fault = args.fault_rank if args.fault_rank is not None else _stamped_fault(args.dir)
        return [describe(args.dir, fault)]
    sizes = [float(s) for s in args.sizes.split(",")] if args.sizes else [args.mb]
    return [
        ensure_dataset(args.out, args.ranks, mb, args.seed, args.fault_rank, args.steps_per_epoch)
        for mb in sizes
    ]


def linearity(results: list[Result]) -> str:
    """Seconds per GiB at each size: flat means cost is linear in bytes."""
    lines = ["cost per GiB (flat = linear in bytes):"]
    per_gib = []
    for r in results:
        gib = r.data.bytes / GIB
        per_gib.append(r.triage_s / gib)
        lines.append(
            f"  {r.data.bytes / MIB:7.0f} MiB: msrunwatch {r.triage_s / gib:.2f} s/GiB, "
            f"grep {r.grep_s / gib:.2f} s/GiB, peak RSS {r.triage_peak_mib:.0f} MiB"
        )
    lines.append(f"  msrunwatch s/GiB spread: max/min = {max(per_gib) / min(per_gib):.2f}")
    return "\n".join(lines)


def _stamped_fault(log_dir: Path) -> int | None:
    """The fault rank recorded by ensure_dataset next to a generated msrun_log/, if any."""
    stamp = log_dir.parent / "params.json"
    try:
        return int(json.loads(stamp.read_text())["fault_rank"])
    except (OSError, ValueError, KeyError):
        return None


if __name__ == "__main__":
    sys.exit(main())
