"""The rule cache is a fast path: each rule's first firing case (every case with
MSRUNWATCH_EVERY_CASE=1, tests/support.py) gives the same whole report with the built-in
pack loaded from the cache as with the pack parsed afresh. Every rule with cases is
compared through one of them; every case runs with the fresh pack in tests/rules.

test_rulecache_sabotage.py shows this comparison catches a stale cache."""

from __future__ import annotations

import pytest

from msrunwatch.drivers.rulecases import all_cases
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Rule
from tests.integration.rulecache_cases import differing, hit_only
from tests.support import one_per_rule, untraced

FRESH = load_rules()  # the suite runs with the cache off (tests/conftest.py)
EVERY, _ = all_cases(FRESH)
CASES = one_per_rule(EVERY, lambda c: c.rule, lambda c: c.fires)
BATCHES = 2


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
    """Untraced (tests.support.untraced): tests/rules runs every case traced with the fresh
    pack, and the cached pack was loaded traced (the `cached` fixture); both packs run the
    same code."""
    with untraced():
        assert differing(CASES[batch::BATCHES], FRESH, cached) == []


def test_every_rule_with_a_cases_file_is_compared() -> None:
    assert {c.rule for c in CASES} == {c.rule for c in EVERY}
    firing = {c.rule for c in EVERY if c.fires}
    assert len(CASES) > 200 and all(c.fires for c in CASES if c.rule in firing)
