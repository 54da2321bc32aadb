"""The scheduler's "first one timed out" is set aside when the rank it names saw a peer go
(`witness: peer-gone`) after another rank's log had gone silent. The real case:
fixtures/cpu_kill9_rank1 without msrun's console, where the scheduler named rank 0 (the
rank msrun killed afterwards) although rank 1 was `kill -9`ed and its log stopped 2.6 s
before rank 0 logged its peer's connection closing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Status
from msrunwatch.judge.peergone import before_witness
from msrunwatch.judge.sweep import first_lost
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Effect, Role, Severity, Witness
from tests.judge.builders import rank, rule, run, seen
from tests.support import FIXTURES, ROOT

FIRST = rule("first", role=Role.SYMPTOM, effect=Effect.LOSE_FIRST, category="node-timeout")
PEER_GONE = replace(
    rule("peer-gone", role=Role.SYMPTOM, severity=Severity.WARNING), witness=Witness.PEER_GONE
)
TIMEOUT = rule("timeout", role=Role.SYMPTOM, category="hccl-timeout")


def named_first(rank_number: int, *witnessed: tuple[int, float]) -> list:  # type: ignore[type-arg]
    """Witness lines (rank, time) in the ranks' own logs, then the scheduler's "first"."""
    found = [seen(PEER_GONE, r, t, line=40) for r, t in witnessed]
    return [*found, seen(FIRST, rank_number, 60.0, own=False, line=42)]


def lost_first(found: list, facts) -> tuple[int, ...]:  # type: ignore[no-untyped-def,type-arg]
    lost = first_lost(found, facts)
    assert lost is not None
    return before_witness(lost, found, facts, None).ranks


def test_a_rank_that_went_silent_before_the_named_rank_saw_a_peer_go_is_named() -> None:
    facts = run(rank(0, last_time=54.0), rank(1, last_time=51.4))
    found = named_first(0, (0, 54.0))
    lost = first_lost(found, facts)
    assert lost is not None
    decided = before_witness(lost, found, facts, None)
    assert decided.ranks == (1,)
    assert "the scheduler named rank 0 first, but rank 0 saw a peer go" in decided.why
    assert "2.6 s after rank 1's log went silent" in decided.why


def test_without_a_witness_line_the_scheduler_stands() -> None:
    facts = run(rank(0, last_time=54.0), rank(1, last_time=51.4))
    assert lost_first(named_first(0), facts) == (0,)


def test_a_rank_still_writing_after_the_witness_line_is_no_suspect() -> None:
    facts = run(rank(0, last_time=54.0), rank(1, last_time=54.5))
    assert lost_first(named_first(0, (0, 54.0)), facts) == (0,)


def test_ranks_that_ended_or_spoke_or_saw_the_peer_go_too_are_no_suspects() -> None:
    facts = run(
        rank(0, last_time=54.0),
        rank(1, last_time=50.0, finished_line=9),  # ended normally
        rank(2, last_time=50.0, exit_code=0),  # msrun saw it exit 0
        rank(3, last_time=50.0),  # logged its own timeout: alive to complain
        rank(4, last_time=50.0),  # saw the peer go itself
        rank(5, last_time=51.0),  # the one left
    )
    found = [*named_first(0, (0, 54.0), (4, 50.0)), seen(TIMEOUT, 3, 49.0)]
    assert lost_first(found, facts) == (5,)


def test_several_silent_ranks_are_tied_not_ordered() -> None:
    """Their last dated lines do not order them: progress prints carry no time."""
    facts = run(rank(0, last_time=54.0), rank(1, last_time=51.4), rank(2, last_time=50.0))
    found = named_first(0, (0, 54.0))
    lost = first_lost(found, facts)
    assert lost is not None
    decided = before_witness(lost, found, facts, None)
    assert decided.ranks == (1, 2)
    assert "after the logs of ranks 1-2 (tied) went silent" in decided.why


def test_kill9_without_the_console_names_the_killed_rank(
    rules: list[Rule], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's form (the log dir alone): before, `rank 0 failed first: node-timeout`
    with rank 0 `failed`; rank 1 was the one killed, rank 0 saw it go."""
    monkeypatch.chdir(ROOT)
    main(["triage", "fixtures/cpu_kill9_rank1/msrun_log", "--color", "never"])
    out = capsys.readouterr().out
    assert out.startswith("FAILED  rank 1 failed first: node-timeout")
    assert "Rank(s) 0 stopped after rank(s) 1 failed" in out
    assert "rank(s) 1 stopped after" not in out.lower()
    report = triage([str(FIXTURES / "cpu_kill9_rank1" / "msrun_log")], rules)
    status = {r.rank: (r.status, r.first_error) for r in report.ranks}
    assert status[0] == (Status.KILLED, None)  # rank 0's row is no cause
    assert status[1][0] is Status.FAILED and status[1][1] is not None
    assert status[1][1].file == "worker_1.log"
