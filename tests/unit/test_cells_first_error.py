"""The rank table's FIRST ERROR cell in a narrow room (cells.first_error_within): the
directories in the middle give way, the file's name and line number stay whole."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from msrunwatch.judge.model import FirstError
from msrunwatch.tui.cells import first_error_within


def rank(file: str, line: int, category: str = "node-timeout", at_end: bool = False) -> Any:
    """A rank report as the cell reads it: the real FirstError (a stand-in missed a field)."""
    error = FirstError(category, "rule-id", file, line, None, at_end=at_end)
    return SimpleNamespace(first_error=error)


@pytest.mark.parametrize(
    ("width", "shown"),
    [
        (60, "node-timeout node1/msrun_log/worker_2.log:118"),
        (40, "node-timeout node1/…/worker_2.log:118"),
    ],
)
def test_the_middle_directories_go_first(width: int, shown: str) -> None:
    text = first_error_within(rank("node1/msrun_log/worker_2.log", 118), width)
    assert text == shown


def test_deeper_paths_keep_the_directories_nearest_the_file_that_fit() -> None:
    r = rank("node1/a/b/msrun_log/worker_2.log", 118)
    assert first_error_within(r, 47) == "node-timeout node1/…/msrun_log/worker_2.log:118"


def test_a_file_without_directories_is_cut_in_the_middle() -> None:
    text = first_error_within(rank("worker_2.log", 118, "x" * 30), 30)
    assert len(text) <= 30 and "…" in text


def test_no_first_error_is_empty() -> None:
    assert first_error_within(SimpleNamespace(first_error=None), 10) == ""


def test_a_lost_ranks_last_line_gives_way_before_its_file_and_line() -> None:
    """A rank lost with no fault of its own reads `, last line` (trial A1): the middle
    directories give way first, then that, before the file's name or its line number."""
    r = rank("node1/msrun_log/worker_1.log", 83, at_end=True)
    assert first_error_within(r, 60) == "node-timeout, last line node1/msrun_log/worker_1.log:83"
    assert first_error_within(r, 48) == "node-timeout, last line node1/…/worker_1.log:83"
    assert first_error_within(r, 42) == "node-timeout node1/…/worker_1.log:83"
