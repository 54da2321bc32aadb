"""The live engine under hostile conditions: few descriptors, files that cannot be opened,
FIFOs, rewrites within one tick, two logs for one rank. Nothing is lost silently."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.judge.model import Report
from msrunwatch.live import tail as tail_module
from msrunwatch.live.run import LiveRun
from msrunwatch.live.tail import Change, FileTail
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
QUIET = (
    "[WARNING] ME({pid},7f,python):2026-11-21-05:34:21.000.000 [a.cc:1] F] "
    "This node {rank} rank id: {rank}\n"
)


def many_ranks(root: Path, count: int, faulty: int) -> Path:
    """count quiet worker logs; rank `faulty` holds a real OOM."""
    directory = root / "msrun_log"
    directory.mkdir()
    oom = (OOM / "worker_0.log").read_text(encoding="utf-8")
    for rank in range(count):
        text = QUIET.format(pid=1000 + rank, rank=rank)
        if rank == faulty:
            text = oom.replace("rank id: 0", f"rank id: {rank}")
        (directory / f"worker_{rank}.log").write_text(text, encoding="utf-8")
    return directory


def test_more_logs_than_descriptors_loses_no_rank(tmp_path: Path) -> None:
    """2,000 logs under `ulimit -n 1024` left 984 ranks unknown; here 300 under 64."""
    directory = many_ranks(tmp_path, 300, faulty=250)

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    command = [sys.executable, "-m", "msrunwatch", "watch", str(directory), "--headless"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=few_descriptors,
    ) as watcher:  # fmt: skip
        assert watcher.stdout is not None
        events = []
        for line in watcher.stdout:
            events.append(json.loads(line))
            if events[-1]["event"] == "caught_up":
                watcher.send_signal(signal.SIGTERM)
        watcher.wait()
    (last,) = [e for e in events if e["event"] == "done"]
    assert last["statuses"].get("unknown", 0) == 0
    assert sum(last["statuses"].values()) == 300
    assert any(e["event"] == "finding" and e["ranks"] == [250] for e in events)


def oom_copy(tmp_path: Path) -> Path:
    directory = tmp_path / "msrun_log"
    shutil.copytree(OOM, directory)
    return directory


def first_report(directory: Path, rules: list[Rule]) -> Report:
    """The live engine's report after its first tick."""
    live = LiveRun([str(directory)], rules)
    try:
        return live.tick().report
    finally:
        live.close()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_followed_files_hold_no_more_descriptors_than_the_cap(
    tmp_path: Path, rules: list[Rule], monkeypatch: pytest.MonkeyPatch
) -> None:
    from msrunwatch.live import run

    monkeypatch.setattr(run, "MAX_DESCRIPTORS", 16, raising=False)
    directory = many_ranks(tmp_path, 200, faulty=3)
    before = open_descriptors()
    live = LiveRun([str(directory)], rules)
    try:
        for _ in range(3):
            live.tick()
        assert open_descriptors() - before <= 16 + 2  # the observer's, the regex module's
        assert len(live.tick().report.ranks) == 200
    finally:
        live.close()


def test_a_file_that_cannot_be_opened_is_a_warning_not_deleted(
    tmp_path: Path, rules: list[Rule], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = oom_copy(tmp_path)
    live = LiveRun([str(directory)], rules)
    try:
        assert len(live.tick().report.ranks) == 2
        (directory / "worker_1.log").write_bytes(b"")  # a restart: read from the start again
        real = tail_module.open_regular

        def exhausted(path: object) -> int:
            if Path(str(path)).name == "worker_1.log":
                raise OSError(errno.EMFILE, "Too many open files", str(path))
            return real(path)  # type: ignore[arg-type]

        monkeypatch.setattr(tail_module, "open_regular", exhausted)
        live._descriptors.cap = 0  # every descriptor released: the next read must reopen
        for tracked in live._files.values():
            tracked.tail.release()
        rewritten = (OOM / "worker_1.log").read_bytes().replace(b"(3181", b"(4444")
        with (directory / "worker_1.log").open("ab") as fh:
            fh.write(rewritten)  # the new run's log, as long as the old one
        update = live.tick()
        assert not update.restarted  # not taken for a deleted (or a new) file
        assert any(
            "worker_1.log" in w and "too many open files" in w for w in update.report.warnings
        )
        monkeypatch.setattr(tail_module, "open_regular", real)
        update = live.tick()
        assert update.restarted == ("worker_1.log",)
        assert not update.report.warnings
    finally:
        live.close()


def test_a_fifo_in_a_watched_directory_is_a_warning_not_a_hang(
    tmp_path: Path, rules: list[Rule]
) -> None:
    directory = oom_copy(tmp_path)
    os.mkfifo(directory / "worker_7.log")
    report = first_report(directory, rules)
    assert report.root_cause is not None and report.root_cause.ranks == (1,)
    assert any("worker_7.log" in w and "FIFO" in w for w in report.warnings)


def test_a_log_replaced_by_a_fifo_is_never_opened(tmp_path: Path) -> None:
    path = tmp_path / "worker_0.log"
    path.write_bytes(b"one\n")
    tail = FileTail(path)
    assert tail.read(1024).data == b"one\n"
    tail.release()
    path.unlink()
    os.mkfifo(path)
    got = tail.read(1024)
    assert got.data == b"" and got.error is not None and "FIFO" in got.error


def test_a_rewrite_that_grows_past_the_offset_within_one_tick_is_a_truncation(
    tmp_path: Path,
) -> None:
    """Same first 100 bytes (a banner), then other text, longer than before."""
    banner = b"=" * 100 + b"\n"
    path = tmp_path / "worker_0.log"
    path.write_bytes(banner + b"first run\n")
    tail = FileTail(path)
    assert tail.read(1 << 20).data == banner + b"first run\n"
    path.write_bytes(banner + b"second run, a longer first line\n")
    got = tail.read(1 << 20)
    assert got.change is Change.TRUNCATED
    assert got.data == banner + b"second run, a longer first line\n"
    tail.close()


def test_two_logs_for_one_rank_are_both_kept_with_a_warning(
    tmp_path: Path, rules: list[Rule]
) -> None:
    directory = oom_copy(tmp_path)
    other = (OOM / "worker_1.log").read_text(encoding="utf-8").replace("(3181", "(4444")
    other = other.replace("alloc size: 68719476736B", "alloc size: 1234B")
    (directory / "worker_01.log").write_text(other, encoding="utf-8")
    report = first_report(directory, rules)
    files = {o.file for f in report.findings for o in f.occurrences}
    assert {"worker_1.log", "worker_01.log"} <= files
    assert [r.rank for r in report.ranks] == [0, 1]
    assert any("rank 1 has logs from two processes" in w for w in report.warnings)
