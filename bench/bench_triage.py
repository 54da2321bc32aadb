"""Time `msrunwatch triage` against grep, ripgrep and cat on the same large msrun_log/.

    python bench/bench_triage.py [--ranks 64 --mb 16] [--glog-v 1|2] [--repeat 3]
                                 [--sizes 4,8,16] [--files 8,64,1024 --total-mib 1024]
                                 [--nodes N] [--dir DIR] [--msrunwatch PATH]

Generates the data with gen_msrun_log.py (or takes --dir), then, with the page cache warm,
runs each tool in turn, the order rotating from one round to the next, --repeat rounds:

    grep-short  grep -rn -F -f markers_short.txt DIR | wc -l   (what a person would type)
    grep-rules  grep -rn -F -f markers_rules.txt DIR | wc -l   (every fixed string the rules need)
    rg          rg -n -F -f markers_short.txt --no-ignore --hidden DIR | wc -l   (if installed)
    cat         cat FILES > /dev/null                           (the floor: just reading)
    py-read     python bench/floor.py --passes read FILES       (Python's floor: just reading)
    py-passes   python bench/floor.py --passes scanner FILES    (the scanner's block passes alone)
    msrunwatch  msrunwatch triage --format json --output triage.json DIR

and reports per tool the median wall time, msrunwatch's time over it, CPU (user + sys of the
whole process tree, from wait4) over wall, peak RSS of the whole process tree (VmRSS summed,
sampled from /proc every 10 ms) and MiB/s; it checks every triage report names the injected
fault (rank and category) and exits 1 if one did not. It also times the cold start of
`msrunwatch check` on a small fixture next to `python -c pass` and `python -c 'import
msrunwatch'`. Results are printed, never asserted: timing belongs here, not in the tests.
Linux only (/proc, os.wait4).
"""

from __future__ import annotations

import argparse
import importlib.util
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
from dataclasses import asdict, dataclass, field
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
SHORT_MARKERS = ("ERROR", "CRITICAL", "Traceback", "Error", "memory", "EI00", "timed out", "loss")
"""What a person would grep an msrun_log/ for."""
TOOLS = ("grep-short", "grep-rules", "rg", "cat", "py-read", "py-passes", "msrunwatch")
BASELINES = TOOLS[:-1]
COLD_FIXTURE = REPO / "fixtures" / "cpu_dp2_oom_alloc_failed" / "msrun_log"
GREP_MODES = ("pipe", "file")
"""pipe: matching lines into `wc -l` (default); file: into a file, counted afterwards."""


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
    matches: int | None = None
    """Matching lines the tool printed (grep, rg), counted by the drain."""

    @property
    def cpu_pct(self) -> float:
        return 100.0 * self.cpu_s / self.wall_s if self.wall_s else 0.0


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
    cmd: Sequence[str],
    stdout: int = subprocess.DEVNULL,
    drain: Sequence[str] | None = None,
    stderr: int | None = None,
) -> Run:
    """Run cmd (optionally piped into drain) and measure it; waits with wait4 for rusage.

    CPU and RSS are cmd's process tree only; the wall time ends when the drain has finished
    too. A drain's stdout, if it is a number (`wc -l`), becomes Run.matches. stderr: where
    cmd's goes (None: the bench's own).
    """
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if drain else stdout, stderr=stderr)
    sink = None
    if drain:
        sink = subprocess.Popen(drain, stdin=proc.stdout, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.close()
    sampler = TreeSampler([proc.pid])
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    matches = None
    if sink is not None:
        said, _ = sink.communicate()
        matches = int(said) if said.strip().isdigit() else None
    wall = time.perf_counter() - began
    sampler.stop()
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_tree_mib=sampler.peak_kib / 1024,
        returncode=proc.returncode,
        matches=matches,
    )


# -- the data ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """A generated (or given) log directory and what triage should find in it."""

    path: Path
    """What every tool is given: an msrun_log/, or the directory of node<i>/msrun_log/."""
    files: int
    bytes: int
    fault_rank: int | None
    label: str
    glog_v: int | None = None
    nodes: int | None = None
    ranks: int | None = None


def ensure_dataset(
    out: Path,
    ranks: int,
    mb: float,
    seed: int,
    fault_rank: int | None,
    glog_v: int = 1,
    nodes: int = 1,
    source: Path = gen.SOURCE_DIR,
    oom_form: str = "cpu",
) -> Dataset:
    """Generate bench/out/<name>/ unless an identical one is already there."""
    fault = fault_rank if fault_rank is not None else gen.default_fault_rank(ranks)
    name = f"v{glog_v}_r{ranks}_mb{mb:g}_n{nodes}_f{fault}_s{seed}_{oom_form}"
    if source.resolve() != gen.SOURCE_DIR.resolve():
        name += f"_{source.resolve().parent.name}"
    root = out / name
    log_dir = root / ("msrun_log" if nodes == 1 else "logs")
    stamp = root / "params.json"
    params = {
        "ranks": ranks,
        "mb": mb,
        "fault_rank": fault,
        "seed": seed,
        "glog_v": glog_v,
        "nodes": nodes,
        "source": str(source.resolve()),
        "oom_form": oom_form,
        "generator": _generator_version(),
    }
    if not (stamp.exists() and json.loads(stamp.read_text()) == params and log_dir.is_dir()):
        began = time.perf_counter()
        say(f"generating {ranks} x {mb:g} MiB, GLOG_v={glog_v}, {nodes} node(s) into {log_dir} ...")
        stamp.unlink(missing_ok=True)
        wl = gen.plan(
            ranks, mb, fault, seed, glog_v=glog_v, nodes=nodes, source=source, oom_form=oom_form
        )
        gen.generate(log_dir, wl)
        stamp.write_text(json.dumps(params))
        say(f"  done in {time.perf_counter() - began:.1f} s")
    data = describe(log_dir, fault, f"{ranks} x {_mib(mb)} MiB")
    return Dataset(data.path, data.files, data.bytes, fault, data.label, glog_v, nodes, ranks)


def _mib(mb: float) -> str:
    return f"{mb:g}" if mb >= 1 else f"{mb:.2f}"


def _generator_version() -> int:
    """Changes when gen_msrun_log.py does, so stale data is regenerated."""
    return os.stat(gen.__file__).st_mtime_ns


def describe(log_dir: Path, fault_rank: int | None, label: str | None = None) -> Dataset:
    """Size up a log directory: every tool reads every file under it."""
    files = data_files(log_dir)
    size = sum(p.stat().st_size for p in files)
    return Dataset(log_dir, len(files), size, fault_rank, label or _short(log_dir))


def data_files(log_dir: Path) -> list[Path]:
    return [p for p in sorted(log_dir.rglob("*")) if p.is_file()]


def _short(log_dir: Path) -> str:
    """`run/msrun_log` rather than just `msrun_log`, for the table."""
    return f"{log_dir.resolve().parent.name}/{log_dir.name}"


def warm_cache(data: Dataset) -> None:
    """Read every file once so that every tool reads from the page cache, not the disk."""
    for path in data.path.rglob("*"):
        if path.is_file():
            with path.open("rb", buffering=0) as fh:
                while fh.read(8 * MIB):
                    pass


def write_markers(out: Path) -> dict[str, Path]:
    """The two marker lists, one fixed string per line, for `-F -f`.

    markers_rules.txt is msrunwatch's own list (msrunwatch.read.markers.grep_markers over the
    built-in rules): every fixed string some rule needs to see.
    """
    from msrunwatch.read.markers import grep_markers
    from msrunwatch.rules.loader import load_rules

    short, rules = out / "markers_short.txt", out / "markers_rules.txt"
    short.write_text("\n".join(SHORT_MARKERS) + "\n", encoding="utf-8")
    rules.write_text("\n".join(grep_markers(load_rules())) + "\n", encoding="utf-8")
    return {"short": short, "rules": rules}


# -- the tools -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """How one tool is run on one dataset."""

    argv: list[str]
    shown: str
    drain: list[str] | None = None
    output: Path | None = None
    """stdout goes to this file (grep/rg in --grep-mode file, msrunwatch's report)."""


def commands(
    data: Dataset,
    markers: dict[str, Path],
    msrunwatch: Sequence[str],
    grep_mode: str,
    out: Path,
) -> dict[str, Command]:
    """Each tool's command line. grep and rg print every matching line (-n, with the file name).

    Never plain `> /dev/null` for them: GNU grep notices that its output is /dev/null and
    stops at the first match, as with -q, so it would read almost nothing. Into a pipe to
    `wc -l` they print everything, and the count shows whether grep and rg saw the same.
    """
    d = str(data.path)
    search = {
        "grep-short": ["grep", "-rn", "-F", "-f", str(markers["short"]), d],
        "grep-rules": ["grep", "-rn", "-F", "-f", str(markers["rules"]), d],
        # rg skips hidden and .gitignore'd files by default; grep -r reads everything
        "rg": ["rg", "-n", "-F", "-f", str(markers["short"]), "--no-ignore", "--hidden", d],
    }
    cmds = {}
    for name, argv in search.items():
        if grep_mode == "pipe":
            cmds[name] = Command(argv, f"{shlex.join(argv)} | wc -l", drain=["wc", "-l"])
        else:
            hits = out / f"hits_{name}.txt"
            cmds[name] = Command(argv, f"{shlex.join(argv)} > {hits.name}", output=hits)
    files = [str(p) for p in data_files(data.path)]
    cmds["cat"] = Command(["cat", *files], f"cat <{len(files)} files> > /dev/null")
    for name, passes in (("py-read", "read"), ("py-passes", "scanner")):
        argv = [sys.executable, str(BENCH / "floor.py"), "--passes", passes]
        cmds[name] = Command([*argv, *files], f"{shlex.join(argv)} <{len(files)} files>")
    report = out / "triage.json"
    argv = [*msrunwatch, "triage", "--format", "json", "--output", str(report), d]
    cmds["msrunwatch"] = Command(argv, shlex.join(argv), output=report)
    return cmds


def run_tool(name: str, cmd: Command) -> Run:
    if cmd.drain:
        return measure(cmd.argv, drain=cmd.drain)
    if cmd.output is None or name == "msrunwatch":
        if cmd.output is not None:  # a failed run must not be judged by the last one's report
            cmd.output.unlink(missing_ok=True)
        return measure(cmd.argv)
    fd = os.open(cmd.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        run = measure(cmd.argv, fd)
    finally:
        os.close(fd)
    with cmd.output.open("rb") as fh:
        count = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(MIB), b""))
    return Run(run.wall_s, run.cpu_s, run.peak_tree_mib, run.returncode, count)


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
GREP_EXITS = (0, 1)
"""grep and rg: 0 matches found, 1 none; 2 is an error."""
GREPS = ("grep-short", "grep-rules", "rg")


# -- one benchmark -------------------------------------------------------------------------------


@dataclass
class Result:
    """Every run of every tool on one dataset, and whether triage got the fault right."""

    data: Dataset
    runs: dict[str, list[Run]]
    correct: bool = True
    verdict: str = ""
    problems: list[str] = field(default_factory=list)

    def wall(self, tool: str) -> float:
        return float(statistics.median(r.wall_s for r in self.runs[tool]))

    def median(self, tool: str, attr: str) -> float:
        return float(statistics.median(getattr(r, attr) for r in self.runs[tool]))

    def peak(self, tool: str) -> float:
        return max(r.peak_tree_mib for r in self.runs[tool])

    def ratio(self, tool: str) -> float:
        """msrunwatch's median wall time over tool's."""
        return self.wall("msrunwatch") / self.wall(tool)

    def has(self, tool: str) -> bool:
        return bool(self.runs.get(tool))


def bench(data: Dataset, cmds: dict[str, Command], repeat: int) -> Result:
    """Run every tool `repeat` times, the order rotating each round so drift hurts all alike.

    The cache is re-warmed before every run: some hosts (this VM's DAMON pageout, for one)
    evict page cache that has been idle for a minute.
    """
    tools = [t for t in TOOLS if t in cmds]
    result = Result(data, {t: [] for t in tools})
    for i in range(repeat):
        order = tools[i % len(tools) :] + tools[: i % len(tools)]
        said = []
        for tool in order:
            warm_cache(data)
            run = run_tool(tool, cmds[tool])
            said.append(f"{tool} {run.wall_s:.2f} s")
            if tool == "msrunwatch":
                if run.returncode not in TRIAGE_EXITS:  # an error, not a verdict: time nothing
                    result.problems.append(f"msrunwatch run {i + 1} exited {run.returncode}")
                    continue
                report = cmds[tool].output
                assert report is not None
                ok, result.verdict = check_report(report, data.fault_rank)
                if not ok:
                    result.problems.append(f"msrunwatch run {i + 1} wrong")
            elif run.returncode not in (GREP_EXITS if tool in GREPS else (0,)):
                result.problems.append(f"{tool} run {i + 1} exited {run.returncode}")
            result.runs[tool].append(run)
        say(f"  round {i + 1}/{repeat}: " + ", ".join(said))
    if not result.runs.get("msrunwatch"):
        sys.exit(f"msrunwatch failed on every run ({', '.join(result.problems)})")
    result.correct = not any(p.startswith("msrunwatch") for p in result.problems)
    return result


def cpu_scaling(
    data: Dataset, cmd: Command, counts: Sequence[str], repeat: int
) -> list[tuple[int, list[Run]]]:
    """msrunwatch on the first N CPUs only (`taskset -c 0..N-1`, which its pool follows):
    is the parallelism real? Rounds rotate over the counts, like the tools."""
    total = os.cpu_count() or 1
    wanted = sorted({total if c == "all" else min(int(c), total) for c in counts})
    runs: dict[int, list[Run]] = {n: [] for n in wanted}
    for i in range(repeat):
        order = wanted[i % len(wanted) :] + wanted[: i % len(wanted)]
        for n in order:
            warm_cache(data)
            argv = ["taskset", "-c", f"0-{n - 1}", *cmd.argv]
            run = measure(argv)
            if run.returncode in TRIAGE_EXITS:
                runs[n].append(run)
        say(f"  cpus round {i + 1}/{repeat} done")
    return [(n, rs) for n, rs in runs.items() if rs]


def cpu_table(data: Dataset, scaling: list[tuple[int, list[Run]]]) -> str:
    lines = [
        f"CPUs given to msrunwatch ({data.label}, {data.bytes / MIB:.0f} MiB, `taskset -c`):",
        "",
        "| CPUs | wall s | CPU s | CPU % | speed-up | peak RSS MiB |",
        "|---|---|---|---|---|---|",
    ]
    base = statistics.median(r.wall_s for r in scaling[0][1])
    for n, rs in scaling:
        wall = statistics.median(r.wall_s for r in rs)
        cpu = statistics.median(r.cpu_s for r in rs)
        lines.append(
            f"| {n} | {wall:.2f} | {cpu:.2f} | {100 * cpu / wall:.0f} | {base / wall:.2f} "
            f"| {max(r.peak_tree_mib for r in rs):.0f} |"
        )
    return "\n".join(lines)


def print_result(r: Result, cmds: dict[str, Command], rg_missing: bool) -> None:
    """The figures of one dataset: one line per tool, then the checks."""
    d = r.data
    mib = d.bytes / MIB
    print(f"data        {d.path}")
    print(
        f"            {d.files} files, {d.bytes} bytes ({mib:.1f} MiB), "
        f"GLOG_v={d.glog_v or '?'}, {d.nodes or 1} node dir(s)"
    )
    head = (
        f"  {'tool':<11} {'wall s':>7} {'msrunwatch/':>11} {'CPU s':>6} {'CPU %':>6} "
        f"{'peak RSS':>9} {'MiB/s':>6} {'lines':>9}  runs (s)"
    )
    print(head)
    for tool in TOOLS:
        if not r.has(tool):
            if tool == "rg" and rg_missing:
                print(f"  {'rg':<11} ripgrep (rg) is not installed: not measured")
            continue
        runs = r.runs[tool]
        ratio = "" if tool == "msrunwatch" else f"{r.ratio(tool):.2f}x"
        lines = runs[-1].matches
        print(
            f"  {tool:<11} {r.wall(tool):7.3f} {ratio:>11} {r.median(tool, 'cpu_s'):6.2f} "
            f"{r.median(tool, 'cpu_pct'):6.0f} "
            f"{r.peak(tool):6.0f} MiB {mib / r.wall(tool):6.0f} "
            f"{'' if lines is None else lines:>9}  {_runs(runs)}"
        )
    for tool in TOOLS:
        if tool in cmds and r.has(tool):
            print(f"  {tool:<11} = {cmds[tool].shown}")
    counts = {t: r.runs[t][-1].matches for t in ("grep-short", "rg") if r.has(t)}
    if len(counts) == 2 and len(set(counts.values())) != 1:
        print(f"  NOTE: grep-short and rg printed different line counts: {counts}")
    print(
        f"  root cause  {'OK' if r.correct else 'MISMATCH'}: {r.verdict} "
        f"(expected ranks=[{d.fault_rank}] category='oom')"
    )
    for problem in r.problems:
        print(f"  PROBLEM     {problem}")


def _runs(runs: list[Run]) -> str:
    return ", ".join(f"{r.wall_s:.2f}" for r in runs)


# -- cold start ----------------------------------------------------------------------------------


def cold_start(msrunwatch: Sequence[str], repeat: int) -> dict[str, list[Run]]:
    """Start-up cost: the interpreter alone, importing msrunwatch, a check of a tiny fixture.

    The three alternate, run after run; the fixture is a few KB, so this is almost all
    interpreter start, imports and rule loading.
    """
    python = sys.executable
    cmds = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import msrunwatch'": [python, "-c", "import msrunwatch"],
        f"msrunwatch check {COLD_FIXTURE.relative_to(REPO)}": [
            *msrunwatch,
            "check",
            str(COLD_FIXTURE),
        ],
    }
    runs: dict[str, list[Run]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for name, argv in cmds.items():
            runs[name].append(measure(argv))
    return runs


def print_cold(runs: dict[str, list[Run]]) -> None:
    print(f"cold start (median of {len(next(iter(runs.values())))}, alternating):")
    for name, rs in runs.items():
        wall = statistics.median(r.wall_s for r in rs)
        cpu = statistics.median(r.cpu_s for r in rs)
        print(
            f"  {name:<58} {wall * 1000:7.1f} ms wall, {cpu * 1000:6.1f} ms CPU, "
            f"peak RSS {max(r.peak_tree_mib for r in rs):.0f} MiB, exit {rs[-1].returncode}"
        )


# -- report --------------------------------------------------------------------------------------


def markdown_table(results: list[Result], rg_missing: bool) -> str:
    head = (
        "| data | GLOG_v | node dirs | files | MiB | tool | wall s | msrunwatch / tool "
        "| CPU s | CPU % | peak RSS MiB | MiB/s | root cause |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        d = r.data
        mib = d.bytes / MIB
        for tool in TOOLS:
            first = f"| {d.label} | {d.glog_v or '?'} | {d.nodes or 1} | {d.files} | {mib:.0f} "
            if not r.has(tool):
                if tool == "rg" and rg_missing:
                    lines.append(first + "| rg | not installed | | | | | | |")
                continue
            ratio = "1.00" if tool == "msrunwatch" else f"{r.ratio(tool):.2f}"
            verdict = ("OK" if r.correct else "MISMATCH") if tool == "msrunwatch" else ""
            lines.append(
                first + f"| {tool} | {r.wall(tool):.2f} | {ratio} | {r.median(tool, 'cpu_s'):.2f} "
                f"| {r.median(tool, 'cpu_pct'):.0f} "
                f"| {r.peak(tool):.0f} | {mib / r.wall(tool):.0f} | {verdict} |"
            )
    return "\n".join(lines)


def cold_table(runs: dict[str, list[Run]]) -> str:
    lines = ["| command | wall ms (median) | CPU ms | peak RSS MiB |", "|---|---|---|---|"]
    for name, rs in runs.items():
        lines.append(
            f"| `{name}` | {statistics.median(r.wall_s for r in rs) * 1000:.0f} "
            f"| {statistics.median(r.cpu_s for r in rs) * 1000:.0f} "
            f"| {max(r.peak_tree_mib for r in rs):.0f} |"
        )
    return "\n".join(lines)


def linearity(results: list[Result]) -> str:
    """Seconds per GiB at each size: flat means cost is linear in bytes."""
    lines = ["cost per GiB (flat = linear in bytes):"]
    per_gib = []
    for r in results:
        gib = r.data.bytes / GIB
        per_gib.append(r.wall("msrunwatch") / gib)
        others = ", ".join(f"{t} {r.wall(t) / gib:.2f}" for t in BASELINES if r.has(t))
        lines.append(
            f"  {r.data.label:>18} ({r.data.files} files, {r.data.bytes / MIB:6.0f} MiB): "
            f"msrunwatch {r.wall('msrunwatch') / gib:.2f} s/GiB ({others}), "
            f"peak RSS {r.peak('msrunwatch'):.0f} MiB"
        )
    lines.append(f"  msrunwatch s/GiB spread: max/min = {max(per_gib) / min(per_gib):.2f}")
    return "\n".join(lines)


def environment(msrunwatch: Sequence[str], grep_mode: str) -> str:
    """One line on the machine and tool versions, to paste next to the table."""
    grep_version = _first_line(["grep", "--version"])
    rg_version = _first_line(["rg", "--version"]) if shutil.which("rg") else "rg not installed"
    mw = _first_line([*msrunwatch, "--version"])
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
        f"{platform.python_version()}, {grep_version}, {rg_version}, "
        f"{_first_line(['cat', '--version'])} "
        f"(LC_ALL={os.environ.get('LC_ALL') or os.environ.get('LANG', '')}), {mw}; "
        f"grep/rg output: {grep_mode}; medians of rotating-order runs, warm page cache"
    )


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return f"{cmd[0]} ?"
    return out.splitlines()[0].strip() if out else f"{cmd[0]} ?"


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def load() -> str:
    """`uptime`'s load averages: other work on the machine skews every figure."""
    avg = _read("/proc/loadavg").split()
    return f"load average {', '.join(avg[:3])} ({avg[3] if len(avg) > 3 else '?'} running)"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


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


def compile_bytecode() -> str:
    """Write the msrunwatch package's bytecode, as `pip install` does for an installed copy.
    An editable install run with PYTHONDONTWRITEBYTECODE=1 (some CI images and containers)
    would otherwise compile its sources again on every run: 0.2 to 0.6 s of CPU before any
    log is read, which is no part of triage. Reading existing bytecode is not affected by
    the variable."""
    spec = importlib.util.find_spec("msrunwatch")
    if spec is None or not spec.submodule_search_locations:
        return "bytecode: msrunwatch is not importable by this Python; not compiled"
    package = next(iter(spec.submodule_search_locations))
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", package], capture_output=True, check=False
    )
    state = "compiled" if done.returncode == 0 else f"not compiled ({done.returncode})"
    return f"bytecode: {package} {state} (as pip installs it)"


def _floats(text: str | None) -> list[float]:
    return [float(s) for s in text.split(",")] if text else []


def _ints(text: str | None) -> list[int]:
    return [int(s) for s in text.split(",")] if text else []


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=16.0, help="MiB per worker log")
    parser.add_argument(
        "--sizes",
        help="comma-separated MiB per rank at --ranks, e.g. 4,8,16,32,64: is cost linear?",
    )
    parser.add_argument(
        "--files",
        help="comma-separated worker counts at a fixed total (--total-mib), e.g. 8,64,256,1024",
    )
    parser.add_argument(
        "--total-mib", type=float, help="total of the --files curve (default: --ranks x --mb)"
    )
    parser.add_argument(
        "--nodes", default="1", help="node<i>/msrun_log directories (comma-separated for a curve)"
    )
    parser.add_argument("--glog-v", type=int, choices=(1, 2), default=1)
    parser.add_argument(
        "--source", type=Path, default=gen.SOURCE_DIR, help="real GLOG_v=1 msrun_log/ to repeat"
    )
    parser.add_argument("--oom-form", choices=("cpu", "ascend"), default="cpu")
    parser.add_argument(
        "--dir", type=Path, help="benchmark this log directory instead of generating one"
    )
    parser.add_argument(
        "--fault-rank", type=int, help="rank expected as root cause (default: 37 / generator's)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of every tool")
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}"
    )
    parser.add_argument(
        "--cold-repeat", type=int, default=10, help="cold-start runs of each (0: skip)"
    )
    parser.add_argument(
        "--msrunwatch", help="msrunwatch command (default: beside this Python, then PATH)"
    )
    parser.add_argument("--grep-mode", choices=GREP_MODES, default="pipe")
    parser.add_argument(
        "--cpus",
        default="",
        help="also run msrunwatch on the first N CPUs (taskset), e.g. 1,2,all: CPU %% and speed-up",
    )
    parser.add_argument("--discard", action="store_true", help="delete generated data after use")
    parser.add_argument("--out", type=Path, default=BENCH / "out", help="where data and reports go")
    args = parser.parse_args(argv)
    args.tools = [t for t in args.tools.split(",") if t]
    args.cpus = [c for c in args.cpus.split(",") if c]
    if args.cpus and shutil.which("taskset") is None:
        parser.error("--cpus needs taskset (util-linux)")
    unknown = set(args.tools) - set(TOOLS)
    if unknown or "msrunwatch" not in args.tools:
        parser.error(f"--tools: choose among {', '.join(TOOLS)}, msrunwatch included")
    args.nodes = _ints(args.nodes)
    for n in args.nodes:
        for ranks in [args.ranks, *_ints(args.files)]:
            if n < 1 or ranks % n:
                parser.error(f"--nodes {n} must divide every rank count ({ranks})")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if shutil.which("grep") is None:
        sys.exit("GNU grep not found")
    rg_missing = shutil.which("rg") is None
    tools = [t for t in args.tools if not (t == "rg" and rg_missing)]
    if rg_missing and "rg" in args.tools:
        print(
            "ripgrep (rg) is not installed: the rg baseline is left out (apt-get install ripgrep)"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    msrunwatch = resolve_msrunwatch(args.msrunwatch)
    print(compile_bytecode())
    markers = write_markers(args.out)
    print(f"before: {load()}")

    results = []
    scaling: list[str] = []
    for data in datasets(args):
        say(
            f"benchmarking {data.path} ({data.bytes / MIB:.0f} MiB, {data.files} files), "
            f"{args.repeat} rounds of {', '.join(tools)} ..."
        )
        cmds = commands(data, markers, msrunwatch, args.grep_mode, args.out)
        cmds = {t: c for t, c in cmds.items() if t in tools}
        results.append(bench(data, cmds, args.repeat))
        print()
        print_result(results[-1], cmds, rg_missing and "rg" in args.tools)
        if args.cpus:
            scaling.append(
                cpu_table(data, cpu_scaling(data, cmds["msrunwatch"], args.cpus, args.repeat))
            )
            print(scaling[-1])
        if args.discard and args.dir is None:
            shutil.rmtree(data.path.parent)
    cold = cold_start(msrunwatch, args.cold_repeat) if args.cold_repeat > 0 else {}
    if len(results) > 1:
        print()
        print(linearity(results))
    if cold:
        print()
        print_cold(cold)
    print()
    print(f"after: {load()}")
    print(environment(msrunwatch, args.grep_mode))
    print()
    print(markdown_table(results, rg_missing and "rg" in args.tools))
    if cold:
        print()
        print(cold_table(cold))
    for table in scaling:
        print()
        print(table)
    save_results(results, cold, args.out / "last_results.json")
    return 0 if all(r.correct for r in results) else 1


def save_results(results: list[Result], cold: dict[str, list[Run]], path: Path) -> None:
    """Every run's raw figures, for comparing before/after a change to msrunwatch."""
    rows = [
        {
            "data": str(r.data.path),
            "label": r.data.label,
            "bytes": r.data.bytes,
            "files": r.data.files,
            "glog_v": r.data.glog_v,
            "nodes": r.data.nodes,
            "runs": {t: [asdict(x) for x in runs] for t, runs in r.runs.items()},
            "correct": r.correct,
            "verdict": r.verdict,
            "problems": r.problems,
        }
        for r in results
    ]
    cold_rows = {k: [asdict(x) for x in v] for k, v in cold.items()}
    path.write_text(json.dumps({"datasets": rows, "cold_start": cold_rows}, indent=1))


def datasets(args: argparse.Namespace) -> list[Dataset]:
    """--dir as given; else one generated dataset per size, per file count, per node count."""
    if args.dir:
        fault = args.fault_rank if args.fault_rank is not None else _stamped_fault(args.dir)
        return [describe(args.dir, fault)]
    specs: list[tuple[int, float]] = [(args.ranks, mb) for mb in _floats(args.sizes)]
    total = args.total_mib or args.ranks * args.mb
    specs += [(n, total / n) for n in _ints(args.files)]
    if not specs:
        specs = [(args.ranks, args.mb)]
    out = []
    for nodes in args.nodes:
        for ranks, mb in specs:
            out.append(
                ensure_dataset(
                    args.out,
                    ranks,
                    mb,
                    args.seed,
                    args.fault_rank
                    if args.fault_rank is not None and args.fault_rank < ranks
                    else None,
                    glog_v=args.glog_v,
                    nodes=nodes,
                    source=args.source,
                    oom_form=args.oom_form,
                )
            )
    return out


def _stamped_fault(log_dir: Path) -> int | None:
    """The fault rank recorded by ensure_dataset next to a generated log directory, if any."""
    stamp = log_dir.parent / "params.json"
    try:
        return int(json.loads(stamp.read_text())["fault_rank"])
    except (OSError, ValueError, KeyError):
        return None


if __name__ == "__main__":
    sys.exit(main())
