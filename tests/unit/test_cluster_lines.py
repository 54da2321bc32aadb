"""What a log says about its cluster (read.cluster): the registration handshake that brackets
a node's clock, the scheduler's table, the communicator groups."""

from __future__ import annotations

import pytest

from msrunwatch.drivers.triage import find_logs, scan_all
from msrunwatch.read.cluster import Group, runs
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.rules.loader import load_rules
from tests.support import FIXTURES


@pytest.fixture(scope="module")
def two_nodes() -> list[FileFacts]:
    return scan_all(find_logs([str(FIXTURES / "cpu_2nodes_noderank_ok")]), load_rules())


def test_every_real_worker_registered_inside_its_handshake(two_nodes: list[FileFacts]) -> None:
    """Both msrun "nodes" ran on one host (true offset 0): each worker's connect .. done
    bracket holds the instant the scheduler registered it."""
    registered = {r.node: r.time for f in two_nodes for r in f.registrations}
    workers = [f for f in two_nodes if f.role is FileRole.WORKER and f.rank is not None]
    assert len(workers) == 4
    for f in workers:
        assert f.handshake is not None and f.node_id in registered
        when = registered[f.node_id]
        assert when is not None and f.handshake.connect is not None
        assert f.handshake.done is not None
        assert f.handshake.connect <= when <= f.handshake.done, f.path
        assert f.handshake.done - f.handshake.connect < 0.05


def test_the_scheduler_table_has_devices_addresses_and_times(two_nodes: list[FileFacts]) -> None:
    table = sorted((r.rank, r.device, r.host, r.ip) for f in two_nodes for r in f.registrations)
    assert table == [
        (0, 0, "vm", "127.0.0.1"),
        (1, 1, "vm", "127.0.0.1"),
        (2, 0, "vm", "127.0.0.1"),
        (3, 1, "vm", "127.0.0.1"),
    ]


def test_ranks_the_scheduler_reassigned_replace_the_provisional_ones() -> None:
    """Without --node_rank the registration line shows an arrival-order rank; `Assign rank
    id of node id` gives the real one, which the workers' `This node <id> rank id` confirm."""
    facts = scan_all(find_logs([str(FIXTURES / "synth_multinode_no_node_rank")]), load_rules())
    table = {r.node: r.rank for f in facts for r in f.registrations}
    from_workers = {f.node_id: f.rank for f in facts if f.node_id is not None}
    assert table == from_workers
    assert table["e4b1c9d2-7a35-4f08-b6e1-93c0d5a2f718"] == 1


def test_the_world_group_of_every_worker(two_nodes: list[FileFacts]) -> None:
    groups = {g for f in two_nodes for g in f.groups}
    assert groups == {Group("mccl_world_group", ((0, 3),))}


def test_group_local_ranks_map_to_global_ones_in_list_order() -> None:
    group = Group("tp", runs([8, 9, 10, 11, 0, 1, 24]))
    assert group.members == ((8, 11), (0, 1), (24, 24))
    assert group.size == 7
    assert [group.global_rank(i) for i in range(8)] == [8, 9, 10, 11, 0, 1, 24, None]
    assert group.global_rank(-1) is None
