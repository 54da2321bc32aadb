"""Cold start: `msrunwatch --version`, `check DIR` and `triage DIR` of a 2-rank run.

    python bench/bench_cold.py [--repeat 20] [--dir DIR] [--msrunwatch CMD] [--imports 15]

Each command is a fresh process, run side by side with two references, `python -c pass`
(the interpreter alone) and `python -c 'import msrunwatch'`, in rounds whose order rotates,
--repeat rounds. msrunwatch's commands run twice per round: with the rule cache warm (what
every run after the first costs) and with it off (`MSRUNWATCH_NO_CACHE=1`: what a first
run, or a machine where the cache cannot be written, costs). The cache lives in a temporary
XDG_CACHE_HOME, filled by one untimed run, so the user's own cache is neither read nor
touched.

Per command it prints the median wall time and CPU time (user + system, from wait4), then,
from one more run of each through a small probe that runs the same code in the same
interpreter, the modules imported (msrunwatch's and all, `len(sys.modules)` at exit) and the
peak RSS (the process's own VmHWM: wait4's ru_maxrss would count the bench's own image,
which a vfork'ed child shares until it execs). The load average is printed before and after:
wall times only mean something on a quiet machine; CPU time holds better on a busy one.
`--imports N` also prints the N slowest imports of a cold `check` (`python -X importtime`);
`--instructions` counts each command's instructions once under callgrind (valgrind), a
figure a busy machine does not change.

Timing lives here and only here; the tests assert nothing about speed. Linux only (/proc,
os.wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from bench_triage import compile_bytecode, load, measure, resolve_msrunwatch  # noqa: E402

FIXTURE = REPO / "fixtures" / "cpu_dp2_oom_alloc_failed" / "msrun_log"
"""Two ranks and the scheduler, 28 KB: the run is almost all start-up."""
TARGET_MS = 150.0
NO_CACHE = {"MSRUNWATCH_NO_CACHE": "1"}
PROBE = """
import atexit, sys
def _report():
    names = list(sys.modules)
    with open('/proc/self/status') as fh:
        hwm = next((int(l.split()[1]) for l in fh if l.startswith('VmHWM:')), 0)
    with open({out!r}, 'w') as fh:
        own = sum(n.split('.')[0] == 'msrunwatch' for n in names)
        fh.write('%d %d %d' % (len(names), own, hwm))
atexit.register(_report)
if True:
{body}
"""
"""Runs a command's code, then writes its module counts and peak RSS (KiB). For msrunwatch
the body is the console script's own source, so the modules are those the script imports.
The report is an atexit function: msrunwatch ends its process itself (cli.end_now) once the
atexit functions have run."""


@dataclass(frozen=True)
class Command:
    """One thing to start cold: its argv, environment overrides and the probe's body."""

    name: str
    argv: list[str]
    body: str
    env: dict[str, str]


@dataclass(frozen=True)
class Footprint:
    modules: int
    own_modules: int
    peak_rss_mib: float


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines()) or "    pass"


def script_body(msrunwatch: Sequence[str], args: Sequence[str]) -> str:
    """What the console script does, as the probe's body: its source when it is a Python
    script, else `msrunwatch.cli.main` as `python -m msrunwatch` would call it."""
    script = Path(msrunwatch[0])
    try:
        source = script.read_text(encoding="utf-8") if len(msrunwatch) == 1 else ""
    except (OSError, UnicodeDecodeError):
        source = ""
    if not source.startswith("#!") or "python" not in source.splitlines()[0]:
        source = "import sys\nfrom msrunwatch.cli import main\nsys.exit(main())\n"
    setup = f"sys.argv = {[str(script), *args]!r}\n__name__ = '__main__'\n"
    return _indent(setup + source)


def commands(msrunwatch: Sequence[str], target: Path, python: str) -> list[Command]:
    """The references and msrunwatch's three commands, each with the cache warm and off."""
    found = [
        Command("python -c pass", [python, "-c", "pass"], _indent("pass"), {}),
        Command(
            "python -c 'import msrunwatch'",
            [python, "-c", "import msrunwatch"],
            _indent("import msrunwatch"),
            {},
        ),
    ]
    shown = _shown(target)
    for words in (["--version"], ["check", str(target)], ["triage", str(target)]):
        label = " ".join(["msrunwatch", *words[:1], *([shown] if len(words) > 1 else [])])
        body = script_body(msrunwatch, words)
        argv = [*msrunwatch, *words]
        found.append(Command(label, argv, body, {}))
        if words != ["--version"]:  # --version loads no rules
            found.append(Command(f"{label} (cache off)", argv, body, NO_CACHE))
    return found


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def footprint(command: Command, python: str, env: dict[str, str]) -> Footprint:
    """Modules and peak RSS of one run of the command's code through the probe."""
    with tempfile.NamedTemporaryFile("r", suffix=".probe") as out:
        code = PROBE.format(out=out.name, body=command.body)
        subprocess.run(
            [python, "-c", code],
            env={**env, **command.env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        said = out.read().split()
    if len(said) != 3:
        return Footprint(0, 0, 0.0)
    return Footprint(int(said[0]), int(said[1]), int(said[2]) / 1024)


def rounds(cmds: list[Command], repeat: int, env: dict[str, str]) -> dict[str, list[Any]]:
    """Every command once per round, the order rotating round to round. Their stderr is
    not shown (the note that msrun's console beside the logs is not read came once per
    run, in the middle of the table); their exit code is."""
    runs: dict[str, list[Any]] = {c.name: [] for c in cmds}
    saved = dict(os.environ)
    try:
        for r in range(repeat):
            order = cmds[r % len(cmds) :] + cmds[: r % len(cmds)]
            for command in order:
                os.environ.clear()
                os.environ.update({**env, **command.env})
                runs[command.name].append(measure(command.argv, stderr=subprocess.DEVNULL))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return runs


def slowest_imports(
    msrunwatch: Sequence[str], target: Path, python: str, env: dict[str, str], count: int
) -> str:
    """The `count` imports of a cold `check` with the largest cumulative time."""
    code = PROBE.format(out=os.devnull, body=script_body(msrunwatch, ["check", str(target)]))
    done = subprocess.run(
        [python, "-X", "importtime", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, total, name = line[len("import time:") :].split("|", 2)
        rows.append((int(total), int(own), name.rstrip()))
    rows.sort(reverse=True)
    head = [
        f"slowest imports of a cold check (-X importtime, us cumulative / self), "
        f"{len(rows)} in all:"
    ]
    head += [f"  {total:>8} {own:>8}  {name}" for total, own, name in rows[:count]]
    return "\n".join(head)


def instructions(command: Command, env: dict[str, str]) -> float | None:
    """Millions of instructions one run executes, counted by callgrind: the same on a busy
    machine as on a quiet one (about 40x slower to run)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *command.argv],
        env={**env, **command.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    return int(found[1]) / 1e6 if found else None


def table(
    runs: dict[str, list[Any]], prints: dict[str, Footprint], counts: dict[str, float | None]
) -> str:
    lines = [
        "| command | wall ms (median) | CPU ms (median) | peak RSS MiB "
        "| modules (msrunwatch's) | M instructions |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, rs in runs.items():
        fp, count = prints[name], counts.get(name)
        lines.append(
            f"| `{name}` | {statistics.median(r.wall_s for r in rs) * 1000:.0f} "
            f"| {statistics.median(r.cpu_s for r in rs) * 1000:.0f} "
            f"| {fp.peak_rss_mib:.0f} | {fp.modules} ({fp.own_modules}) "
            f"| {'' if count is None else f'{count:,.0f}'} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="rounds of every command")
    parser.add_argument("--dir", type=Path, default=FIXTURE, help="the run to check and triage")
    parser.add_argument(
        "--msrunwatch", help="msrunwatch command (default: beside this Python, then PATH)"
    )
    parser.add_argument(
        "--imports", type=int, default=0, metavar="N", help="also list the N slowest imports"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each command's instructions once with callgrind (valgrind)",
    )
    parser.add_argument(
        "--json", type=Path, default=BENCH / "out" / "cold_results.json", help="raw figures"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    msrunwatch = resolve_msrunwatch(args.msrunwatch)
    python = sys.executable
    print(compile_bytecode())
    with tempfile.TemporaryDirectory(prefix="bench_cold_") as cache:
        env = {k: v for k, v in os.environ.items() if k != "MSRUNWATCH_NO_CACHE"}
        env["XDG_CACHE_HOME"] = cache
        cmds = commands(msrunwatch, args.dir, python)
        for command in cmds:  # fills the cache (and the page cache), untimed
            subprocess.run(
                command.argv, env={**env, **command.env}, capture_output=True, check=False
            )
        print(f"before: {load()}")
        runs = rounds(cmds, args.repeat, env)
        print(f"after: {load()}")
        prints = {c.name: footprint(c, python, env) for c in cmds}
        print(f"cold start, median of {args.repeat} rotating rounds; target {TARGET_MS:.0f} ms:")
        for command in cmds:
            rs, fp = runs[command.name], prints[command.name]
            wall = statistics.median(r.wall_s for r in rs) * 1000
            print(
                f"  {command.name:<58} {wall:6.1f} ms wall, "
                f"{statistics.median(r.cpu_s for r in rs) * 1000:6.1f} ms CPU, "
                f"peak RSS {fp.peak_rss_mib:4.0f} MiB, {fp.modules} modules "
                f"({fp.own_modules} msrunwatch's), exit {rs[-1].returncode}"
            )
        if args.imports:
            print(slowest_imports(msrunwatch, args.dir, python, env, args.imports))
        counts = {c.name: instructions(c, env) for c in cmds} if args.instructions else {}
    print()
    print(table(runs, prints, counts))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    raw = {
        name: {
            "wall_s": [r.wall_s for r in rs],
            "cpu_s": [r.cpu_s for r in rs],
            "returncode": [r.returncode for r in rs],
            "instructions_millions": counts.get(name),
            **vars(prints[name]),
        }
        for name, rs in runs.items()
    }
    args.json.write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
