"""`watch --cluster SOURCE...`: what each kind of source names, and a node's live state."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.core.errors import UsageError
from msrunwatch.drivers.cluster import expected_hosts
from msrunwatch.live.cluster.feeds import BLIND, REPORTING, STALE, FeedState, Held
from msrunwatch.live.cluster.fetch import FAILED, SAME, Got
from msrunwatch.live.cluster.sources import Feed, Sources, url_feed

HELD = Held((), '"1"', 0.0, 0.0, (), frozenset())
"""A snapshot (empty) held from an earlier poll."""


def test_host_port_and_urls_name_a_watchers_facts() -> None:
    assert url_feed("node-3:9464") == Feed(
        "node-3:9464", url="http://node-3:9464/facts", host="node-3"
    )
    assert url_feed("[::1]:9464") == Feed("[::1]:9464", url="http://[::1]:9464/facts", host="::1")
    bare = url_feed("http://10.0.0.7:9464")
    assert bare is not None and bare.url == "http://10.0.0.7:9464/facts"
    given = url_feed("https://gw/nodes/7/facts?x=1")
    assert given is not None and given.url == "https://gw/nodes/7/facts?x=1" and given.host == "gw"
    assert url_feed("node-3:99999") is None and url_feed("not a node") is None


def test_a_list_file_names_each_watcher_and_each_bad_line(tmp_path: Path) -> None:
    listed = tmp_path / "nodes.txt"
    listed.write_text(
        "# the job's nodes\nnode-0:9464\n\nhttp://node-1:9464/facts  # a URL\nnode 2\n"
    )
    sources = Sources([str(listed)])
    feeds, problems = sources.feeds()
    assert [f.host for f in feeds] == ["node-0", "node-1"] and not problems
    assert sources.warnings == [f"{listed}:5: not host:port or a URL: 'node 2'"]


def test_a_directory_is_listed_again_at_each_poll(tmp_path: Path) -> None:
    sources = Sources([str(tmp_path)])
    assert sources.feeds() == ([], [])
    (tmp_path / "node-0.facts.jsonl").write_text("")
    (tmp_path / ".facts-x.tmp").write_text("")  # a snapshot being written
    feeds, _ = sources.feeds()
    assert [Path(f.label).name for f in feeds] == ["node-0.facts.jsonl"]


def test_a_source_that_is_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a directory of snapshots"):
        Sources(["no such thing"])
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(UsageError, match="names no watcher"):
        Sources([str(empty)])


def test_expected_hosts_drop_ports_and_comments(tmp_path: Path) -> None:
    listed = tmp_path / "hosts"
    listed.write_text("node-0\nnode-1:9464  # port dropped\n\n")
    assert expected_hosts(str(listed)) == ["node-0", "node-1"]
    assert expected_hosts(None) == []


def test_a_refusal_is_blind_at_once_other_failures_at_the_second() -> None:
    state = FeedState(Feed("n:1", url="http://n:1/facts"))
    state.took(Got(SAME, age_s=1.0), 0.0)
    state.held = HELD
    assert state.state(0.0)[0] == REPORTING
    state.took(Got(FAILED, error="no whole answer within 2 s"), 1.0)
    assert state.state(1.0)[0] == REPORTING
    state.took(Got(FAILED, error="no whole answer within 2 s"), 2.0)
    assert state.state(2.0) == (BLIND, "no whole answer within 2 s (its last snapshot is kept)")
    other = FeedState(Feed("m:1", url="http://m:1/facts"))
    other.took(Got(FAILED, error="connection refused", refused=True), 0.0)
    assert other.state(0.0)[0] == BLIND


def test_a_snapshot_not_renewed_goes_stale() -> None:
    state = FeedState(Feed("n:1", url="http://n:1/facts"))
    state.held = HELD
    state.took(Got(SAME, age_s=5.0), 100.0)
    assert state.state(110.0)[0] == REPORTING
    assert state.state(126.0)[0] == STALE  # 5 + 26 s > 30 s: three heartbeats missed
