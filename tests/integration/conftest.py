"""Fixtures the fast-path tests share (tests/integration/fastpaths.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.rules.matcher import LineMatcher
from tests.integration.fastpaths import RULES


@pytest.fixture(scope="session")
def case_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where every rule's cases are written, alone and embedded, once a session (the
    slow path's facts of them are computed once too: fastpaths.slow_facts)."""
    return tmp_path_factory.mktemp("rule-cases")


@pytest.fixture(scope="session")
def fast_matcher() -> LineMatcher:
    """One matcher for every case read with the shortcuts, as triage has one for every
    file: what it remembers of one case's lines meets the next case's."""
    return LineMatcher(RULES)
