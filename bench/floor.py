"""The least time CPython takes to read every byte, or to make over every byte the passes
that msrunwatch's scanner makes, and nothing else: the floor under any triage written in
Python with the standard library, run as msrunwatch runs (a fork pool of the usable CPUs,
8 MiB blocks from the heap as core.heap sets it, whole files dealt largest first).

    python bench/floor.py --passes read FILE...      # read the blocks, nothing more
    python bench/floor.py --passes scanner FILE...   # plus the scanner's block passes

`scanner` makes the three passes msrunwatch's FileScanner makes over each block, with its
own compiled patterns: the candidate-line scan (every line that is not an INFO/DEBUG line),
the compile-marker scans (`[PROF]`, `compiling`) and the newline count (P.newlines); it
keeps the offsets found, as the scanner does, and parses no line. A line across two blocks
is not joined (a difference of a few lines in millions). bench_triage.py runs both beside grep
and ripgrep, as `py-read` and `py-passes`: if `py-passes` alone is slower than a target,
no Python scanner that makes these passes can meet it. It prints the bytes read and the
lines found, to stdout, and asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from msrunwatch.core.heap import reuse_blocks_below
from msrunwatch.read import patterns as P

BLOCK = 8 << 20


def read_only(path: str) -> tuple[int, int]:
    """Bytes of the file, read block by block as triage reads it."""
    size = 0
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(BLOCK):
            size += len(chunk)
    return size, 0


def scanner_passes(path: str) -> tuple[int, int]:
    """Bytes of the file and the lines its passes found (candidates, marker lines)."""
    size = found = 0
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(BLOCK):
            size += len(chunk)
            buf = b"\n" + chunk
            starts = [m.start() + 1 for m in P.CANDIDATE_LINE.finditer(buf)]
            marked = {start for _, start in P.marked_lines(buf, len(buf))}
            P.newlines(buf, 0, len(buf))
            found += len(starts) + len(marked)
    return size, found


PASSES = {"read": read_only, "scanner": scanner_passes}


def usable_cpus() -> int:
    """As msrunwatch.drivers.triage.usable_cpus; not imported from there, whose imports
    (the whole reader and judge) would count in the floor."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", choices=sorted(PASSES), required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    work = PASSES[args.passes]
    files = sorted(args.files, key=lambda f: -os.path.getsize(f))
    reuse_blocks_below(2 * BLOCK)  # as triage does: blocks from the heap, not fresh mmaps
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(usable_cpus(), context) as pool:
        results = list(pool.map(work, files))
    print(f"{sum(r[0] for r in results)} bytes, {sum(r[1] for r in results)} lines found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
