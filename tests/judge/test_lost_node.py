"""A node lost whole is named whole: on the real runs where node 1 was SIGKILLed (its
msrun and both workers at once) the root cause is both of its ranks, from the logs and
from each node's facts; and nothing is widened when the node, or any rank of it, said
anything of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.drivers.facts import stream_lines
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.lostnode import lost_node
from msrunwatch.judge.model import RootCause, Status
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES

KILLED = {
    # fixture: (the lost node's ranks, the rank the others named)
    "cpu_2nodes_node1_killed": ((2, 3), 3),
    "cpu_2nodes_no_node_rank_node1_killed": ((1, 2), 2),
}


def _inputs(name: str) -> tuple[list[str], list[str]]:
    base = FIXTURES / name
    return (
        [str(p) for p in sorted(base.glob("node*/msrun_log"))],
        [str(p) for p in sorted(base.glob("node*_console.txt"))],
    )


@pytest.mark.parametrize("name", sorted(KILLED))
def test_the_killed_node_is_the_root_cause_whole(name: str, rules: list[Rule]) -> None:
    """What `msrunwatch triage node0/msrun_log node1/msrun_log --console ...` says."""
    logs, consoles = _inputs(name)
    report = triage(logs, rules, consoles)
    node, named = KILLED[name]
    assert report.outcome == "failed"
    assert report.root_cause is not None and report.root_cause.ranks == node
    assert f"rank {named}" in report.root_cause.reason or "scheduler" in report.root_cause.reason
    assert "node node1 (ranks " in report.root_cause.reason
    assert {r.host for r in report.ranks if r.rank in node} == {"node1"}


@pytest.mark.parametrize("name", sorted(KILLED))
def test_each_rank_of_the_lost_node_says_what_is_known_of_it(name: str, rules: list[Rule]) -> None:
    """Trial #29: a lost rank read `failed` (or `killed`, for the rank the scheduler did not
    name) with an empty first error. Each now reads `failed`, lost, and its first error is
    the root cause's category at the last line its own log holds (where it stopped)."""
    logs, consoles = _inputs(name)
    report = triage(logs, rules, consoles)
    cause = report.root_cause
    assert cause is not None
    for row in (r for r in report.ranks if r.rank in KILLED[name][0]):
        assert row.status is Status.FAILED, row
        assert "lost" in row.status_reason or "scheduler" in row.status_reason, row
        e = row.first_error
        assert e is not None and (e.category, e.rule) == (cause.category, cause.rule), row
        assert row.file is not None and (e.file, e.time) == (Path(row.file).name, row.last_time)
        assert e.line == Path(row.log_dir or "", row.file).read_bytes().count(b"\n")


def test_a_rank_named_by_its_peers_is_not_called_lost(rules: list[Rule]) -> None:
    """The sender of a bad chunk (named by its peer, then stopped by msrun) keeps what its
    peer said of it: it was not lost, and its first error stays empty."""
    base = FIXTURES / "cpu_allreduce_shape_mismatch_rank1"
    report = triage([str(base / "msrun_log")], rules, [str(base / "msrun_console.txt")])
    row = report.ranks[1]
    assert report.root_cause is not None and report.root_cause.ranks == (1,)
    assert row.first_error is None and "expected 16 B" in row.status_reason, row


@pytest.mark.parametrize("name", sorted(KILLED))
def test_each_nodes_facts_name_the_same_lost_node(
    name: str, rules: list[Rule], tmp_path: Path
) -> None:
    """`msrunwatch facts` on each node, `triage` over the facts: the same two ranks."""
    logs, consoles = _inputs(name)
    for log, console in zip(logs, consoles):
        host = Path(log).parent.name
        lines, _, _ = stream_lines([log], rules, host, None, (console,))
        (tmp_path / f"{host}.facts.jsonl").write_text("".join(x + "\n" for x in lines))
    merged = triage([str(tmp_path)], rules)
    plain = triage(logs, rules, consoles)
    assert merged.root_cause is not None and plain.root_cause is not None
    assert merged.root_cause.ranks == plain.root_cause.ranks == KILLED[name][0]
    assert [n.state for n in merged.nodes] == ["complete", "complete"]


def test_the_victims_are_told_after_the_cause_the_scheduler_named(rules: list[Rule]) -> None:
    """The cause comes from the scheduler's word, found after the run rules first ran: the
    ranks msrun stopped are those outside the lost node, and they are said to have stopped
    after it (the message read "after rank(s)  failed", with the lost node's ranks among the
    victims)."""
    name = "cpu_2nodes_node1_killed"
    logs, consoles = _inputs(name)
    report = triage(logs, rules, consoles)
    node = KILLED[name][0]
    [victims] = [f for f in report.findings if f.rule == "killed-by-msrun"]
    assert victims.ranks and not set(victims.ranks) & set(node)
    assert f"after rank(s) {node[0]}-{node[1]} failed" in victims.message


CAUSE = RootCause((3,), "node-timeout", "r", None, None, None, None, "m", "named")
HOSTS = {0: "a", 1: "a", 2: "b", 3: "b"}
STOPPED = {0: Status.KILLED, 1: Status.KILLED, 2: Status.KILLED, 3: Status.FAILED}
NO_EXIT: dict[int, int | None] = {0: -15, 1: None, 2: None, 3: None}


def test_a_node_whose_ranks_all_stopped_silent_is_named_whole() -> None:
    widened = lost_node(CAUSE, HOSTS, STOPPED, {0}, NO_EXIT)
    assert widened is not None and widened.ranks == (2, 3)
    assert widened.reason.startswith("named; every rank of its node b (ranks 2-3)")


@pytest.mark.parametrize(
    "why, hosts, plain, spoke, exits, blind",
    [
        ("another rank of the node logged a fault", HOSTS, STOPPED, {2}, NO_EXIT, ()),
        ("its msrun reported an exit code", HOSTS, STOPPED, set(), {**NO_EXIT, 2: -9}, ()),
        ("a rank of it finished", HOSTS, {**STOPPED, 2: Status.FINISHED}, set(), NO_EXIT, ()),
        ("a rank of it still trains", HOSTS, {**STOPPED, 2: Status.TRAINING}, set(), NO_EXIT, ()),
        ("one host only", dict.fromkeys(HOSTS, "a"), STOPPED, set(), NO_EXIT, ()),
        ("the host is not known", {**HOSTS, 2: None, 3: None}, STOPPED, set(), NO_EXIT, ()),
        ("a rank of it sent no facts", HOSTS, STOPPED, set(), NO_EXIT, (2,)),
        ("the node is that one rank", {**HOSTS, 2: "c"}, STOPPED, set(), NO_EXIT, ()),
    ],
)
def test_nothing_is_widened_when_the_node_said_anything(
    why: str,
    hosts: dict[int, str | None],
    plain: dict[int, Status],
    spoke: set[int],
    exits: dict[int, int | None],
    blind: tuple[int, ...],
) -> None:
    assert lost_node(CAUSE, hosts, plain, spoke, exits, blind) == CAUSE, why


def test_a_cause_on_two_hosts_or_none_is_left_as_it_is() -> None:
    both = RootCause((1, 3), "x", "r", None, None, None, None, "m", "named")
    assert lost_node(both, HOSTS, STOPPED, set(), NO_EXIT) == both
    assert lost_node(None, HOSTS, STOPPED, set(), NO_EXIT) is None
