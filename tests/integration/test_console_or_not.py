"""A run read with msrun's console and read from its log directories alone names the same
root-cause rank(s): the console adds exit codes and signals (a better category), never a
different culprit. Before: fixtures/cpu_kill9_rank1/msrun_log alone named rank 0, the rank
msrun killed after rank 1 was `kill -9`ed."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES

OVER = PostMortem(finished=True)
"""Both read as runs that are over (as post mortem on a checkout: no clock decides)."""
SEVERAL_RUNS = {"cpu_port_in_use_second_job"}
"""Two runs in one directory (tests/integration/test_golden.py): its own run is given."""


def _with_console() -> list[str]:
    return sorted(
        p.name
        for p in FIXTURES.iterdir()
        if p.is_dir() and any(c.name.endswith("console.txt") for c in p.iterdir())
    )


def _log_dirs(scenario: Path) -> list[str]:
    """The log directories beside the console: msrun_log, or each node's."""
    if (scenario / "msrun_log").is_dir():
        return [str(scenario / "msrun_log")]
    return sorted(str(d) for d in scenario.glob("node*/msrun_log"))


def _whole(scenario: Path) -> list[str]:
    return [str(scenario / "msrun_log")] if scenario.name in SEVERAL_RUNS else [str(scenario)]


@pytest.mark.parametrize("name", _with_console())
def test_the_console_never_changes_who_failed_first(name: str, rules: list[Rule]) -> None:
    scenario = FIXTURES / name
    consoles = [str(c) for c in sorted(scenario.glob("*console.txt"))][:1]
    given = _whole(scenario)
    with_console = triage(given, rules, consoles if name in SEVERAL_RUNS else (), post=OVER)
    alone = triage(_log_dirs(scenario), rules, post=OVER)
    assert _culprit(alone) == _culprit(with_console)


def _culprit(report) -> tuple[int, ...] | None:  # type: ignore[no-untyped-def]
    return report.root_cause.ranks if report.root_cause else None


def test_every_scenario_with_a_console_is_checked() -> None:
    names = _with_console()
    assert "cpu_kill9_rank1" in names and "cpu_2nodes_node1_killed" in names
    assert all(_log_dirs(FIXTURES / n) for n in names)
