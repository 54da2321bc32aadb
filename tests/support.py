"""What several test modules share: the repository's paths and small helpers (fixtures
themselves live in conftest.py, which nothing imports)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import coverage

from msrunwatch.read.facts import FileFacts

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

ScanText = Callable[..., FileFacts]
"""The `scan_text` fixture: bytes or text scanned as one file (optionally in chunks)."""


EVERY_CASE = "MSRUNWATCH_EVERY_CASE"
"""Set to 1, the tests that compare two ways of reading every rule's cases (fast path
against slow path, cached rule pack against a fresh one) take every case instead of one
per rule: the exhaustive form, for a change to the reader or the rule cache (it costs
about ten minutes of CPU more than the README's test command)."""

T = TypeVar("T")


def one_per_rule(
    cases: Sequence[T], rule: Callable[[T], str], fires: Callable[[T], bool]
) -> list[T]:
    """Each rule's first case that fires (its first case when none does), in order; every
    case when MSRUNWATCH_EVERY_CASE=1. A rule that fires through a shortcut shows the
    shortcut kept it; the other cases of a rule are the same lines around other values, and
    every case is still run once, on its own, by tests/rules."""
    if os.environ.get(EVERY_CASE) == "1":
        return list(cases)
    chosen: dict[str, T] = {}
    for case in cases:
        first = chosen.setdefault(rule(case), case)
        if not fires(first) and fires(case):
            chosen[rule(case)] = case
    picked = {id(c) for c in chosen.values()}
    return [c for c in cases if id(c) in picked]


@contextmanager
def untraced() -> Iterator[None]:
    """Coverage (the README's `pytest --cov`) paused inside: for a test's second reading of
    what other tests already run traced, every line of it (tracing costs 3 to 4 times the
    CPU of the reading itself). What the test asserts is unchanged; only whether these lines
    count as covered, which the traced readings decide."""
    running = coverage.Coverage.current()
    if running is None:
        yield
        return
    running.stop()
    try:
        yield
    finally:
        running.start()
