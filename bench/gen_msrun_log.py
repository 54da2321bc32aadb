"""Generate a large msrun_log/ for benchmarking `msrunwatch triage`, from real logs' own lines.

Each worker_N.log is the INFO/WARNING/ERROR stream of a real GLOG_v=1 worker log (by default
fixtures/cpu_dp2_success_glog1; --source takes another real run's msrun_log/), in its real mix
and order, repeated end to end: every repetition is the whole real stream (start-up, cluster
building, compile, training steps with their LossMonitor and TimeMonitor lines, exit), shifted
by a whole number of seconds so times stay monotonic in MindSpore's format
(`YYYY-MM-DD-HH:MM:SS.mmm.uuu`), with the rank's own pid and thread ids and its rank and device
ids rewritten (`This node N rank id: N`, world size, groups). Rank N repeats source worker
N mod (number of source workers). The last repetition stops after a LossMonitor line, chosen
so each file comes out close to --mb MiB; then the fault rank logs the real OOM lines of
fixtures/cpu_dp2_oom_alloc_failed (CPU wording, or with --oom-form ascend the Ascend wording
`Device(id:N) memory isn't enough and alloc failed ...`) and the other ranks, hung in the same
step, log HCCL EI0006 HCCL_CONNECT_TIMEOUT --hccl-timeout-s later, unless the scheduler gave up
on the fault rank first: msrun then stops them, and their logs end in the hang. scheduler.log is
the real one with every rank registering and the fault rank timed out. --glog-v 2 keeps only
the WARNING-and-above lines (with their continuation lines) and the LossMonitor/TimeMonitor
lines of the same streams, as GLOG_v=2 would have logged them. --nodes N splits the ranks over
node<i>/msrun_log/.
Output is a pure function of the arguments, --seed and the source files.

    python bench/gen_msrun_log.py OUT_DIR --ranks 64 --mb 16 [--fault-rank 37] [--seed 1]
                                  [--glog-v 1|2] [--nodes N] [--source DIR] [--oom-form cpu|ascend]

The step-by-step pieces further down (worker_template, StepWriter, epoch_end, loss_curve) are
what bench_live.py appends while the watcher runs; this script's own output does not use them.
"""

from __future__ import annotations

import argparse
import calendar
import math
import multiprocessing
import os
import random
import re
import struct
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field, replace
from functools import lru_cache
from pathlib import Path

from msrunwatch.core.compat import dataclass, zip_strict

REPO = Path(__file__).resolve().parent.parent
SOURCE_DIR = REPO / "fixtures" / "cpu_dp2_success_glog1" / "msrun_log"
"""The real GLOG_v=1 run whose worker streams are repeated (--source)."""
TEMPLATE_DIR = SOURCE_DIR
"""Where bench_live.py's step-by-step pieces come from (always the fixture)."""
OOM_SOURCE = REPO / "fixtures" / "cpu_dp2_oom_alloc_failed" / "msrun_log" / "worker_0.log"
"""The real OOM: from its `Allocate memory failed` line to the end of the file."""
OOM_START = "Allocate memory failed"
MIB = 1 << 20
DEVICES_PER_NODE = 8
DEFAULT_STEPS_PER_EPOCH = 500
DEFAULT_STEP_MS = 250.0
DEFAULT_HCCL_TIMEOUT_S = 20.0
"""How long the other ranks wait before EI0006: less than the scheduler takes to give up on
the dead rank (node_timeout_s + GIVE_UP_AFTER_US), after which msrun stops every worker left.
At 600 s the generated logs went on past msrun's stop: a view following the run closed with
`511 killed` at the scheduler's give-up, and triage of the whole files said `511 timed-out`
(re-trial A14)."""
GIVE_UP_AFTER_US = 1_490_000
"""The scheduler gives up (`There are 1 abnormal compute graph nodes.`) this long after it
timed the dead node out (fixture cpu_dp2_oom_alloc_failed)."""
SCRIPT = "/home/user/jobs/msrunwatch_bench/train_dense.py"
SITE = "/home/user/venv/lib/python3.11/site-packages/mindspore"

# -- parsing real logs -------------------------------------------------------------------

HEADER = re.compile(
    r"^(?P<lm>\[(?P<level>[A-Z]+)\] [A-Z_]+)\((?P<pid>\d+)(?P<sep>[,:])(?P<tid>[0-9a-f]+),"
    r"(?P<proc>[^)]*)\):(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{1,3}\.\d{0,3})(?P<tail> .*)$"
)
LOSS_LINE = re.compile(r"^epoch: (\d+) step: \d+, loss is ")
"""MindSpore's LossMonitor print (no GLOG prefix)."""
TIME_LINE = re.compile(r"^Train epoch time: ")
"""MindSpore's TimeMonitor print."""
WORKER_LOG = re.compile(r"^worker_(\d+)\.log$")
SAID_FINISHED = re.compile(r"^\[\w+\] rank=\d+ finished\s*$")
"""The source script's own last word (`[train_dense] rank=1 finished`): left out of every
rank, which fails or waits. Repeated in every copy of the stream, it said the process had
ended normally long before the injected OOM, and a fault after a process's normal end is
teardown noise (read.patterns.FINISHED): the OOM was read as a note, the verdict
`cause-not-in-logs`."""
QUIET_AT_V2 = frozenset({"DEBUG", "INFO"})
"""Levels GLOG_v=2 does not log."""


@dataclass(frozen=True, slots=True)
class TLine:
    """One real log line: a GLOG line split around its pid, thread id and timestamp, or plain."""

    tail: str
    """Text after the timestamp (GLOG lines) or the whole line (plain lines)."""
    level_module: str = ""
    tid: str = ""
    proc: str = ""
    python: bool = False
    """Python-logger line: `pid:decimal-tid,MainProcess` instead of `pid,hex-tid,python`."""
    ts_text: str = ""
    ts_us: int | None = None
    pid: str = ""
    level: str = ""

    @property
    def is_glog(self) -> bool:
        return self.ts_us is not None


def parse_ts(text: str) -> int:
    """A GLOG timestamp (`2026-11-21-05:14:07.539.394`) as microseconds since the epoch."""
    date, frac = text[:19], text[20:]
    ms, _, us = frac.partition(".")
    sec = calendar.timegm(time.strptime(date, "%Y-%m-%d-%H:%M:%S"))
    return sec * 1_000_000 + int(ms) * 1000 + int(us or 0)


def parse_line(text: str) -> TLine:
    """Split a GLOG line into the parts a rank rewrites; anything else stays plain."""
    m = HEADER.match(text)
    if m is None:
        return TLine(tail=text)
    return TLine(
        tail=m["tail"],
        level_module=m["lm"],
        tid=m["tid"],
        proc=m["proc"],
        python=m["sep"] == ":",
        ts_text=m["ts"],
        ts_us=parse_ts(m["ts"]),
        pid=m["pid"],
        level=m["level"],
    )


def read_lines(path: Path) -> list[TLine]:
    """A real log file, parsed line by line."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [parse_line(line) for line in text.splitlines()]


def read_template(name: str) -> list[TLine]:
    """A file of the fixture run (TEMPLATE_DIR), parsed line by line."""
    return read_lines(TEMPLATE_DIR / name)


def _index(lines: list[TLine], needle: str) -> int:
    """The first line containing needle: cut points are found, never hard-coded."""
    for i in range(len(lines)):
        if needle in lines[i].tail:
            return i
    raise ValueError(f"line not found: {needle!r}")


def _ts(line: TLine) -> int:
    assert line.ts_us is not None, line.tail
    return line.ts_us


def at_level(lines: Sequence[TLine], glog_v: int) -> list[TLine]:
    """The lines a run at GLOG_v=glog_v would have logged, from a GLOG_v=1 log.

    GLOG_v=2: WARNING and above, each with the plain lines that continue it (a multi-line
    message, a traceback after an ERROR), plus the LossMonitor and TimeMonitor prints.
    """
    if glog_v <= 1:
        return list(lines)
    out: list[TLine] = []
    keeping = False
    for line in lines:
        if line.is_glog:
            keeping = line.level not in QUIET_AT_V2
            if keeping:
                out.append(line)
        elif LOSS_LINE.match(line.tail) or TIME_LINE.match(line.tail):
            out.append(line)
            keeping = False
        elif keeping:
            out.append(line)
    return out


# -- rendering ---------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def second_text(sec: int) -> str:
    """`YYYY-MM-DD-HH:MM:SS` of a Unix second, as GLOG prints it (UTC, like the fixtures)."""
    return time.strftime("%Y-%m-%d-%H:%M:%S", time.gmtime(sec))


class Clock:
    """Formats microsecond times the way GLOG does."""

    def fmt(self, us: int) -> str:
        sec, rem = divmod(us, 1_000_000)
        ms, micro = divmod(rem, 1000)
        return f"{second_text(sec)}.{ms:03d}.{micro:03d}"


@dataclass(frozen=True)
class Persona:
    """What makes one process's lines its own: rank, pid, thread ids."""

    rank: int
    world: int
    pid: int
    tid_shift: int
    """Added to every real thread id: ASLR moves all of a process's stacks together."""

    @property
    def device(self) -> int:
        return self.rank % DEVICES_PER_NODE

    def tid(self, template_tid: str) -> str:
        return f"{int(template_tid, 16) + self.tid_shift:012x}"

    def head(self, line: TLine, pid: int | None = None) -> str:
        """The line's `[LEVEL] MODULE(pid,tid,proc):` prefix for this process."""
        pid = self.pid if pid is None else pid
        if line.python:
            return f"{line.level_module}({pid}:{int(line.tid) + self.tid_shift},{line.proc}):"
        return f"{line.level_module}({pid},{self.tid(line.tid)},{line.proc}):"

    def glog(self, level_module: str, template_tid: str, ts: str, source: str, msg: str) -> str:
        """A new C++ GLOG line from this process (for the fault lines)."""
        return f"{level_module}({self.pid},{self.tid(template_tid)},python):{ts} [{source}] {msg}"


def persona(rank: int, world: int, seed: int) -> Persona:
    """Deterministic pid and thread-id shift; pids stay distinct and equally wide.

    Thread ids only move down, page-aligned, so they stay below 0x7fffffffffff like real ones.
    """
    rng = random.Random(seed * 1_000_003 + rank)
    pid = 100_000 + rank * 37 + rng.randrange(37)
    return Persona(rank, world, pid, -(rng.randrange(1 << 30) << 12))


SUBSTITUTED = [
    r"(DEVICE_ID to: )\d+",
    r"(The compute graph node: )\d+( has been registered)",
    r"This node \d+ rank id: \d+",
    r"(MCCL_COLLECTIVE_RANK_MS_WORKER_)\d+( has been registered)",
    r"(The cpu collective rank )\d+",
    r"Global rank id: \d+, global rank size: \d+",
    r"(Host name for rank )\d+",
    r"(local rank id assigned for this process is )\d+",
    r"('DEVICE_ID' assigned for this process is: )\d+",
    r"(Refresh device id to )\d+",
    r"(local rank id \[)\d+",
    r"(Number of role MS_WORKER is )\d+",
    r"\[const vector\]\{\d+(?:, \d+)*\}",
    r"^\[train_dense\] rank=\d+ size=\d+ pid=\d+",
    r"^(\[\w+\] rank=)\d+( finished)",
    r"^device_id: \d+$",
    r"^num_devices: \d+$",
    r"(Create tcp client for role: 1, rank: )\d+",
]
"""Texts in a worker log that name its rank, device or world size (rank_substitutions)."""
ANY_SUBSTITUTED = re.compile("|".join(f"(?:{s})" for s in SUBSTITUTED), re.M)


def rank_substitutions(p: Persona) -> list[tuple[re.Pattern[str], str]]:
    """Rewrites that make another rank's lines read as rank p.rank's (same order as SUBSTITUTED)."""
    r, n, d = p.rank, p.world, p.device
    group = ", ".join(str(i) for i in range(n))
    repls = [
        rf"\g<1>{d}",
        rf"\g<1>{r}\g<2>",
        f"This node {r} rank id: {r}",
        rf"\g<1>{r}\g<2>",
        rf"\g<1>{r}",
        f"Global rank id: {r}, global rank size: {n}",
        rf"\g<1>{r}",
        rf"\g<1>{d}",
        rf"\g<1>{d}",
        rf"\g<1>{d}",
        rf"\g<1>{d}",
        rf"\g<1>{n}",
        f"[const vector]{{{group}}}",
        f"[train_dense] rank={r} size={n} pid={p.pid}",
        rf"\g<1>{r}\g<2>",
        f"device_id: {d}",
        f"num_devices: {n}",
        rf"\g<1>{(r + 1) % n}",
    ]
    return [(re.compile(a), b) for a, b in zip_strict(SUBSTITUTED, repls)]


def substitute(tail: str, subs: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, repl in subs:
        if pattern.search(tail):
            tail = pattern.sub(repl, tail)
    return tail


def render_verbatim(
    lines: Iterable[TLine], p: Persona, subs: list[tuple[re.Pattern[str], str]]
) -> str:
    """Lines with their original timestamps, rewritten for persona p."""
    out = []
    for line in lines:
        tail = substitute(line.tail, subs)
        out.append(f"{p.head(line)}{line.ts_text}{tail}" if line.is_glog else tail)
    return "\n".join(out) + "\n"


def render_shifted(lines: list[TLine], p: Persona, start_us: int, clock: Clock) -> str:
    """Lines re-timed so the first starts at start_us; gaps as in the original, never backwards."""
    glog = [ln for ln in lines if ln.is_glog]
    if not glog:
        return "".join(ln.tail + "\n" for ln in lines)
    base = _ts(glog[0])
    out, last = [], start_us
    for line in lines:
        if not line.is_glog:
            out.append(line.tail)
            continue
        last = max(last, start_us + _ts(line) - base)
        if line.python:  # Python's logger has milliseconds only: round up, keep order
            last = -(-last // 1000) * 1000
        out.append(f"{p.head(line)}{clock.fmt(last)}{line.tail}")
    return "\n".join(out) + "\n"


# -- the real streams, repeated ----------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One real worker log at the chosen GLOG level, and where it can be cut."""

    name: str
    lines: tuple[TLine, ...]
    losses: tuple[int, ...]
    """Index of every LossMonitor line: the last repetition stops after one of them."""
    epochs: int
    """Highest epoch number of its LossMonitor lines: repetition k adds k * epochs."""
    exit_from: int
    """Start of the exit section (the GLOG lines after the last plain line)."""
    main_pid: str
    needs_subs: frozenset[int]
    """Lines that name a rank, device or world size (rewritten per rank)."""

    @property
    def first_us(self) -> int:
        return next(_ts(ln) for ln in self.lines if ln.is_glog)

    @property
    def last_us(self) -> int:
        return monotonic_times(self.lines)[-1]


def monotonic_times(lines: Sequence[TLine]) -> list[int]:
    """Each GLOG line's time, never earlier than the one before (threads interleave)."""
    out, last = [], 0
    for line in lines:
        if line.is_glog:
            last = max(last, _ts(line))
            if line.python:
                last = -(-last // 1000) * 1000
            out.append(last)
    return out


@lru_cache(maxsize=8)
def read_sources(source_dir: str, glog_v: int) -> tuple[Source, ...]:
    """Every worker_N.log of a real run, in rank order."""
    found = sorted(
        (int(m[1]), path)
        for path in Path(source_dir).iterdir()
        if (m := WORKER_LOG.match(path.name)) and path.is_file()
    )
    if not found:
        raise SystemExit(f"no worker_N.log in {source_dir}")
    sources = []
    for _, path in found:
        kept = (ln for ln in read_lines(path) if ln.is_glog or not SAID_FINISHED.match(ln.tail))
        lines = tuple(at_level(list(kept), glog_v))
        if not any(ln.is_glog for ln in lines):
            raise SystemExit(f"{path}: no GLOG line at GLOG_v={glog_v}")
        matches = [(i, m) for i, ln in enumerate(lines) if (m := LOSS_LINE.match(ln.tail))]
        losses = tuple(i for i, _ in matches)
        epochs = max((int(m[1]) for _, m in matches), default=0)
        plain = [i for i, ln in enumerate(lines) if not ln.is_glog]
        exit_from = (plain[-1] + 1) if plain else len(lines)
        pids = Counter(ln.pid for ln in lines if ln.is_glog)
        needs = frozenset(i for i, ln in enumerate(lines) if ANY_SUBSTITUTED.search(ln.tail))
        sources.append(
            Source(path.name, lines, losses, epochs, exit_from, pids.most_common(1)[0][0], needs)
        )
    return tuple(sources)


class RankStream:
    """One rank's copy of its source stream as a bytes %-format: a repetition is one `%`.

    Each GLOG line's timestamp is split into its second (a slot: that second's text is
    filled in per repetition) and its sub-second part (fixed): repetitions move by whole
    seconds. LossMonitor lines have a slot for the epoch number. Bytes, not str: the `%`
    of bytes is several times faster, and nothing needs encoding afterwards.
    """

    def __init__(self, src: Source, p: Persona, skew_us: int, base_sec: int) -> None:
        subs = rank_substitutions(p)
        pid_re = re.compile(rf"\bpid([=:] ?){src.main_pid}\b")
        pids = {src.main_pid: p.pid}
        pieces: list[str] = []
        slots: list[int] = []
        """>= 0: second offset from base_sec; < 0: minus the source's epoch number."""
        self.slot_count: list[int] = []
        """Slots before each line: the format of the first n lines takes slot_count[n]."""
        self.last_us: list[int] = []
        """Time of the last GLOG line at or before each line (repetition 0)."""
        last = 0
        for i, line in enumerate(src.lines):
            self.slot_count.append(len(slots))
            tail = line.tail
            if i in src.needs_subs:
                tail = substitute(tail, subs)
            if src.main_pid in tail:
                tail = pid_re.sub(rf"pid\g<1>{p.pid}", tail)
            tail = tail.replace("%", "%%")
            if line.is_glog:
                last = max(last, _ts(line) + skew_us)
                if line.python:
                    last = -(-last // 1000) * 1000
                sec, rem = divmod(last, 1_000_000)
                pid = pids.setdefault(line.pid, p.pid + len(pids))
                head = p.head(line, pid).replace("%", "%%")
                pieces.append(f"{head}%s.{rem // 1000:03d}.{rem % 1000:03d}{tail}\n")
                slots.append(sec - base_sec)
            elif m := LOSS_LINE.match(line.tail):
                pieces.append(f"epoch: %d{tail[m.end(1) :]}\n")
                slots.append(-int(m[1]))
            else:
                pieces.append(tail + "\n")
            self.last_us.append(last)
        self.slot_count.append(len(slots))
        self.pieces = pieces
        self.slots = slots
        self.seconds = max((s for s in slots if s >= 0), default=0) + 1
        self.base_sec = base_sec
        self.full = "".join(pieces).encode("utf-8")
        self._partial: dict[int, bytes] = {}

    def render(self, k: int, period_s: int, epochs: int, upto: int | None = None) -> bytes:
        """Repetition k (k * period_s seconds later, epochs + k * epochs), lines [:upto]."""
        first = self.base_sec + k * period_s
        secs = [second_text(first + j).encode("ascii") for j in range(self.seconds)]
        shift = k * epochs
        args = tuple(secs[s] if s >= 0 else shift - s for s in self.slots[: self.count(upto)])
        return self.format(upto) % args

    def count(self, upto: int | None) -> int:
        return len(self.slots) if upto is None else self.slot_count[upto]

    def format(self, upto: int | None) -> bytes:
        if upto is None:
            return self.full
        if upto not in self._partial:
            self._partial[upto] = "".join(self.pieces[:upto]).encode("utf-8")
        return self._partial[upto]


# -- the fault ---------------------------------------------------------------------------


@lru_cache(maxsize=4)
def oom_section(path: str, glog_v: int) -> tuple[TLine, ...]:
    """The real OOM: from the `Allocate memory failed` line to the end of that worker log."""
    lines = read_lines(Path(path))
    return tuple(at_level(lines[_index(lines, OOM_START) :], glog_v))


def oom_tail(p: Persona, lines: Sequence[TLine], when_us: int, form: str, clock: Clock) -> str:
    """The fault rank's real OOM lines from when_us on, as this rank's; Ascend wording if asked."""
    text = render_shifted(list(lines), p, when_us, clock)
    if form == "ascend":
        text = text.replace(
            "Memory isn't enough and alloc failed",
            f"Device(id:{p.device}) memory isn't enough and alloc failed",
        )
    return text


# -- the victims: HCCL EI0006 after the timeout ------------------------------------------------

MAX_SKEW_US = 400
"""Ranks log the same step up to this far apart."""
FAULT_DELAY_US = 3_000
SEP = "-" * 52


def _train_frames() -> list[str]:
    """model.train frames as MindSpore 2.10.0 prints them (fixture cpu_dp2_exception_rank1)."""
    site = SITE  # short name: the frames below stay one per line
    return [
        "Traceback (most recent call last):",
        f'  File "{SCRIPT}", line 86, in <module>',
        "    model.train(EPOCHS, dataset, callbacks=[LossMonitor(1), TimeMonitor()], "
        "dataset_sink_mode=False)",
        f'  File "{site}/train/model.py", line 1395, in train',
        "    self._train(epoch,",
        f'  File "{site}/train/model.py", line 350, in wrapper',
        "    return func(self, *args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/train/model.py", line 123, in wrapper',
        "    func(self, *args, **kwargs)",
        f'  File "{site}/train/model.py", line 1089, in _train',
        "    self._train_process(epoch, train_dataset, list_callback, cb_params, initial_epoch,",
        f'  File "{site}/train/model.py", line 1253, in _train_process',
        "    outputs = self._train_network(*next_element)",
        "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/nn/cell.py", line 1409, in __call__',
        "    out = self.compile_and_run(*args, **kwargs)",
        "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/nn/cell.py", line 1807, in compile_and_run',
        "    return _cell_graph_executor(self, *new_args, phase=self.phase)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/graph/api.py", line 2401, in __call__',
        "    return self.run(obj, *args, phase=phase)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/graph/api.py", line 2452, in run',
        "    return self._exec_pip(obj, *args, phase=phase_real)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/graph/api.py", line 256, in wrapper',
        "    results = fn(*arg, **kwargs)",
        "              ^^^^^^^^^^^^^^^^^^",
        f'  File "{site}/graph/api.py", line 2432, in _exec_pip',
        "    return self._graph_executor(args, phase)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    ]


EI0006 = (
    "EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request. "
    "some NPUs in the cluster are abnormal.    2. The remote does not initiate a connect request "
    "because the collective communication operator is started too late or is not started by some "
    "NPU in the cluster.    3. The communication link is disconnected. (For example, the IP "
    "addresses are not on the same network segment or the TLS configurations are inconsistent.)"
)
EI0006_SOLUTION = (
    "        Solution: 1. Check the rank service processes with other errors or no errors in the "
    "cluster.2. If this error is reported for all NPUs, check whether the time difference between "
    "the earliest and latest errors is greater than the connect timeout interval "
    "(120s by default). "
    "If so, adjust the timeout interval by using the HCCL_CONNECT_TIMEOUT environment variable.3. "
    "Check the connectivity of the communication link between nodes. (For details, see the TLS "
    "command and HCCN connectivity check examples.)"
)
RUN_GRAPH_SRC = "mindspore/ccsrc/plugin/device/ascend/hal/hardware/ascend_graph_executor.cc:195"


def hccl_tail(p: Persona, tid: str, when_us: int, clock: Clock) -> str:
    """A victim: the graph run fails with EI0006 after waiting for the dead rank."""
    lines = [
        p.glog(
            "[ERROR] DEVICE",
            tid,
            clock.fmt(when_us),
            RUN_GRAPH_SRC,
            "RunGraph] run task error!",
        ),
        p.glog(
            "[ERROR] DEVICE",
            tid,
            clock.fmt(when_us + 87),
            "mindspore/ccsrc/plugin/device/ascend/hal/hardware/ascend_utils.cc:35",
            "ReportErrorMessage] Ascend error occurred, error message:",
        ),
        EI0006,
        EI0006_SOLUTION,
        "",
        *_train_frames(),
        "RuntimeError: Preprocess failed before run graph 1. "
        "The details refer to 'Ascend Error Message'.",
        "",
        SEP,
        "- Ascend Error Message:",
        SEP,
        EI0006,
        EI0006_SOLUTION,
        "",
        '(Please search "Ascend Error Message" at https://www.mindspore.cn '
        "for error code description)",
        "",
        SEP,
        "- Framework Error Message: (For framework developers)",
        SEP,
        "Distribute Task Failed,",
        "error msg: davinci_model : load task fail, return ret: 1343225860",
        "",
        SEP,
        "- C++ Call Stack: (For framework developers)",
        SEP,
        RUN_GRAPH_SRC.replace(":195", ":195 RunGraph"),
        "",
    ]
    return "\n".join(lines) + "\n"


# -- scheduler.log ---------------------------------------------------------------------------------


def shift_lines(lines: list[TLine], delta_us: int) -> list[TLine]:
    """The same lines delta_us later (whole seconds keep the sub-second digits)."""
    clock = Clock()
    return [
        replace(ln, ts_us=_ts(ln) + delta_us, ts_text=clock.fmt(_ts(ln) + delta_us))
        if ln.is_glog
        else ln
        for ln in lines
    ]


REGISTERED = "ProcessRegister] The new node:"
CLUSTER_CREATED = "This log means the cluster is successfully created"


def write_scheduler(out: Path, wl: Workload) -> int:
    """scheduler.log: the real one, with every rank registering and the fault rank timing out.

    The source run's own scheduler.log if it has the lines this needs, else the fixture's; at
    GLOG_v=2 only its WARNING-and-above lines.
    """
    path = Path(wl.source) / "scheduler.log"
    lines = read_lines(path) if path.is_file() else []
    if not all(any(m in ln.tail for ln in lines) for m in (REGISTERED, CLUSTER_CREATED)):
        # e.g. a GLOG_v=2 source (no INFO line): the fixture's, moved to the workers' time
        lines = read_lines(SOURCE_DIR / "scheduler.log")
        first = next(_ts(ln) for ln in lines if ln.is_glog) // 1_000_000
        lines = shift_lines(lines, (wl.base_sec - first) * 1_000_000)
    p = Persona(rank=-1, world=wl.ranks, pid=99_000 + wl.seed % 1000, tid_shift=0)
    v = wl.glog_v
    clock = Clock()
    first_reg = _index(lines, REGISTERED)
    last_reg = max(i for i, ln in enumerate(lines) if REGISTERED in ln.tail)
    finalize = _index(lines, CLUSTER_CREATED)
    n = wl.ranks
    subs = [
        (re.compile(r"current alive node num: \(0/\d+\)"), f"current alive node num: (0/{n})"),
        (
            re.compile(r"Cluster currently has \d+ alive nodes"),
            f"Cluster currently has {n} alive nodes",
        ),
    ]

    text = [render_verbatim(at_level(lines[:first_reg], v), p, subs)]
    text.append(registrations(lines, first_reg, last_reg, p, wl.ranks, wl.seed, clock))
    text.append(render_verbatim(at_level(lines[last_reg + 1 : finalize + 1], v), p, subs))
    main_tid, meta_tid = lines[finalize].tid, lines[first_reg].tid
    heartbeat_src = "mindspore/ccsrc/cluster/topology/meta_server_node.cc:91"
    died = wl.fault_us + int(wl.node_timeout_s * 1e6)
    t = _ts(lines[finalize]) + 5_000_000
    while t < died:
        text.append(
            p.glog(
                "[WARNING] DISTRIBUTED",
                main_tid,
                clock.fmt(t),
                heartbeat_src,
                f"Finalize] Cluster currently has {n} alive nodes.",
            )
            + "\n"
        )
        t += 5_000_000
    text.append(scheduler_tail(p, wl.fault_rank, main_tid, meta_tid, died, clock))
    data = "".join(text).encode("utf-8")
    out.mkdir(parents=True, exist_ok=True)
    (out / "scheduler.log").write_bytes(data)
    return len(data)


def registrations(
    lines: list[TLine], first: int, last: int, p: Persona, ranks: int, seed: int, clock: Clock
) -> str:
    """Every rank registers, in a seeded arrival order, between the template's first and last."""
    t0, t1 = _ts(lines[first]), _ts(lines[last])
    order = list(range(ranks))
    random.Random(seed).shuffle(order)
    src = "mindspore/ccsrc/cluster/topology/meta_server_node.cc"
    tid = lines[first].tid
    out = []
    for k, rank in enumerate(order, 1):
        when = t0 + (t1 - t0) * (k - 1) // max(1, ranks - 1)
        out.append(
            p.glog(
                "[WARNING] DISTRIBUTED",
                tid,
                clock.fmt(when),
                f"{src}:254",
                f"ProcessRegister] The new node: {rank}(role: MS_WORKER), rank id: {rank}, "
                f"device id: {rank % DEVICES_PER_NODE}, hostname: vm, ip: 127.0.0.1 "
                "is registered successfully. "
                f"Currently registered node number: {k}, expected node number: {ranks}",
            )
        )
        if k == 1:
            out.append(
                p.glog(
                    "[WARNING] DISTRIBUTED",
                    tid,
                    clock.fmt(when),
                    f"{src}:721",
                    "ReassignNodeRank] Rank ids are already set by numeric node ids. "
                    "No need to reassign them.",
                )
            )
    return "\n".join(out) + "\n"


def scheduler_tail(
    p: Persona, fault_rank: int, main_tid: str, tid: str, died_us: int, clock: Clock
) -> str:
    """The scheduler's real reaction to a dead node (fixture cpu_dp2_oom_alloc_failed)."""
    f = fault_rank
    src = "mindspore/ccsrc/cluster/topology/meta_server_node.cc"
    total = (
        f"The total number of timed out node is 1. Timed out node list is: [const vector]{{{f}}}, "
        f"worker {f} is the first one timed out, please check its log."
    )
    lines = [
        p.glog(
            "[ERROR] DISTRIBUTED",
            tid,
            clock.fmt(died_us),
            f"{src}:548",
            f"UpdateTopoState] The node: {f} is timed out. It may exit with exception, "
            "please check this node's log.",
        ),
        p.glog(
            "[CRITICAL] DISTRIBUTED",
            tid,
            clock.fmt(died_us + 396),
            f"{src}:554",
            f"UpdateTopoState] {total}",
        ),
        p.glog(
            "[ERROR] DISTRIBUTED",
            main_tid,
            clock.fmt(died_us + GIVE_UP_AFTER_US),
            f"{src}:95",
            "Finalize] There are 1 abnormal compute graph nodes.",
        ),
        "Traceback (most recent call last):",
        f'  File "{SCRIPT}", line 26, in <module>',
        "    init()",
        f'  File "{SITE}/communication/management.py", line 210, in init',
        "    init_cluster()",
        f"RuntimeError: {total}",
        "",
        SEP,
        "- C++ Call Stack: (For framework developers)",
        SEP,
        f"{src}:554 UpdateTopoState",
        "",
    ]
    return "\n".join(lines) + "\n"


# -- the workload: how many repetitions, where the last one stops, when the fault strikes ------


CHUNK = 8 * MIB
"""Text built before each write: few system calls, bounded memory per writer."""


@dataclass(frozen=True)
class Workload:
    """What every rank agrees on: the cluster, the sources, the repetitions, the fault."""

    ranks: int
    mb: float
    fault_rank: int
    seed: int
    glog_v: int
    nodes: int
    source: str
    oom_source: str
    oom_form: str
    hccl_timeout_s: float
    reps: int
    """Whole repetitions of each rank's stream before the last, cut one."""
    cut: int
    """The last repetition stops after this cut point (cut_points) of its source."""
    period_s: int
    """Repetition k is k * period_s seconds after repetition 0 (the real times)."""
    base_sec: int
    fault_us: int
    """When the fault rank's allocation fails."""
    node_timeout_s: float = 31.0
    """The scheduler notices a dead node this long after it died (MS_NODE_TIMEOUT 30 s)."""

    @property
    def gives_up_us(self) -> int:
        """When the scheduler gives up on the dead rank and exits: msrun then stops every
        worker still running (no line of theirs comes after it)."""
        return self.fault_us + int(self.node_timeout_s * 1e6) + GIVE_UP_AFTER_US

    @property
    def per_node(self) -> int:
        return self.ranks // self.nodes


def cut_points(src: Source) -> list[int]:
    """Where a repetition may stop: after a LossMonitor line (else before the exit section)."""
    return [i + 1 for i in src.losses] or [src.exit_from]


def cut_of(src: Source, cut: int) -> int:
    points = cut_points(src)
    return points[min(cut, len(points) - 1)]


def plan(
    ranks: int,
    mb: float,
    fault_rank: int,
    seed: int,
    glog_v: int = 1,
    nodes: int = 1,
    source: Path | str = SOURCE_DIR,
    oom_source: Path | str = OOM_SOURCE,
    oom_form: str = "cpu",
    hccl_timeout_s: float = DEFAULT_HCCL_TIMEOUT_S,
) -> Workload:
    """Choose the repetitions and the cut so that each worker file comes out close to mb MiB."""
    sources = read_sources(str(source), glog_v)
    base_sec = min(s.first_us for s in sources) // 1_000_000
    end_sec = (max(s.last_us for s in sources) + MAX_SKEW_US) // 1_000_000
    period_s = end_sec - base_sec + 2  # at least a second between repetitions
    src = sources[0]
    p = persona(0, ranks, seed)
    stream = RankStream(src, p, 0, base_sec)
    sample = stream.render(1, period_s, src.epochs)
    full = len(sample)
    upto_bytes = [0]
    for line in sample.split(b"\n")[:-1]:
        upto_bytes.append(upto_bytes[-1] + len(line) + 1)
    clock, far = Clock(), (base_sec + 10**6) * 1_000_000
    oom = oom_section(str(oom_source), glog_v)
    tid = next(ln.tid for ln in oom if ln.is_glog)
    fixed = len(hccl_tail(p, tid, far, clock)) + len(
        render_shifted(list(src.lines[src.exit_from :]), p, far, clock)
    )
    target = max(1.0, mb * MIB - fixed)
    best: tuple[float, int, int] | None = None
    for c, upto in enumerate(cut_points(src)):
        part = upto_bytes[upto]
        reps = max(0, round((target - part) / full))
        miss = abs(reps * full + part - target)
        if best is None or miss <= best[0]:
            best = (miss, reps, c)
    assert best is not None
    _, reps, cut = best
    last_us = max(
        max(monotonic_times(s.lines[: cut_of(s, cut)]), default=s.first_us) for s in sources
    )
    fault_us = (
        last_us + MAX_SKEW_US + 1000 + reps * period_s * 1_000_000 + FAULT_DELAY_US
    )  # 1 ms: Python-logger lines round up to the millisecond
    return Workload(
        ranks=ranks,
        mb=mb,
        fault_rank=fault_rank,
        seed=seed,
        glog_v=glog_v,
        nodes=nodes,
        source=str(source),
        oom_source=str(oom_source),
        oom_form=oom_form,
        hccl_timeout_s=hccl_timeout_s,
        reps=reps,
        cut=cut,
        period_s=period_s,
        base_sec=base_sec,
        fault_us=fault_us,
    )


def log_dir(out: Path, wl: Workload, node: int) -> Path:
    """msrun_log/ of one node: OUT itself for one node, else OUT/node<i>/msrun_log."""
    return out if wl.nodes == 1 else out / f"node{node}" / "msrun_log"


def write_worker(out: Path, wl: Workload, rank: int) -> int:
    """Write worker_<rank>.log; returns its size in bytes."""
    sources = read_sources(wl.source, wl.glog_v)
    src = sources[rank % len(sources)]
    p = persona(rank, wl.ranks, wl.seed)
    skew = random.Random(wl.seed * 31 + rank).randrange(MAX_SKEW_US)
    stream = RankStream(src, p, skew, wl.base_sec)
    oom = oom_section(wl.oom_source, wl.glog_v)
    tid = next(ln.tid for ln in oom if ln.is_glog)  # the thread that ran the kernel
    clock = Clock()
    directory = log_dir(out, wl, rank // wl.per_node)
    directory.mkdir(parents=True, exist_ok=True)
    size = 0
    with (directory / f"worker_{rank}.log").open("wb") as fh:
        parts: list[bytes] = []
        pending = 0

        def add(data: bytes | str) -> None:
            nonlocal pending, size
            if isinstance(data, str):
                data = data.encode("utf-8")
            parts.append(data)
            pending += len(data)
            if pending >= CHUNK:
                fh.write(b"".join(parts))
                size += pending
                parts.clear()
                pending = 0

        for k in range(wl.reps):
            add(stream.render(k, wl.period_s, src.epochs))
        add(stream.render(wl.reps, wl.period_s, src.epochs, cut_of(src, wl.cut)))
        if rank == wl.fault_rank:
            add(oom_tail(p, oom, wl.fault_us, wl.oom_form, clock))
            exit_at = wl.fault_us + 3_100_000  # the fixture's workers exit 3 s after the OOM
        else:
            jitter = random.Random(wl.seed * 131 + rank).randrange(1_500_000)
            hang_end = wl.fault_us + int(wl.hccl_timeout_s * 1e6) + jitter
            if hang_end >= wl.gives_up_us:  # msrun stopped it first, hung: its log ends here
                fh.write(b"".join(parts))
                return size + pending
            add(hccl_tail(p, tid, hang_end, clock))
            exit_at = hang_end + 40_000
        if src.exit_from < len(src.lines):
            add(render_shifted(list(src.lines[src.exit_from :]), p, exit_at, clock))
        fh.write(b"".join(parts))
        size += pending
    return size


def _others(wl: Workload) -> str:
    """What the other ranks' logs end in, for the summary."""
    if wl.fault_us + int(wl.hccl_timeout_s * 1e6) < wl.gives_up_us:
        return "EI0006 on the others"
    return "the others stopped by msrun in the hang (the scheduler gave up before EI0006)"


def _job(args: tuple[str, Workload, int]) -> tuple[int, int]:
    out, wl, rank = args
    return rank, write_worker(Path(out), wl, rank)


def generate(out: Path, wl: Workload, jobs: int | None = None) -> dict[str, int]:
    """Write every file of the run under out; returns relative path -> bytes."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("worker_*.log"), *out.glob("node*/msrun_log/*.log")]:
        stale.unlink()
    read_sources(wl.source, wl.glog_v)  # parsed once, before the writers fork
    oom_section(wl.oom_source, wl.glog_v)
    sched = log_dir(out, wl, 0)
    sizes = {str((sched / "scheduler.log").relative_to(out)): write_scheduler(sched, wl)}
    work = [(str(out), wl, rank) for rank in range(wl.ranks)]
    jobs = max(1, min(jobs or os.cpu_count() or 1, wl.ranks))
    if jobs == 1:
        results: Iterable[tuple[int, int]] = map(_job, work)
        sizes.update({_name(out, wl, r): n for r, n in results})
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            sizes.update(
                {_name(out, wl, r): n for r, n in pool.imap_unordered(_job, work, chunksize=1)}
            )
    return sizes


def _name(out: Path, wl: Workload, rank: int) -> str:
    return str((log_dir(out, wl, rank // wl.per_node) / f"worker_{rank}.log").relative_to(out))


def default_fault_rank(ranks: int) -> int:
    """Rank 37 of 64 by default; a rank at the same relative place for other sizes."""
    return 37 if ranks > 37 else int(ranks * 0.58)


# -- one step at a time, for bench_live.py -------------------------------------------------


@dataclass(frozen=True)
class WorkerTemplate:
    """The real worker_0.log cut into the pieces a long run is made of."""

    startup: list[TLine]
    """Process start, cluster build, compile and the first step's INFO lines."""
    step: list[TLine]
    """INFO lines of one steady-state step (between two LossMonitor lines)."""
    epoch_end: list[TLine]
    """Lines between an epoch's last step and the next step: dataset end, TimeMonitor."""
    exit: list[TLine]
    """Interpreter shutdown (atexit) INFO lines."""
    fetch_index: int
    """Index in `step` after which the step's compute happens (the longest gap)."""
    cycle_us: int
    """Template time from one step's first line to the next step's first line."""
    compile_start_us: int
    actor_tid: str
    """The thread that runs kernels (it logs allocation failures)."""


@lru_cache(maxsize=1)
def worker_template() -> WorkerTemplate:
    """Cut worker_0.log at its LossMonitor lines; cached so forked writers parse it once."""
    lines = read_template("worker_0.log")
    loss1 = _index(lines, "epoch: 1 step: 1, loss is")
    loss2 = _index(lines, "epoch: 1 step: 2, loss is")
    last1 = _index(lines, "epoch: 2 step: 1, loss is") - 1
    while "loss is" not in lines[last1].tail:
        last1 -= 1
    step = lines[loss1 + 1 : loss2]
    first_of_step = step[0].tail
    nxt = last1 + 1
    while lines[nxt].tail != first_of_step:
        nxt += 1
    fetch = max(range(len(step) - 1), key=lambda i: _ts(step[i + 1]) - _ts(step[i]))
    exit_start = _index(lines, "operator()] Start register...")
    actor = next(ln.tid for ln in lines[loss1 - 40 : loss1] if "FetchData]" in ln.tail)
    return WorkerTemplate(
        startup=lines[:loss1],
        step=step,
        epoch_end=lines[last1 + 1 : nxt],
        exit=lines[exit_start:],
        fetch_index=fetch,
        cycle_us=_ts(lines[loss2 + 1]) - _ts(step[0]),
        compile_start_us=_ts(lines[_index(lines, "Start compiling, phase")]),
        actor_tid=actor,
    )


# -- the steady-state step -----------------------------------------------------------------

COUNTERS = re.compile(r"total running count: \d+|execution count: \d+, execution time: [0-9.]+ ms")


@dataclass
class StepWriter:
    """One rank's step block as a single %-format string: building a step is one `%`."""

    fmt: str
    slots: list[tuple[str, int]]
    """(kind, line index) per format argument: 'ts', 'count' or 'exec'."""
    offsets: list[int]
    fetch_index: int
    clock: Clock = field(default_factory=Clock)

    @classmethod
    def build(cls, t: WorkerTemplate, p: Persona) -> StepWriter:
        parts: list[str] = []
        slots: list[tuple[str, int]] = []
        base = _ts(t.step[0])
        for i, line in enumerate(t.step):
            parts.append(p.head(line).replace("%", "%%") + "%s")
            slots.append(("ts", i))
            tail = line.tail.replace("%", "%%")
            for m in COUNTERS.finditer(tail):
                slots.extend(
                    [("count", i)] if m[0].startswith("total") else [("count", i), ("exec", i)]
                )
            tail = re.sub(r"total running count: \d+", "total running count: %d", tail)
            tail = re.sub(
                r"execution count: \d+, execution time: [0-9.]+ ms",
                "execution count: %d, execution time: %s ms",
                tail,
            )
            parts.append(tail + "\n")
        parts.append("epoch: %d step: %d, loss is %s\n")
        offsets = [_ts(line) - base for line in t.step]
        return cls("".join(parts), slots, offsets, t.fetch_index)

    def render(
        self, start_us: int, stretch_us: int, count: int, epoch: int, step: int, loss: str
    ) -> str:
        """One step: INFO lines from start_us, compute stretched by stretch_us, then the loss."""
        clock, offsets, fetch = self.clock, self.offsets, self.fetch_index
        exec_ms = f"{(offsets[fetch + 1] - offsets[fetch] + stretch_us) / 1000:.6g}"
        args: list[object] = []
        for kind, i in self.slots:
            if kind == "ts":
                args.append(clock.fmt(start_us + offsets[i] + (stretch_us if i > fetch else 0)))
            elif kind == "count":
                args.append(count)
            else:
                args.append(exec_ms)
        args.extend((epoch, step, loss))
        return self.fmt % tuple(args)

    def end_us(self, start_us: int, stretch_us: int) -> int:
        """Time of the step's last INFO line."""
        return start_us + self.offsets[-1] + stretch_us

    def fetch_us(self, start_us: int) -> int:
        """Time of the line after which the step computes (where a fault strikes)."""
        return start_us + self.offsets[self.fetch_index]

    def partial(self, start_us: int, stretch_us: int, count: int) -> str:
        """The step's lines up to its compute: what a rank logs before it fails or hangs."""
        full = self.render(start_us, stretch_us, count, 0, 0, "0")
        lines = full.split("\n")
        return "\n".join(lines[: self.fetch_index + 1]) + "\n"


def float32_repr(x: float) -> str:
    """A loss as LossMonitor prints it: a float32 value shown as a Python float."""
    return repr(struct.unpack("f", struct.pack("f", x))[0])


def loss_curve(seed: int, rank: int) -> Callable[[int], str]:
    """Per-rank losses: a decaying curve with data-parallel noise, deterministic."""
    rng = random.Random(seed * 7_919 + rank)

    def loss(step: int) -> str:
        value = 0.35 + 6.5 * math.exp(-step / 900.0) + abs(rng.gauss(0.0, 0.12))
        return float32_repr(value)

    return loss


def epoch_end(
    t: WorkerTemplate, p: Persona, clock: Clock, last_us: int, epoch_start: int, spe: int
) -> str:
    """Dataset end and the TimeMonitor line for the epoch that ended at last_us."""
    epoch_ms = (last_us - epoch_start) / 1000
    out = []
    for line in t.epoch_end:
        if line.is_glog:
            out.append(f"{p.head(line)}{clock.fmt(last_us + 250)}{line.tail}")
        elif line.tail.startswith("Train epoch time:"):
            out.append(
                f"Train epoch time: {epoch_ms:.3f} ms, per step time: {epoch_ms / spe:.3f} ms"
            )
        else:
            out.append(line.tail)
    return "\n".join(out) + "\n"


# -- command line ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out",
        type=Path,
        help="directory to write: the msrun_log/ itself, or with --nodes N "
        "the directory of node<i>/msrun_log/",
    )
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=16.0, help="MiB per worker log")
    parser.add_argument("--fault-rank", type=int, default=None, help="default: 37, or ranks*0.58")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--glog-v",
        type=int,
        choices=(1, 2),
        default=1,
        help="1: every line of the real streams; 2: WARNING and above plus LossMonitor/TimeMonitor",
    )
    parser.add_argument("--nodes", type=int, default=1, help="node<i>/msrun_log directories")
    parser.add_argument(
        "--source",
        type=Path,
        default=SOURCE_DIR,
        help="a real GLOG_v=1 run's msrun_log/ whose worker_N.log streams are repeated",
    )
    parser.add_argument(
        "--oom-source",
        type=Path,
        default=OOM_SOURCE,
        help=f"worker log whose lines from `{OOM_START}` on are the fault",
    )
    parser.add_argument(
        "--oom-form",
        choices=("cpu", "ascend"),
        default="cpu",
        help="cpu: the real lines as logged; ascend: `Device(id:N) memory isn't enough ...`",
    )
    parser.add_argument(
        "--hccl-timeout-s",
        type=float,
        default=DEFAULT_HCCL_TIMEOUT_S,
        help="how long the other ranks wait before EI0006 (HCCL_CONNECT_TIMEOUT); from about 32 s "
        "after the fault the scheduler has given up and msrun stops them before it",
    )
    parser.add_argument("--jobs", type=int, default=None, help="writer processes (default: CPUs)")
    args = parser.parse_args(argv)
    if args.ranks < 2:
        parser.error("--ranks must be at least 2")
    if args.nodes < 1 or args.ranks % args.nodes:
        parser.error("--nodes must divide --ranks")
    fault = args.fault_rank if args.fault_rank is not None else default_fault_rank(args.ranks)
    if not 0 <= fault < args.ranks:
        parser.error(f"--fault-rank must be in 0..{args.ranks - 1}")
    began = time.perf_counter()
    wl = plan(
        args.ranks,
        args.mb,
        fault,
        args.seed,
        glog_v=args.glog_v,
        nodes=args.nodes,
        source=args.source,
        oom_source=args.oom_source,
        oom_form=args.oom_form,
        hccl_timeout_s=args.hccl_timeout_s,
    )
    sizes = generate(args.out, wl, args.jobs)
    total = sum(sizes.values())
    print(
        f"wrote {len(sizes)} files, {total / MIB:.1f} MiB ({total} bytes) to {args.out} in "
        f"{time.perf_counter() - began:.1f} s: {wl.ranks} ranks on {wl.nodes} node(s), "
        f"GLOG_v={wl.glog_v}, each rank's real stream {wl.reps} times and once up to LossMonitor "
        f"line {wl.cut + 1}, OOM on rank {wl.fault_rank} ({wl.oom_form}), {_others(wl)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
