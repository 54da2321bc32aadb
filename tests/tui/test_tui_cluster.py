"""The cluster view in the TUI (`watch --cluster`): the header names the nodes not seen now,
and their ranks read `unknown`, never healthy."""

from __future__ import annotations

import dataclasses

from msrunwatch.judge.model import Status
from msrunwatch.read.nodefacts.merge import NodeView
from tests.tui.tui_scenarios import app, post, snapshot, synthetic

SIZE = (160, 30)


async def test_the_header_names_the_nodes_not_seen_and_their_ranks_are_unknown() -> None:
    report = synthetic(16)
    why = "node node001 blind: connection refused (last seen training)"
    ranks = tuple(
        dataclasses.replace(r, status=Status.UNKNOWN, status_reason=why) if r.rank >= 8 else r
        for r in report.ranks
    )
    nodes = (
        NodeView("node000", "complete", "", tuple(range(8)), live="reporting"),
        NodeView("node001", "complete", "connection refused", tuple(range(8, 16)), live="blind"),
    )
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(dataclasses.replace(report, ranks=ranks, nodes=nodes)))
        await pilot.pause()
        header = str(target.header.render())
        assert "2 nodes: 1 blind (node001), 1 reporting" in header
        assert "8 unknown" in header and "8 training" in header


async def test_one_node_is_one_node() -> None:
    """The trial's A12: two watchers on one host read `1 nodes: 1 reporting`."""
    nodes = (NodeView("vm", "complete", "", tuple(range(8)), live="reporting"),)
    target = app()
    async with target.run_test(size=SIZE) as pilot:
        post(target, snapshot(dataclasses.replace(synthetic(8), nodes=nodes)))
        await pilot.pause()
        assert "1 node: 1 reporting" in str(target.header.render())
