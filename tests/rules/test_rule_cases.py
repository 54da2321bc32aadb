"""Every case in rules/*.cases.yaml as its own test: `pytest -k <rule-id>` runs one rule's.

The same runner backs `msrunwatch rules check`, so CI and rule authors agree.
"""

from __future__ import annotations

import pytest

from msrunwatch.drivers.rulecases import Case, all_cases, run_case
from msrunwatch.rules.loader import load_rules

RULES = load_rules()
CASES, CASE_ERRORS = all_cases(RULES)


def test_every_cases_file_is_valid() -> None:
    assert [str(e) for e in CASE_ERRORS] == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_case(case: Case) -> None:
    result = run_case(case, RULES)
    assert result.ok, "\n".join(result.problems)
