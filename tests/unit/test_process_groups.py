"""Files are grouped into processes by (host, pid) in one pass (read.runstate)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.runstate import _merge_by_process, _primary_first, assemble


def _scan_groups(workers: Sequence[FileFacts]) -> list[list[FileFacts]]:
    """The grouping as it was (a scan of every group of the pid): the slow path."""
    groups: list[list[FileFacts]] = []
    by_pid: dict[tuple[str | None, int], list[list[FileFacts]]] = {}
    for facts in sorted(workers, key=_primary_first):
        key = (facts.host, facts.pid) if facts.pid is not None else None
        for group in by_pid.get(key, []) if key is not None else []:
            head = group[0]
            if facts.rank is None or head.rank is None or facts.rank == head.rank:
                group.append(facts)
                break
        else:
            groups.append([facts])
            if key is not None:
                by_pid.setdefault(key, []).append(groups[-1])
    return groups


def _worker(path: str, pid: int | None, rank: int | None, host: str | None = None) -> FileFacts:
    named = rank if path.endswith(".log") else None
    return FileFacts(
        path=path,
        log_dir="d",
        role=FileRole.WORKER,
        pid=pid,
        rank_from_name=named,
        rank_from_log=rank if named is None else None,
        host=host,
    )


def test_same_groups_as_the_scan_on_random_runs() -> None:
    rng = random.Random(3)
    for _ in range(300):
        files = []
        for i in range(rng.randint(1, 30)):
            path = f"worker_{i}.log" if rng.random() < 0.6 else f"rank_{i}/mindspore.log.{i}"
            pid = rng.choice([None, 1, 2, 3])
            rank = rng.choice([None, 0, 1, 2, 3])
            files.append(_worker(path, pid, rank, rng.choice([None, "a", "b"])))
        fast = [[f.path for f in g] for g in _merge_by_process(files)]
        slow = [[f.path for f in g] for g in _scan_groups(files)]
        assert fast == slow


def test_two_hosts_processes_with_one_pid_stay_apart() -> None:
    """Containers: every node's first worker is pid 1; an unranked glog file of node b
    joins node b's worker, never node a's."""
    files = [
        _worker("worker_0.log", 1, 0, "a"),
        _worker("worker_8.log", 1, 8, "b"),
        _worker("rank_x/mindspore.log.1", 1, None, "b"),
    ]
    run = assemble(["d"], files)
    by_rank = {r.rank: [f.path for f in r.files] for r in run.ranks}
    assert by_rank == {0: ["worker_0.log"], 8: ["worker_8.log", "rank_x/mindspore.log.1"]}


def test_repeated_pids_on_thousands_of_ranks_give_one_group_per_rank() -> None:
    """2,048 ranks on 256 hosts, 8 pids repeated on every host (as in containers)."""
    files = [
        _worker(f"worker_{node * 8 + i}.log", 100 + i, node * 8 + i, f"node-{node}")
        for node in range(256)
        for i in range(8)
    ]
    groups = _merge_by_process(files)
    assert len(groups) == 2048
    assert all(len(g) == 1 for g in groups)
