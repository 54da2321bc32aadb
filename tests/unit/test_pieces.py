"""A file read in pieces by several readers gives exactly the facts of one reader.

Triage cuts large logs into byte ranges read in parallel (read/pieces.py); the test is
equality with the whole-file scan, for every real log of the fixtures and for generated
logs cut at many random places (inside tracebacks and memory blocks too).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.core.compat import zip_strict
from msrunwatch.drivers import reading
from msrunwatch.drivers.triage import find_logs, scan_all
from msrunwatch.read import pieces as pieces_module
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.pieces import Source, bounds, join, scan_piece
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, ROOT

WORKER_LOGS = sorted(p for p in FIXTURES.glob("**/worker_*.log") if p.stat().st_size > 0)


def whole(path: Path, matcher: LineMatcher, block: int = 8 << 20) -> FileFacts:
    scanner = FileScanner(path.name, "logs", FileRole.WORKER, matcher, 0)
    with path.open("rb") as fh:
        while chunk := fh.read(block):
            scanner.feed(chunk)
    scanner.close()
    return scanner.facts()


def in_pieces(path: Path, matcher: LineMatcher, edges: list[int]) -> FileFacts:
    source = Source(str(path), path.name, "logs", FileRole.WORKER, 0)
    found = [scan_piece(source, matcher, edges, i) for i in range(len(edges) - 1)]
    random.Random(len(edges)).shuffle(found)  # results come back in any order
    return join(sorted(found, key=lambda p: p.index), edges[-1])


def random_edges(rng: random.Random, size: int, most: int) -> list[int]:
    count = rng.randint(2, most)
    return [0, *sorted(rng.sample(range(1, size), min(count - 1, size - 1))), size]


def assert_same(expected: FileFacts, got: FileFacts, edges: list[int]) -> None:
    """Field by field, as text (a NaN loss is equal to a NaN loss here)."""
    differ = [
        name
        for name in expected.__dataclass_fields__
        if repr(getattr(expected, name)) != repr(getattr(got, name))
    ]
    assert not differ, f"cut at {edges}: {differ}"


@pytest.mark.parametrize("path", WORKER_LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_real_log_read_in_pieces_is_read_as_one(matcher: LineMatcher, path: Path) -> None:
    expected = whole(path, matcher)
    size = path.stat().st_size
    rng = random.Random(path.name)
    for _ in range(4):
        edges = random_edges(rng, size, 6)
        assert_same(expected, in_pieces(path, matcher, edges), edges)
    assert_same(expected, in_pieces(path, matcher, bounds(size, 3)), bounds(size, 3))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two ranks of the bench's real-line workload (an OOM traceback on rank 1)."""
    out = tmp_path_factory.mktemp("gen")
    gen = ROOT / "bench" / "gen_msrun_log.py"
    args = ["--ranks", "2", "--mb", "1.5", "--fault-rank", "1", "--jobs", "1"]
    subprocess.run([sys.executable, str(gen), str(out), *args], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("name", ["worker_0.log", "worker_1.log"])
def test_generated_logs_cut_at_random_places(
    matcher: LineMatcher, generated: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = generated / name
    expected = whole(path, matcher)
    assert expected.progress is not None and expected.progress.cadence_s is not None
    monkeypatch.setattr(pieces_module, "BLOCK", 96 << 10)  # many blocks in each piece
    size = path.stat().st_size
    rng = random.Random(name)
    for _ in range(12):
        edges = random_edges(rng, size, 9)
        assert_same(expected, in_pieces(path, matcher, edges), edges)


def test_a_cut_inside_a_traceback_is_read_on_by_the_piece_before(
    matcher: LineMatcher, generated: Path
) -> None:
    path = generated / "worker_1.log"
    data = path.read_bytes()
    inside = data.index(b"Traceback (most recent call last):") + 60
    edges = [0, inside, inside + 200, len(data)]
    source = Source(str(path), path.name, "logs", FileRole.WORKER, 0)
    found = [scan_piece(source, matcher, edges, i) for i in range(3)]
    assert found[0].stop > edges[2]  # it read on past the next piece's start
    assert_same(whole(path, matcher), join(found, len(data)), edges)


def test_blocks_of_any_size_give_the_same_facts(matcher: LineMatcher, generated: Path) -> None:
    path = generated / "worker_1.log"
    expected = whole(path, matcher)
    for block in (4093, 65536, 1 << 20):
        assert_same(expected, whole(path, matcher, block), [block])


def test_triage_reads_large_files_in_pieces_in_parallel(
    rules: list[Rule], generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = find_logs([str(generated)])
    one_by_one = scan_all(files, rules)
    monkeypatch.setattr(reading, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(reading, "MIN_PIECE", 256 << 10)
    monkeypatch.setattr(reading, "usable_cpus", lambda: 2)
    assert any(edges for _, edges, _ in reading.plan(files, 2))
    in_parallel = scan_all(files, rules)
    for a, b in zip_strict(one_by_one, in_parallel):
        assert_same(a, b, [])
