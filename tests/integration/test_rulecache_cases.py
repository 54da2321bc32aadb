"""The rule cache is a fast path: every rule case gives the same whole report with the
built-in pack loaded from the cache as with the pack parsed afresh.

test_rulecache_sabotage.py shows this comparison catches a stale cache."""

from __future__ import annotations

import pytest

from msrunwatch.drivers.rulecases import all_cases
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Rule
from tests.integration.rulecache_cases import differing, hit_only

FRESH = load_rules()  # the suite runs with the cache off (tests/conftest.py)
CASES, _ = all_cases(FRESH)
BATCHES = 8


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> list[Rule]:
    """The built-in pack, loaded the second time from a fresh cache."""
    first = load_rules()  # before: nothing in the cache is ever from this session's loads
    assert [r.id for r in first] == [r.id for r in FRESH]
    return hit_only(tmp_path_factory.mktemp("cache"), None)


def test_every_rule_is_in_the_cached_set(cached: list[Rule]) -> None:
    assert [r.id for r in cached] == [r.id for r in FRESH]
    assert cached is not FRESH and all(a is not b for a, b in zip(cached, FRESH))


@pytest.mark.parametrize("batch", range(BATCHES))
def test_every_rule_case_gives_the_same_report_from_the_cache(
    cached: list[Rule], batch: int
) -> None:
    assert differing(CASES[batch::BATCHES], FRESH, cached) == []


def test_every_rule_with_a_cases_file_is_compared() -> None:
    assert len(CASES) > 500 and {c.rule for c in CASES} >= {"oom-memory-not-enough"}
