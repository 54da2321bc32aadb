"""`--events` on a full disk (issue 21, defect 9): the watcher ends with the run's verdict
(exit 1 for this failed run), says once on stderr that events could not be written, and
the events file holds whole lines only. Before, it ended as an internal error (exit 2) and
the file ended in a cut-off line.

The disk is a real one when the test may mount a 16 KiB tmpfs (root), and otherwise a
file size limit (RLIMIT_FSIZE, which cuts writes as a full disk does, with EFBIG)."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.support import strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
ROOM = 4096
"""Bytes left on the disk: the first few events fit, one is cut."""


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a 16 KiB tmpfs with ROOM bytes free."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount)],
        capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace')}")
    try:
        (mount / "fill").write_bytes(b"\0" * (16384 - ROOM))
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def watch(*args: str, fsize: int | None = None) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("MSRUNWATCH_DEBUG", None)
    command = [sys.executable, "-m", "msrunwatch", "watch", str(OOM), "--headless"]
    return subprocess.run(
        [*command, "--exit-when-done", *args],
        capture_output=True, timeout=60, check=False, env=env, preexec_fn=limit,
    )  # fmt: skip


def assert_whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"a cut-off line: {data[-80:]!r}"
    return [strict_json(line) for line in data.decode("utf-8").splitlines()]


def assert_verdict_kept(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 1, done.stderr  # the run's verdict: faults found
    err = done.stderr.decode("utf-8")
    assert "internal error" not in err and "Traceback" not in err
    assert err.count("cannot write events") == 1


def test_events_on_a_full_disk(full_disk: Path) -> None:
    events = full_disk / "events.jsonl"
    done = watch("--events", str(events))
    assert_verdict_kept(done)
    records = assert_whole_lines(events)
    assert records and records[0]["event"] == "start"


def test_events_on_stdout_redirected_to_a_full_disk(full_disk: Path) -> None:
    events = full_disk / "events.jsonl"
    with open(events, "wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "msrunwatch", "watch", str(OOM), "--headless",
             "--exit-when-done"],
            stdout=out, stderr=subprocess.PIPE, timeout=60, check=False,
        )  # fmt: skip
    assert_verdict_kept(done)
    assert_whole_lines(events)


@pytest.mark.parametrize("room", [0, 700, ROOM])
def test_events_past_a_file_size_limit(room: int, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    done = watch("--events", str(events), fsize=room)
    assert_verdict_kept(done)
    assert_whole_lines(events)
