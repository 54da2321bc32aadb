"""Snapshots for the TUI tests: real verdicts on fixtures, and synthetic runs of many ranks.

Every snapshot is stamped with the frozen time `NOW`, and the app under test reads the
same frozen clock, so ages and silences read the same on every run.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from msrunwatch.drivers.reading import scan_all
from msrunwatch.drivers.triage import find_logs, triage
from msrunwatch.judge.model import (
    Finding,
    FirstError,
    Occurrence,
    RankReport,
    Report,
    RootCause,
    Status,
)
from msrunwatch.live.run import Update
from msrunwatch.read.facts import CompileStats, MemorySummary, Progress
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.vocab import Role, Severity
from msrunwatch.tui.app import MsrunwatchApp
from msrunwatch.tui.messages import FindingsRaised, SnapshotUpdated

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
NOW = 1_795_248_000.0
"""The frozen wall clock of every TUI test (2026-11-21)."""


HEALTHY = "cpu_dp2_success_glog1"
"""A finished two-rank CPU run, copied and then broken by the live tests."""
OOM_LINE = (
    (FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log/worker_1.log").read_text().split("\n")[19]
)
"""The real `Memory not enough` line of rank 1 (worker_1.log:20) of an OOM run."""


def oom_line_for(log: Path) -> str:
    """The OOM line, with the pid of the process that writes `log`."""
    with log.open("rb") as fh:
        head = fh.read(2000).decode(errors="replace")
    pid = head.split("(", 1)[1].split(",", 1)[0]
    return OOM_LINE.replace("(31813,", f"({pid},") + "\n"


def healthy_copy(tmp_path: Path) -> Path:
    """A copy of the healthy run to append to: `<tmp>/run/msrun_log/worker_{0,1}.log`."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / HEALTHY / "msrun_log", run / "msrun_log")
    return run


def running_copy(tmp_path: Path) -> Path:
    """The healthy run's copy with rank 1's log cut before its normal end (its step lines
    stay): a rank still training, to which a fault can be appended. A fault after a log's
    normal end is teardown noise (judge.sightings.Teardown), not the rank's failure."""
    run = healthy_copy(tmp_path)
    log = run / "msrun_log" / "worker_1.log"
    files = find_logs([str(log.parent)], (), [])
    [facts] = [f for f in scan_all(files, load_rules(), None) if f.path == log.name]
    assert facts.finished_line is not None, "the healthy run's rank 1 ends normally"
    kept = log.read_bytes().splitlines(keepends=True)[: facts.finished_line - 1]
    log.write_bytes(b"".join(kept))
    return run


def frozen() -> float:
    return NOW


@functools.cache
def fixture_report(name: str) -> Report:
    """Triage's verdict on a fixture, through the relative path a user would type."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return triage([f"fixtures/{name}"], load_rules())
    finally:
        os.chdir(here)


def snapshot(
    report: Report,
    silence: dict[int, float] | None = None,
    behind: int = 0,
    new_findings: Sequence[Finding] | None = None,
) -> Update:
    """An Update as the engine gives it, with silences that grow by one second per rank."""
    quiet = {r.rank: 2.0 + r.rank for r in report.ranks} if silence is None else silence
    found = report.findings if new_findings is None else tuple(new_findings)
    return Update(report, tuple(found), (), quiet, 0, behind, (), NOW)


def app(targets: Sequence[str] = ("msrun_log",)) -> MsrunwatchApp:
    """An app with no feed and the frozen clock; `post(app, update)` gives it snapshots."""
    return MsrunwatchApp(None, targets, clock=frozen)


def screen_text(target: MsrunwatchApp) -> list[str]:
    """The screen as the terminal shows it: every line as composed, lines the widgets did
    not repaint included (what `line()` of a widget cannot tell)."""
    from rich.console import Console

    width, height = target.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(target.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


def post(target: MsrunwatchApp, update: Update) -> None:
    """What the feed posts for one tick: findings first, then the snapshot."""
    if update.new_findings:
        target.post_message(FindingsRaised(update.new_findings, update.report.root_cause))
    target.post_message(SnapshotUpdated(update))


# -- synthetic runs ---------------------------------------------------------------------


def rank_report(rank: int, step: int = 100, status: Status = Status.TRAINING) -> RankReport:
    """A training rank of an 8-card-per-host Ascend cluster."""
    memory = MemorySummary(
        65536, 58196, None, 41000 + rank % 97, 43500 + (rank * 37) % 9000, 1, None
    )
    return RankReport(
        rank=rank,
        log_dir="msrun_log",
        file=f"worker_{rank}.log",
        status=status,
        pid=10000 + rank,
        host=f"node{rank // 8:03d}",
        memory=memory,
        compile=CompileStats(count=1, total_ms=370_000 + rank * 13.0),
        progress=Progress(
            step=step,
            epoch=1,
            loss=3.5 - step / 1000 + rank % 7 / 100,
            step_time_ms=812.0 + rank % 5,
        ),
        first_time=NOW - 600,
        last_time=NOW - 2,
        lines=1000 + step,
    )


def synthetic(n: int, step: int = 100, outcome: str = "running") -> Report:
    """A run of n training ranks."""
    ranks = tuple(rank_report(r, step) for r in range(n))
    return Report(("msrun_log",), outcome, None, ranks, ())


def all_killed(report: Report) -> Report:
    """The run after msrun killed every rank: it has ended, and failed."""
    ranks = tuple(dataclasses.replace(r, status=Status.KILLED) for r in report.ranks)
    return dataclasses.replace(report, outcome="failed", ranks=ranks)


def finding(rule: str, ranks: Sequence[int], message: str, first: int | None = None) -> Finding:
    """An error finding seen on `ranks`, first on `first` (default: the lowest)."""
    order = [first, *[r for r in ranks if r != first]] if first is not None else list(ranks)
    occurrences = tuple(
        Occurrence(
            r, "msrun_log", f"worker_{r}.log", 40 + i, NOW - 30 + i, True, message, 1, message
        )
        for i, r in enumerate(order)
    )
    return Finding(
        rule,
        rule,
        "hccl-timeout",
        Severity.ERROR,
        "symptom",
        message,
        tuple(sorted(ranks)),
        occurrences,
        len(ranks),
    )


def with_stalled(
    report: Report, rank: int, silent_s: float = 312.0
) -> tuple[Report, dict[int, float]]:
    """The same run with one rank stalled: silent for minutes while the others write."""
    ranks = tuple(
        dataclasses.replace(r, status=Status.STALLED, status_reason=f"no line for {silent_s:.0f}s")
        if r.rank == rank
        else r
        for r in report.ranks
    )
    silence = {r.rank: (silent_s if r.rank == rank else 1.0) for r in report.ranks}
    stalled = Finding(
        "rank-stalled",
        "A rank stopped writing while the others went on",
        "stalled",
        Severity.ERROR,
        Role.CAUSE.value,
        f"Rank {rank} has written nothing for {silent_s:.0f}s while the others went on",
        (rank,),
        (
            Occurrence(
                rank, "msrun_log", f"worker_{rank}.log", 1100, NOW - silent_s, True, "", 1, ""
            ),
        ),
        1,
    )
    first = FirstError("stalled", "rank-stalled", f"worker_{rank}.log", 1100, NOW - silent_s)
    ranks = tuple(dataclasses.replace(r, first_error=first) if r.rank == rank else r for r in ranks)
    return dataclasses.replace(report, ranks=ranks, outcome="running", findings=(stalled,)), silence


# -- hand-made verdicts: the UI's snapshots do not move when the engine's verdicts do ----

OOM_DIR = "fixtures/synth_hccl_ei0006_after_oom_8p"
OOM_TEXT = (
    "Out of memory: 1_Default/network-WithLossCell/_backbone-LlamaForCausalLM/model-LlamaModel/"
    "layers-CellList/13-LlamaDecodeLayer/feed_forward-LlamaFeedForward/w1-Linear/MatMul-op2213"
    " could not allocate 1342177280 B"
)


def healthy(n: int = 8) -> Report:
    """A finished pipeline-parallel run: two stages, the second one heavier."""
    ranks = tuple(
        dataclasses.replace(
            rank_report(r),
            status=Status.FINISHED,
            host="ascend-910b-node01",
            memory=MemorySummary(
                65536, 58196, None, 41000 + 11 * r, 43500 + 11000 * (r >= n // 2), 1, None
            ),
        )
        for r in range(n)
    )
    imbalance = Finding(
        "memory-imbalance-between-stages",
        "Pipeline stages use unequal memory",
        "memory-over-budget",
        Severity.WARNING,
        "symptom",
        "Stage peaks differ by more than 25%: median actual peak per stage 43500, 54500 MB",
        (),
        (),
        1,
    )
    return Report(("msrun_log",), "ok", None, ranks, (imbalance,))


def _line(path: str, number: int) -> str:
    with open(ROOT / path, encoding="utf-8") as fh:
        return fh.read().split("\n")[number - 1]


def oom_with_timeouts() -> Report:
    """Rank 3 ran out of memory; ranks 0-2 and 4-7 timed out in HCCL ten minutes later.

    The ranks' logs are the fixture's, so the detail screen reads real lines.
    """
    ranks = []
    for r in range(8):
        base = rank_report(r, step=0)
        common = {
            "log_dir": OOM_DIR,
            "file": f"msrun_log/worker_{r}.log",
            "host": "atlas800t-a2-07",
            "progress": None,
            "memory": None,
        }
        if r == 3:
            error = FirstError(
                "oom", "oom-memory-not-enough", "msrun_log/worker_3.log", 24, NOW - 600
            )
            ranks.append(
                dataclasses.replace(
                    base,
                    **common,
                    status=Status.FAILED,
                    first_error=error,
                    status_reason="oom at msrun_log/worker_3.log:24",
                    lines=72,
                )
            )
        else:
            error = FirstError(
                "hccl-timeout", "cann-ei0006", f"msrun_log/worker_{r}.log", 66, NOW - 10 + r
            )
            ranks.append(
                dataclasses.replace(
                    base,
                    **common,
                    status=Status.TIMED_OUT,
                    first_error=error,
                    status_reason=f"hccl-timeout at msrun_log/worker_{r}.log:66",
                    lines=66,
                )
            )
    others = [0, 1, 2, 4, 5, 6, 7]
    oom = Finding(
        "oom-memory-not-enough",
        "Out of device memory",
        "oom",
        Severity.ERROR,
        "root-cause",
        OOM_TEXT,
        (3,),
        (
            Occurrence(
                3,
                OOM_DIR,
                "msrun_log/worker_3.log",
                24,
                NOW - 600,
                True,
                _line(f"{OOM_DIR}/msrun_log/worker_3.log", 24),
                2,
                OOM_TEXT,
            ),
        ),
        2,
    )
    ei0006 = Finding(
        "cann-ei0006",
        "HCCL socket timeout",
        "hccl-timeout",
        Severity.ERROR,
        "symptom",
        "EI0006: building the HCCL socket timed out",
        tuple(others),
        tuple(
            Occurrence(
                r,
                OOM_DIR,
                f"msrun_log/worker_{r}.log",
                66,
                NOW - 10 + (r + 1) % 8,
                False,
                "",
                1,
                "EI0006: building the HCCL socket timed out",
            )
            for r in [7, 0, 1, 2, 4, 5, 6]
        ),
        7,
    )
    free = Finding(
        "free-memory-less-than-half",
        "Less than half the device memory free",
        "oom",
        Severity.WARNING,
        "symptom",
        "Device 3: only 29234491392 B of 65452113920 B free",
        (3,),
        (
            Occurrence(
                3,
                OOM_DIR,
                "msrun_log/worker_3.log",
                14,
                NOW - 740,
                True,
                _line(f"{OOM_DIR}/msrun_log/worker_3.log", 14),
                1,
                "Device 3: only 29234491392 B of 65452113920 B free",
            ),
        ),
        1,
    )
    root = RootCause(
        (3,),
        "oom",
        "oom-memory-not-enough",
        OOM_DIR,
        "msrun_log/worker_3.log",
        24,
        NOW - 600,
        OOM_TEXT,
        "the earliest fault a rank logged about itself",
    )
    return Report((OOM_DIR,), "failed", root, tuple(ranks), (oom, ei0006, free))
