"""How the live engine shares its reading between files (trial N9: at 513 files a burst was
read in one 32 MiB tick, and a tick's budget always went to the same files first).

* Files take turns: a file whose neighbours in the listing grow by more than a tick's budget
  is still read, so its fault is found within a few ticks.
* Descriptors: when more files grow every tick than the cap holds, the files already held
  keep their descriptor and only the others are opened for each read (releasing the least
  recently grown released, every time, the file read next).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from msrunwatch.live.run import Descriptors, LiveRun
from msrunwatch.live.tail import FileTail
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, Clock

EXCEPTION = FIXTURES / "cpu_dp2_exception_rank1" / "msrun_log"
BUDGET = 64 << 10
FILLER = b"[INFO] ME(1,1,python):2026-11-21-05:16:30.000.000 [x.cc:1] F] another line\n"


def test_a_file_behind_busier_ones_is_read_in_its_turn(tmp_path: Path, rules: list[Rule]) -> None:
    target = tmp_path / "msrun_log"
    shutil.copytree(EXCEPTION, target)
    rank1 = target / "worker_1.log"
    lines = rank1.read_bytes().splitlines(keepends=True)
    fault = next(i for i, line in enumerate(lines) if line.startswith(b"Traceback"))
    rank1.write_bytes(b"".join(lines[:fault]))  # rank 1 trains; its exception comes later
    clock = Clock()
    live = LiveRun([str(target)], rules, per_tick=BUDGET, clock=clock)
    try:
        while not live.tick().caught_up:
            pass
        assert [p.name for p in live.paths()][-1] == "worker_1.log"  # last in the ring
        with rank1.open("ab") as fh:
            fh.write(b"".join(lines[fault : fault + 20]))
        found = []
        for _ in range(4):  # the others outgrow the whole budget on every tick
            for busy in ("scheduler.log", "worker_0.log"):
                with (target / busy).open("ab") as fh:
                    fh.write(FILLER * (BUDGET // len(FILLER) + 1))
            clock.now += 1.1  # behind, the engine judges once a JUDGE_S
            found += [f.rule for f in live.tick().new_findings if 1 in f.ranks]
    finally:
        live.close()
    assert "python-exception" in found


def test_files_held_keep_their_descriptors_when_more_grow_than_the_cap(tmp_path: Path) -> None:
    paths = [tmp_path / f"worker_{n}.log" for n in range(3)]
    tails = [FileTail(p) for p in paths]
    held = Descriptors(cap=2)
    for line in range(3):
        held.next_round()
        for path, tail in zip(paths, tails):
            with path.open("ab") as fh:
                fh.write(b"line %d\n" % line)
            assert tail.read(1 << 20).data
            held.used(path, tail, grew=True)
    assert [t.holds_descriptor for t in tails] == [True, True, False]
    held.next_round()  # a tick on which only the third grows: it takes the oldest's place
    with paths[2].open("ab") as fh:
        fh.write(b"more\n")
    assert tails[2].read(1 << 20).data
    held.used(paths[2], tails[2], grew=True)
    assert [t.holds_descriptor for t in tails] == [False, True, True]
    for tail in tails:
        tail.close()


def test_files_a_tick_did_not_reach_are_behind_only_if_they_grew(
    tmp_path: Path, rules: list[Rule]
) -> None:
    """Trial N14: while a burst was read on 512 ranks the header said `472 files behind` for
    the whole catch-up, as the ranks not read yet went from 471 to 52: every file the tick's
    budget did not reach was counted behind, though read whole before and not grown since."""
    target = tmp_path / "msrun_log"
    shutil.copytree(EXCEPTION, target)
    live = LiveRun([str(target)], rules, per_tick=BUDGET, clock=Clock())
    try:
        while not live.tick().caught_up:
            pass
        busy = target / "scheduler.log"  # first in the ring: it takes the whole budget
        with busy.open("ab") as fh:
            fh.write(FILLER * (2 * BUDGET // len(FILLER) + 1))
        assert live.tick().behind == 1  # the scheduler's log; the two ranks' have nothing new
        with (target / "worker_0.log").open("ab") as fh:  # next in the ring: the whole budget
            fh.write(FILLER * (2 * BUDGET // len(FILLER) + 1))
        assert live.tick().behind == 2  # rank 0's, and the scheduler's that it left unread
    finally:
        live.close()
