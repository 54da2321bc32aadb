"""FileTail: offsets, partial lines, truncation, rotation, deletion, bounded catch-up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from msrunwatch.live.tail import Change, FileTail, Read
from msrunwatch.read.facts import FileRole
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from tests.support import FIXTURES

WORKER = FIXTURES / "cpu_dp2_success_glog2" / "msrun_log" / "worker_0.log"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def read_all(tail: FileTail, max_bytes: int = 1 << 20) -> bytes:
    """Read until a read returns nothing."""
    out = b""
    while True:
        got = tail.read(max_bytes)
        if not got.data:
            return out
        out += got.data


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "worker_0.log"


def test_reads_what_is_new_by_offset(log: Path) -> None:
    log.write_bytes(b"one\ntwo\n")
    tail = FileTail(log)
    got = tail.read(1024)
    assert got == Read(b"one\ntwo\n", Change.NONE, 8, got.mtime)
    assert got.mtime == pytest.approx(log.stat().st_mtime)
    assert tail.read(1024).data == b""
    append(log, b"three\n")
    assert tail.read(1024).data == b"three\n"
    assert tail.offset == 14
    tail.close()


def test_partial_line_is_completed_by_a_later_write(log: Path, matcher: LineMatcher) -> None:
    """The tail hands out bytes as they come; the scanner counts a line once it is whole."""
    lines = WORKER.read_bytes().splitlines(keepends=True)[:3]
    first, second = lines[1][:40], lines[1][40:]
    log.write_bytes(lines[0] + first)
    tail = FileTail(log)
    scanner = FileScanner("worker_0.log", str(log.parent), FileRole.WORKER, matcher, 0)
    got = tail.read(1 << 20)
    assert got.data == lines[0] + first
    scanner.feed(got.data)
    assert scanner.facts().lines == 1
    append(log, second + lines[2][:10])
    got = tail.read(1 << 20)
    assert got.data == second + lines[2][:10]
    scanner.feed(got.data)
    assert scanner.facts().lines == 2
    append(log, lines[2][10:])
    scanner.feed(tail.read(1 << 20).data)
    assert scanner.facts().lines == 3
    assert scanner.facts().pid is not None
    tail.close()


def test_truncation_to_zero_is_a_restart(log: Path) -> None:
    log.write_bytes(b"old run line 1\nold run line 2\n")
    tail = FileTail(log)
    read_all(tail)
    log.write_bytes(b"")  # msrun reopened the log with O_TRUNC
    got = tail.read(1024)
    assert (got.change, got.data) == (Change.TRUNCATED, b"")
    assert tail.offset == 0
    append(log, b"new run\n")
    got = tail.read(1024)
    assert (got.change, got.data, got.size) == (Change.NONE, b"new run\n", 8)
    tail.close()


def test_truncation_to_a_smaller_size_rereads_from_the_start(log: Path) -> None:
    log.write_bytes(b"x" * 99 + b"\n")
    tail = FileTail(log)
    read_all(tail)
    log.write_bytes(b"new run, shorter\n")
    got = tail.read(1024)
    assert got.change is Change.TRUNCATED
    assert got.data == b"new run, shorter\n"
    assert tail.read(1024).change is Change.NONE
    tail.close()


def test_truncation_regrown_past_the_offset_between_reads(log: Path) -> None:
    log.write_bytes(b"old\n")
    tail = FileTail(log)
    read_all(tail)
    log.write_bytes(b"a new run that is already longer\n")
    got = tail.read(1024)
    assert got.change is Change.TRUNCATED
    tail.close()


def test_rename_and_recreate_reads_the_old_file_to_its_end_first(log: Path) -> None:
    log.write_bytes(b"old 1\n")
    tail = FileTail(log)
    read_all(tail)
    append(log, b"old 2, written just before the rotation\n")
    log.rename(log.with_name("worker_0.log.1"))
    log.write_bytes(b"new 1\n")
    got = tail.read(1024)
    assert (got.change, got.data) == (Change.NONE, b"old 2, written just before the rotation\n")
    got = tail.read(1024)
    assert (got.change, got.data) == (Change.REPLACED, b"new 1\n")
    append(log, b"new 2\n")
    assert tail.read(1024).data == b"new 2\n"
    tail.close()


def test_replaced_by_rename_over_the_path(log: Path, tmp_path: Path) -> None:
    log.write_bytes(b"first version\n")
    tail = FileTail(log)
    read_all(tail)
    other = tmp_path / "tmp"
    other.write_bytes(b"second\n")
    os.replace(other, log)
    got = tail.read(1024)
    assert (got.change, got.data) == (Change.REPLACED, b"second\n")
    tail.close()


def test_deleted_file(log: Path) -> None:
    log.write_bytes(b"line\n")
    tail = FileTail(log)
    read_all(tail)
    log.unlink()
    assert tail.read(1024) == Read(b"", Change.DELETED)
    assert tail.read(1024) == Read(b"", Change.DELETED)
    tail.close()


def test_deleted_file_is_drained_first(log: Path) -> None:
    log.write_bytes(b"line 1\n")
    tail = FileTail(log)
    read_all(tail)
    append(log, b"line 2\n")
    log.unlink()
    assert tail.read(1024).data == b"line 2\n"
    assert tail.read(1024).change is Change.DELETED


def test_missing_file_then_created(log: Path) -> None:
    tail = FileTail(log)
    assert tail.read(1024).change is Change.DELETED
    log.write_bytes(b"late worker\n")
    assert tail.read(1024).data == b"late worker\n"
    tail.close()


def test_recreated_after_deletion_is_a_replacement(log: Path) -> None:
    log.write_bytes(b"old run\n")
    tail = FileTail(log)
    read_all(tail)
    log.unlink()
    assert tail.read(1024).change is Change.DELETED
    log.write_bytes(b"new run\n")
    got = tail.read(1024)
    assert got.data == b"new run\n"
    assert got.change is Change.REPLACED
    tail.close()


def test_large_catch_up_is_bounded_by_max_bytes(log: Path) -> None:
    line = WORKER.read_bytes().splitlines(keepends=True)[5]
    data = line * (3 * (1 << 20) // len(line) + 1)  # over 3 MiB
    log.write_bytes(data)
    tail = FileTail(log)
    sizes = []
    out = b""
    while True:
        got = tail.read(1 << 20)
        if not got.data:
            break
        assert got.size == len(data)
        sizes.append(len(got.data))
        out += got.data
    assert out == data
    assert max(sizes) == 1 << 20
    assert len(sizes) == -(-len(data) // (1 << 20))
    tail.close()


def test_zero_budget_reads_nothing(log: Path) -> None:
    log.write_bytes(b"line\n")
    tail = FileTail(log)
    assert tail.read(0).data == b""
    assert tail.read(1024).data == b"line\n"
    tail.close()


def test_never_writes(log: Path) -> None:
    log.write_bytes(b"line\n")
    os.utime(log, (1_000_000_000, 1_000_000_000))
    tail = FileTail(log)
    read_all(tail)
    tail.read(1024)
    tail.close()
    st = log.stat()
    assert st.st_mtime == 1_000_000_000
    assert log.read_bytes() == b"line\n"


def test_close_is_idempotent(log: Path) -> None:
    log.write_bytes(b"line\n")
    tail = FileTail(log)
    tail.read(10)
    tail.close()
    tail.close()


def test_pending_says_whether_a_read_would_find_something(log: Path) -> None:
    log.write_bytes(b"one\n")
    tail = FileTail(log)
    assert tail.pending()  # never read
    read_all(tail)
    assert not tail.pending()
    append(log, b"two\n")
    assert tail.pending()
    read_all(tail)
    log.unlink()
    assert tail.pending()  # a read would say it was deleted
    tail.close()
