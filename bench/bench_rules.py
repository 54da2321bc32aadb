"""How the rule engine scales with many user rules: load, prefilter build, and a hostile log.

    .venv/bin/python bench/bench_rules.py               # 10,000 rules
    .venv/bin/python bench/bench_rules.py --rules 1000,10000

For each count N: N rule files with distinct literals are written to a temporary directory
and loaded as `--rules DIR` is (validated: schema, pattern bounds, compile); the line
matcher (with its prefilter) is built from them and the built-in pack; then N log lines are
matched, line i holding rule i's literal and another rule's, so every literal of every rule
occurs (the prefilter's worst case: each literal found is looked up once). Finally the whole
`msrunwatch triage` of a real fixture with `--rules DIR` is timed. Wall-clock seconds.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_rules(directory: Path, count: int, seed: int = 1) -> list[str]:
    """count rule files, each requiring its own random word; returns the words."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < count:
        words.add(
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(6, 14)))
        )
    ordered = sorted(words)
    for i, word in enumerate(ordered):
        (directory / f"user-rule-{i}.yaml").write_text(
            f"id: user-rule-{i}\ntitle: Rule {i}\ncategory: python-exception\n"
            f"severity: warning\nscope: line\nmatch: 'Error {word} (?P<n>\\d+)'\n"
            f"message: '{word} {{n}}'\n",
            encoding="utf-8",
        )
    return ordered


def measure(count: int) -> dict[str, float]:
    from msrunwatch.rules.loader import load_rules
    from msrunwatch.rules.matcher import LineMatcher

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        words = write_rules(directory, count)
        began = time.perf_counter()
        rules = load_rules([directory]) + load_rules(None)
        loaded = time.perf_counter()
        matcher = LineMatcher(rules)
        built = time.perf_counter()
        hits = 0
        for i, word in enumerate(words):
            hits += len(matcher.match(f"ValueError: Error {word} {i} near {words[i * 7 % count]}"))
        matched = time.perf_counter()
        command = [sys.executable, "-m", "msrunwatch", "triage", "--rules", str(directory)]
        fixture = str(ROOT / "fixtures" / "cpu_dp2_oom_alloc_failed")
        subprocess.run([*command, fixture], capture_output=True, check=False)
        triaged = time.perf_counter()
    assert hits >= count, hits  # and the built-in python-exception fallback on each line
    return {
        "load_s": loaded - began,
        "prefilter_build_s": built - loaded,
        "match_every_literal_s": matched - built,
        "triage_s": triaged - matched,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", default="10000", help="comma-separated rule counts")
    args = parser.parse_args()
    print("| rules | load s | prefilter build s | match every literal s | triage s |")
    print("|---:|---:|---:|---:|---:|")
    for count in (int(n) for n in args.rules.split(",")):
        m = measure(count)
        print(
            f"| {count:,} | {m['load_s']:.2f} | {m['prefilter_build_s']:.3f} "
            f"| {m['match_every_literal_s']:.2f} | {m['triage_s']:.2f} |"
        )


if __name__ == "__main__":
    main()
