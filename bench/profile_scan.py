"""Where one process's scan of a log spends its time, per MiB (CPU time, best of N).

    python bench/profile_scan.py FILE [--repeat 5] [--no-kinds]

Three tables, each printed as Markdown:

- *Parts.* Each part is timed by running the real scan with the parts after it switched
  off, so the figures add up to the whole scan: the block passes (`scanner`), the extractor
  without rules (headers, times, shapes, tracebacks, progress, memory), and the rules
  (prefilter, gates and the candidate rules' patterns).
- *Lines by kind.* What a line of each kind costs the scan, whatever the code does with it:
  the scan of the file as it is, against the scan of the same file with every line of that
  kind replaced by a copy of the INFO line before it (same times, about the same bytes; an
  INFO line without a compile marker is what the block passes skip). The difference over
  the number of lines replaced is the cost of one line of the kind; `lines read one at a
  time` replaces every kind but the quiet lines at once (their average is issue 22's
  per-line CPU), `all of these kinds` every kind. The kinds are told apart here, on the
  bytes, by this script's own patterns (and whether a line is quiet by msrunwatch's
  read.quiet, as every tree since issue 13 has it), so the figures stay comparable before
  and after a change of the reader.
- *Passes alone.* The primitive passes over one 8 MiB block, timed on their own.

Run it with the Python that has msrunwatch installed. On a busy machine the figures are
high and noisy: compare runs made side by side (`PYTHONPATH=old/tree python
bench/profile_scan.py FILE` alternating with the new tree). It measures nothing else and
asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from msrunwatch.read import patterns as P
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileRole
from msrunwatch.read.quiet import QuietLines, quiet_lines
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher

BLOCK = 8 << 20

GLOG = re.compile(rb"\[(DEBUG|INFO|WARNING|ERROR|CRITICAL|V\d+)\] [A-Za-z_]+\(")
MARKER = re.compile(rb"\[PROF\](?!PreLaunchCommKernel )|compiling")
LOSS = re.compile(rb"epoch: \d")
KINDS = (
    "compile-marker INFO",
    "WARNING/ERROR/CRITICAL",
    "LossMonitor",
    "no GLOG header, read",
    "no GLOG header, quiet",
)
"""The kinds of line a scan reads; every other line is an INFO line the block passes skip
(or the per-step `[PROF]PreLaunchCommKernel` timing, skipped too). A quiet line (no GLOG
header, nothing any rule or fact looks for: msrunwatch.read.quiet) was never read one at a
time; the others are "the lines read one at a time" of issue 22 (about 186 per MiB here)."""
ONE_AT_A_TIME = set(KINDS[:4])
READERS = ("line", "progress_line", "stage_line", "stage_lines")
"""The extractor's entries for a line the scanner hands it (those an older tree has)."""
FILLER = b"[INFO] ME(1,1,python):2026-01-01-00:00:00.000.000 [filler.cc:1] Filler] filler"


def kind(line: bytes, quiet: QuietLines) -> str | None:
    """The kind of a line (without its newline), None for a skipped INFO line."""
    header = GLOG.match(line)
    if header is not None:
        if header[1] in (b"INFO", b"DEBUG"):
            return KINDS[0] if MARKER.search(line) else None
        return KINDS[1]
    if line.startswith(b"[PROF]PreLaunchCommKernel "):
        return None
    if LOSS.match(line):
        return KINDS[2]
    return KINDS[4] if quiet.quiet(line) else KINDS[3]


def replaced(data: bytes, kinds: set[str], quiet: QuietLines) -> tuple[bytes, int]:
    """The data with every line of these kinds replaced by the INFO line before it (cut or
    padded to the line's length when it is long enough), and how many were replaced."""
    out: list[bytes] = []
    last_info, count = FILLER, 0
    for line in data.split(b"\n"):
        found = kind(line, quiet)
        if found is None:
            if GLOG.match(line):
                last_info = line
        elif found in kinds:
            count += 1
            header = last_info.find(b"] ", last_info.find(b"):")) + 2  # its source's end
            if len(line) >= header:
                line = last_info[: len(line)].ljust(len(line), b" ")
            else:
                line = last_info
        out.append(line)
    return b"\n".join(out), count


def best(fn: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of `repeat` runs (the others were disturbed)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def scan(data: bytes, matcher: LineMatcher) -> None:
    """One process's scan of `data`, as in a run that meets its lines for the first time:
    the matcher's record of the lines it matched (and its budgets) starts again, so a line
    scanned before is searched again; its compiled patterns and shape memos are kept, as
    a run has them warm after its first blocks."""
    matcher.fresh_budget()
    scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
    for i in range(0, len(data), BLOCK):
        scanner.feed(data[i : i + BLOCK])
    scanner.close()


def parts(data: bytes, matcher: LineMatcher, repeat: int) -> dict[str, float]:
    """CPU seconds of the whole scan, then with the rules, then the extractor, off."""
    whole = best(lambda: scan(data, matcher), repeat)
    match = LineMatcher.match
    LineMatcher.match = lambda self, *a, **k: []  # type: ignore[method-assign]
    try:
        no_rules = best(lambda: scan(data, matcher), repeat)
        entries = {name: getattr(Extractor, name) for name in READERS if hasattr(Extractor, name)}
        for name in entries:
            setattr(Extractor, name, lambda self, *a, **k: None)
        try:
            no_extractor = best(lambda: scan(data, matcher), repeat)
        finally:
            for name, method in entries.items():
                setattr(Extractor, name, method)
    finally:
        LineMatcher.match = match  # type: ignore[method-assign]
    return {
        "block passes and the per-line loop (scanner)": no_extractor,
        "extraction (extractor, no rules)": no_rules - no_extractor,
        "rules (prefilter, gates, patterns)": whole - no_rules,
        "whole scan": whole,
    }


def by_kind(data: bytes, matcher: LineMatcher, repeat: int) -> list[tuple[str, int, float]]:
    """(kind, lines, CPU seconds those lines cost) for each kind and for all of them.
    The scans of the file and of each variant are interleaved, best of `repeat` each."""
    quiet = quiet_lines(matcher)
    variants = {name: replaced(data, {name}, quiet) for name in KINDS}
    variants["lines read one at a time"] = replaced(data, ONE_AT_A_TIME, quiet)
    variants["all of these kinds"] = replaced(data, set(KINDS), quiet)
    scans: dict[str, list[float]] = {name: [] for name in ("as is", *variants)}
    for _ in range(repeat):
        for name in scans:
            text = data if name == "as is" else variants[name][0]
            scans[name].append(best(lambda: scan(text, matcher), 1))  # noqa: B023
    whole = min(scans["as is"])
    return [(name, count, whole - min(scans[name])) for name, (_, count) in variants.items()]


def passes(block: bytes, repeat: int) -> dict[str, float]:
    """CPU seconds of each pass over one block, alone."""
    buf = b"\n" + block
    return {
        "candidate scan (skips INFO lines)": best(
            lambda: [m.start() for m in P.CANDIDATE_LINE.finditer(buf)], repeat
        ),
        "compile markers ([PROF], compiling)": best(
            lambda: list(P.marked_lines(buf, len(buf))), repeat
        ),
        "newline count": best(lambda: P.newlines(buf, 0, len(buf)), repeat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-kinds", action="store_true", help="leave out lines by kind")
    args = parser.parse_args(argv)
    data = args.file.read_bytes()
    mib = len(data) / (1 << 20)
    matcher = LineMatcher(load_rules())
    candidates = sum(1 for _ in P.CANDIDATE_LINE.finditer(b"\n" + data))
    print(f"{args.file}: {mib:.1f} MiB, {candidates / mib:.0f} candidate lines per MiB")
    print("\n| part | ms/MiB |\n|---|---|")
    for name, seconds in parts(data, matcher, args.repeat).items():
        print(f"| {name} | {seconds * 1000 / mib:.2f} |")
    if not args.no_kinds:
        print("\n| lines | per MiB | us per line | ms/MiB |\n|---|---|---|---|")
        for name, count, seconds in by_kind(data, matcher, args.repeat):
            per_line = seconds * 1e6 / count if count else 0.0
            print(f"| {name} | {count / mib:.0f} | {per_line:.1f} | {seconds * 1000 / mib:.2f} |")
    print("\n| pass over one 8 MiB block, alone | ms/MiB |\n|---|---|")
    block = data[:BLOCK]
    for name, seconds in passes(block, args.repeat).items():
        print(f"| {name} | {seconds * 1000 / (len(block) / (1 << 20)):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
