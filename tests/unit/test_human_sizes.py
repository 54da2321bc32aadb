"""Sizes as a person reads them: one unit name (MiB, GiB), the usable limit as denominator."""

from __future__ import annotations

import pytest

from msrunwatch.judge.model import RankReport, Report, Status
from msrunwatch.read.facts import MemorySummary
from msrunwatch.report import fmt


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (6246, "6.1 KiB"),
        (35021, "34.2 KiB"),
        (68719476736, "64.0 GiB"),
    ],
)
def test_size(nbytes: int, text: str) -> None:
    assert fmt.size(nbytes) == text


@pytest.mark.parametrize(
    ("mib", "text"), [(None, "-"), (137, "137 MiB"), (1023, "1023 MiB"), (61430, "60.0 GiB")]
)
def test_mib(mib: int | None, text: str) -> None:
    assert fmt.mib(mib) == text


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("could not allocate 68719476736 B", "could not allocate 64.0 GiB"),
        (
            "actual peak 11576 MB exceeds the usable 1024 MB",
            "actual peak 11.3 GiB exceeds the usable 1.0 GiB",
        ),
        ("step 100 B, rank 3", "step 100 B, rank 3"),  # too small to be a size
        (  # MindSpore's GB and fractional MB, beside MB: one style, never MB and GiB mixed
            "max_device_memory is 65536 MB but only 59.8872 GB are free (allowed up to 61324.5 MB)",
            "max_device_memory is 64.0 GiB but only 59.9 GiB are free (allowed up to 59.9 GiB)",
        ),
        (
            "median actual peak per stage 43509, 54999 MB",
            "median actual peak per stage 42.5 GiB, 53.7 GiB",
        ),
        (
            "peak at 71549 MiB, 109% of the 65536 MiB usable",
            "peak at 69.9 GiB, 109% of the 64.0 GiB usable",
        ),
        ("hcclBufferSize is 200 MB", "hcclBufferSize is 200 MiB"),
        ("GBS 1 / (MBS 1 x DP 1)", "GBS 1 / (MBS 1 x DP 1)"),  # words, not units
        ("1" * 40 + " B", "1" * 40 + " B"),  # a forged figure is left as written
    ],
)
def test_raw_sizes_in_messages(message: str, shown: str) -> None:
    assert fmt.human_sizes(message) == shown


@pytest.mark.parametrize(
    ("log_dir", "file", "path"),
    [
        ("run/msrun_log", "worker_1.log", "run/msrun_log/worker_1.log"),
        (
            "run/msrun_log/worker_1.log",
            "worker_1.log",
            "run/msrun_log/worker_1.log",
        ),  # one file given
        (None, "worker_1.log", "worker_1.log"),
    ],
)
def test_paths_exist_for_a_single_file(log_dir: str | None, file: str, path: str) -> None:
    assert fmt.join_path(log_dir, file) == path


def _rank(rank: int, actual: int, limit: int | None) -> RankReport:
    memory = MemorySummary(65536, limit, None, actual - 100, actual, 1, None)
    return RankReport(rank, "d", f"worker_{rank}.log", Status.FINISHED, memory=memory)


def test_headroom_is_against_the_usable_limit_of_the_fullest_rank() -> None:
    report = Report(("d",), "ok", None, (_rank(0, 40000, 58196), _rank(1, 55000, 58196)), ())
    assert (
        fmt.headroom(report) == "peak 53.7 GiB of 56.8 GiB usable on rank 1: 3.1 GiB headroom (5%)"
    )
    over = Report(("d",), "failed", None, (_rank(0, 11576, 1024),), ())
    assert fmt.headroom(over) == "peak 11.3 GiB of 1.0 GiB usable on rank 0: 10.3 GiB over it"
    card = Report(("d",), "ok", None, (_rank(0, 32768, None),), ())
    assert fmt.headroom(card).startswith("peak 32.0 GiB of 64.0 GiB usable")
    assert fmt.headroom(Report(("d",), "ok", None, (), ())) == ""
