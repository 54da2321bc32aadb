"""Node clocks measured from the registration handshake (read.nodefacts.clock), and the
ties the judge declares when clocks cannot tell two faults' order."""

from __future__ import annotations

import dataclasses

import pytest

from msrunwatch.read.cluster import Handshake
from msrunwatch.read.facts import (
    CompileStats,
    FileFacts,
    FileRole,
    Hit,
    MemorySummary,
    Progress,
    Registration,
    WorkerExit,
)
from msrunwatch.read.nodefacts.clock import measure, shifted

NOT_TIMES = {"total_ms", "loss", "step_time_ms", "cadence_s"}
"""Float fields that are not log times (a shift must leave them)."""
T = 1_800_000_000.0


def every_time_set() -> FileFacts:
    hit = Hit("r", 1, 0, T, True, "m", "f", (), "t")
    return FileFacts(
        path="worker_0.log",
        log_dir="d",
        role=FileRole.WORKER,
        first_time=T,
        last_time=T,
        memory=MemorySummary(1, 1, None, 1, 1, 1, T),
        compile=CompileStats(1, 2.5, 1, (("s", 2.5),), T, T, 3),
        progress=Progress(1, 1, 0.5, 3.5, 1, T, 1, 4.5),
        hits=(hit,),
        registrations=(Registration("0", 0, "h", 1, 0, "ip", T),),
        worker_exits=(WorkerExit(1, 1, 1, T),),
        kill_all_time=T,
        scheduler_gave_up_time=T,
        terminate_all_time=T,
        handshake=Handshake(T, T),
    )


def floats(value: object, path: str = "") -> dict[str, float]:
    """Every float inside a FileFacts, by where it is."""
    if isinstance(value, float):
        return {path: value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            out.update(floats(getattr(value, f.name), f.name))
        return out
    if isinstance(value, tuple):
        out = {}
        for i, item in enumerate(value):
            out.update(floats(item, f"{path}[{i}]"))
        return out
    return {}


def test_a_shift_moves_every_log_time_and_nothing_else() -> None:
    before = floats(every_time_set())
    after = floats(shifted(every_time_set(), 3.0))
    assert before.keys() == after.keys()
    for where, value in before.items():
        is_time = where.split("[")[0] not in NOT_TIMES and value == T
        assert after[where] == (value + 3.0 if is_time else value), where


def worker(host: str, node: str, connect: float, done: float) -> FileFacts:
    return FileFacts(
        path=f"worker_{node}.log", log_dir="d", role=FileRole.WORKER, host=host,
        node_id=node, rank_from_log=int(node), handshake=Handshake(connect, done),
    )  # fmt: skip


def scheduler(*times: float) -> FileFacts:
    regs = tuple(Registration(str(i), i, "h", len(times), 0, "ip", t) for i, t in enumerate(times))
    return FileFacts(
        path="scheduler.log", log_dir="d", role=FileRole.SCHEDULER, host="m", registrations=regs
    )


def test_the_ranks_of_one_host_intersect_into_its_offset() -> None:
    """Host b is 5 s ahead: its workers connected 5 s + a little before and saw the wait
    5 s + a little after the scheduler registered them."""
    files = [
        scheduler(100.0, 200.0),
        worker("b", "0", 104.99, 105.02),
        worker("b", "1", 204.98, 205.01),
    ]
    clocks = measure(files, 1.0)
    offset = clocks.offsets["b"]
    assert (offset.low, offset.high) == pytest.approx((4.99, 5.01))
    assert offset.consistent and clocks.reference == "m"
    assert clocks.shift("b") == pytest.approx(-5.0) and clocks.error("b") == pytest.approx(0.01)
    assert clocks.error("m") == 0 and clocks.error("unknown-host") == 1.0


def test_brackets_that_do_not_meet_give_their_hull_and_say_so() -> None:
    files = [
        scheduler(100.0, 200.0),
        worker("b", "0", 100.0, 100.1),
        worker("b", "1", 202.0, 202.1),
    ]
    offset = measure(files, 1.0).offsets["b"]
    assert not offset.consistent and (offset.low, offset.high) == pytest.approx((0.0, 2.1))


def test_a_worker_that_never_learnt_its_rank_is_matched_by_its_file_number() -> None:
    w = dataclasses.replace(
        worker("b", "1", 199.0, 201.0), node_id=None, rank_from_log=None, rank_from_name=1
    )
    assert "b" in measure([scheduler(100.0, 200.0), w], 1.0).offsets
