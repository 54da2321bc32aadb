"""bench/gen_msrun_log.py writes what msrun would: no worker line after the scheduler gave
up on the dead rank, when msrun stops every worker left (re-trial A14: at the default HCCL
timeout of 600 s the other ranks logged EI0006 ten minutes after the scheduler gave up, and a
view following the generated run closed with `511 killed` where triage of the whole files
said `511 timed-out`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.drivers.triage import triage
from msrunwatch.rules.model import Rule
from tests.support import ROOT

STAMP = re.compile(rb"\):(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}) ")
GAVE_UP = b"There are 1 abnormal compute graph nodes."


def _generate(out: Path, *more: str) -> Path:
    gen = ROOT / "bench" / "gen_msrun_log.py"
    args = ["--ranks", "4", "--mb", "0.05", "--glog-v", "2", "--jobs", "1", *more]
    subprocess.run([sys.executable, str(gen), str(out), *args], check=True, capture_output=True)
    return out


def _last_stamp(path: Path) -> bytes:
    return max(STAMP.findall(path.read_bytes()))


@pytest.mark.parametrize(
    ("more", "others"),
    [((), "timed-out"), (("--hccl-timeout-s", "600"), "killed")],
    ids=["default", "hccl-600s"],
)
def test_no_worker_writes_after_the_scheduler_gave_up(
    tmp_path: Path, rules: list[Rule], more: tuple[str, ...], others: str
) -> None:
    out = _generate(tmp_path / "msrun_log", *more)
    scheduler = (out / "scheduler.log").read_bytes()
    gave_up = next(STAMP.findall(line)[0] for line in scheduler.splitlines() if GAVE_UP in line)
    for worker in sorted(out.glob("worker_*.log")):
        assert _last_stamp(worker) < gave_up, worker.name
    statuses = sorted(r.status.value for r in triage([str(out)], rules).ranks)
    assert statuses == sorted(["failed", *[others] * 3])
