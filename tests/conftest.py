"""Shared fixtures: the built-in rules, a matcher, a scanner factory (paths: tests/support.py)."""

from __future__ import annotations

import os

import pytest

from msrunwatch.rules.rulecache import OFF

# No test reads or writes the user's rule cache (subprocesses inherit this); the cache's own
# tests (tests/rules/test_rulecache.py) turn it on in a temporary directory. Set before the
# imports below: read.patterns compiles its patterns at import, through a memo of programs.
os.environ[OFF] = "1"

from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from tests.support import ScanText


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/* from the current output (review the diff!)",
    )


@pytest.fixture(scope="session")
def rules() -> list[Rule]:
    return load_rules()


@pytest.fixture(scope="session")
def session_matcher(rules: list[Rule]) -> LineMatcher:
    return LineMatcher(rules)


@pytest.fixture
def matcher(session_matcher: LineMatcher) -> LineMatcher:
    """The built-in rules, compiled once; each test starts with full time budgets, so no
    test's outcome depends on how much matching the tests before it did."""
    session_matcher.fresh_budget()
    return session_matcher


@pytest.fixture
def scan_text(matcher: LineMatcher) -> ScanText:
    """Scan bytes (or text) as one file, optionally fed in small chunks."""

    def scan(
        data: bytes | str,
        role: FileRole = FileRole.WORKER,
        chunk: int | None = None,
        name: str = "worker_0.log",
        rank: int | None = 0,
    ) -> FileFacts:
        raw = data.encode() if isinstance(data, str) else data
        scanner = FileScanner(name, "logs", role, matcher, rank)
        step = chunk or max(len(raw), 1)
        for i in range(0, len(raw), step):
            scanner.feed(raw[i : i + step])
        scanner.close()
        return scanner.facts()

    return scan
