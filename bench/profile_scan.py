"""Where one process's scan of a log spends its time, per MiB (CPU time, best of N).

    python bench/profile_scan.py FILE [--repeat 5]

Each part is timed by running the real scan with the parts after it switched off, so the
figures add up to the whole scan: the block passes (the candidate scan that skips INFO
lines, the compile-marker scans, newline counting: `scanner`), the extractor without
rules (headers, times, shapes, tracebacks, progress, memory), and the rules (prefilter,
gates and the candidate rules' patterns). The primitive passes over one 8 MiB block are
timed on their own too. Run it on a quiet machine with the Python that has msrunwatch
installed; it measures nothing else and asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from msrunwatch.read import patterns as P
from msrunwatch.read.extract import Extractor
from msrunwatch.read.facts import FileRole
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher

BLOCK = 8 << 20


def best(fn: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of `repeat` runs (the others were disturbed)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def scan(data: bytes, matcher: LineMatcher) -> None:
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
        line, progress = Extractor.line, Extractor.progress_line
        Extractor.line = lambda self, *a: None  # type: ignore[method-assign]
        Extractor.progress_line = lambda self, *a: None  # type: ignore[method-assign]
        try:
            no_extractor = best(lambda: scan(data, matcher), repeat)
        finally:
            Extractor.line, Extractor.progress_line = line, progress  # type: ignore[method-assign]
    finally:
        LineMatcher.match = match  # type: ignore[method-assign]
    return {
        "block passes and the per-line loop (scanner)": no_extractor,
        "extraction (extractor, no rules)": no_rules - no_extractor,
        "rules (prefilter, gates, patterns)": whole - no_rules,
        "whole scan": whole,
    }


def passes(block: bytes, repeat: int) -> dict[str, float]:
    """CPU seconds of each pass over one block, alone."""
    buf = b"\n" + block
    return {
        "candidate scan (skips INFO lines)": best(
            lambda: [m.start() for m in P.CANDIDATE_LINE.finditer(buf)], repeat
        ),
        "compile markers ([PROF], compiling)": best(
            lambda: [m.start() for x in P.INFO_MARKERS for m in x.finditer(buf)], repeat
        ),
        "newline count": best(lambda: buf.count(b"\n"), repeat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    data = args.file.read_bytes()
    mib = len(data) / (1 << 20)
    matcher = LineMatcher(load_rules())
    candidates = sum(1 for _ in P.CANDIDATE_LINE.finditer(b"\n" + data))
    print(f"{args.file}: {mib:.1f} MiB, {candidates / mib:.0f} candidate lines per MiB")
    print("| part | ms/MiB |")
    print("|---|---|")
    for name, seconds in parts(data, matcher, args.repeat).items():
        print(f"| {name} | {seconds * 1000 / mib:.2f} |")
    block = data[:BLOCK]
    for name, seconds in passes(block, args.repeat).items():
        print(f"| of which, alone: {name} | {seconds * 1000 / (len(block) / (1 << 20)):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
