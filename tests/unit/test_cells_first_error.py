"""The rank table's FIRST ERROR cell in a narrow room (cells.first_error_within): the
directories in the middle give way, the file's name and line number stay whole."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from msrunwatch.tui.cells import first_error_within


def rank(file: str, line: int, category: str = "node-timeout") -> Any:
    return SimpleNamespace(first_error=SimpleNamespace(category=category, file=file, line=line))


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
