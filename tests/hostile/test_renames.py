"""A large log renamed away, or replaced by a FIFO or a `/dev/zero` link, after it was
listed and while the parallel reader reads it in pieces (issue 21, defect 4): the file as
listed is read whole, with a warning that it moved. Before, the piece that opened the path
late failed and the run was an internal error (exit 2)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.drivers.triage import usable_cpus
from tests.hostile.support import cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
FILLER = b"[INFO] ME(100,7f,python):2026-11-21-05:34:22.600.374 [a.cc:1] F] step 0123456789\n"
BIG = 40 << 20
"""Over the 32 MiB the parallel reader starts at, and two 16 MiB pieces."""

pytestmark = pytest.mark.skipif(usable_cpus() < 2, reason="one CPU: nothing read in parallel")


@pytest.fixture
def big_run(tmp_path: Path) -> Path:
    """A real failed run whose rank 1 log (the OOM, first) has 40 MiB of INFO lines before
    its fault."""
    directory = tmp_path / "msrun_log"
    directory.mkdir()
    for path in OOM.iterdir():
        data = path.read_bytes()
        if path.name == "worker_1.log":
            head, fault = data.split(b"\n", 10)[:10], data.split(b"\n", 10)[10]
            data = b"\n".join(head) + b"\n" + FILLER * (BIG // len(FILLER)) + fault
        (directory / path.name).write_bytes(data)
    return directory


def swap(path: Path, how: str) -> None:
    """What happens to the path once the workers are asked to read it."""
    os.rename(path, path.with_name("away.txt"))
    if how == "fifo":
        os.mkfifo(path)
    elif how == "zero":
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("how", ["renamed", "fifo", "zero"])
def test_a_log_moved_while_read_in_pieces_is_read_as_listed_with_a_warning(
    how: str, big_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_submit: Callable[..., Any] = ProcessPoolExecutor.submit
    swapped: list[bool] = []

    def submit(self: ProcessPoolExecutor, *args: Any, **kwargs: Any) -> Any:
        if not swapped:  # after listing, before any worker opens a thing
            swapped.append(True)
            swap(big_run / "worker_1.log", how)
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    code, out, err = cli(capsys, "triage", str(big_run), "--format", "json")
    assert swapped, "the log was not read in parallel"
    assert code == 1, err
    report = strict_json(out)
    assert report["root_cause"]["ranks"] == [1]  # its OOM was read
    assert report["root_cause"]["category"] == "oom"
    assert report["warnings"] == [
        f"{big_run}/worker_1.log: renamed, replaced or deleted while it was read "
        "(the file as listed was read to its end)"
    ]


def test_a_small_log_moved_after_listing_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small file's way, for comparison: gone before it is opened, it was not read."""
    from msrunwatch.drivers import triage

    directory = tmp_path / "msrun_log"
    directory.mkdir()
    for path in OOM.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    real_find = triage.find_logs

    def find_then_swap(*args: Any, **kwargs: Any) -> Any:
        found = real_find(*args, **kwargs)
        swap(directory / "worker_0.log", "fifo")
        return found

    monkeypatch.setattr(triage, "find_logs", find_then_swap)
    code, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    assert code == 1
    warnings = json.loads(out)["warnings"]
    assert any("worker_0.log" in w and "FIFO" in w for w in warnings)
