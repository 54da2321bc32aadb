"""Generate a large, realistic msrun_log/ directory for benchmarking `msrunwatch triage`.

Every line is cut from the real GLOG_v=1 fixture (fixtures/cpu_dp2_success_glog1): each
worker log is that run's start-up section made rank-specific (pid, thread ids, `This node N
rank id: N`, device ids, world size), then the INFO lines one training step really produces,
repeated with fresh monotonic timestamps, a LossMonitor line per step and a TimeMonitor line
per epoch, until the file is about --mb MiB. Near the end the fault rank runs out of device
memory (the real OOM texts of fixtures/cpu_dp2_oom_alloc_failed, in their Ascend form); the
other ranks hang in the same step and, HCCL_CONNECT_TIMEOUT later, die of HCCL EI0006
(texts from MindSpore's CANN error-case docs). scheduler.log registers every rank and times
the fault rank out. Output is a pure function of the arguments (--seed).

    python bench/gen_msrun_log.py OUT_DIR --ranks 64 --mb 16 [--fault-rank 37] [--seed 1]
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = REPO / "fixtures" / "cpu_dp2_success_glog1" / "msrun_log"
MIB = 1 << 20
CHUNK = 8 * MIB
"""Bytes of text built before each write: few system calls, bounded memory per worker."""
DEVICES_PER_NODE = 8
DEFAULT_STEPS_PER_EPOCH = 500
DEFAULT_STEP_MS = 250.0
DEFAULT_HCCL_TIMEOUT_S = 600.0
SCRIPT = "/home/user/jobs/msrunwatch_bench/train_dense.py"
SITE = "/home/user/venv/lib/python3.11/site-packages/mindspore"

# -- template parsing --------------------------------------------------------------------

HEADER = re.compile(
    r"^(?P<lm>\[[A-Z]+\] [A-Z_]+)\((?P<pid>\d+)(?P<sep>[,:])(?P<tid>[0-9a-f]+),(?P<proc>[^)]*)\):"
    r"(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{1,3}\.\d{0,3})(?P<tail> .*)$"
)


@dataclass(frozen=True, slots=True)
class TLine:
    """One template line: a GLOG line split around its pid, thread id and timestamp, or plain."""

    tail: str
    """Text after the timestamp (GLOG lines) or the whole line (plain lines)."""
    level_module: str = ""
    tid: str = ""
    proc: str = ""
    python: bool = False
    """Python-logger line: `pid:decimal-tid,MainProcess` instead of `pid,hex-tid,python`."""
    ts_text: str = ""
    ts_us: int | None = None

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
    )


def read_template(name: str) -> list[TLine]:
    """A file of the real GLOG_v=1 run, parsed line by line."""
    text = (TEMPLATE_DIR / name).read_text(encoding="utf-8")
    return [parse_line(line) for line in text.splitlines()]


def _index(lines: list[TLine], needle: str) -> int:
    """The first template line containing needle: cut points are found, never hard-coded."""
    for i in range(len(lines)):
        if needle in lines[i].tail:
            return i
    raise ValueError(f"template line not found: {needle!r}")


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


def _ts(line: TLine) -> int:
    assert line.ts_us is not None, line.tail
    return line.ts_us


# -- rendering ---------------------------------------------------------------------------


class Clock:
    """Formats microsecond times the way GLOG does, caching the per-second prefix."""

    def __init__(self) -> None:
        self._sec = -1
        self._prefix = ""

    def fmt(self, us: int) -> str:
        sec, rem = divmod(us, 1_000_000)
        if sec != self._sec:
            self._sec = sec
            self._prefix = time.strftime("%Y-%m-%d-%H:%M:%S", time.gmtime(sec))
        ms, micro = divmod(rem, 1000)
        return f"{self._prefix}.{ms:03d}.{micro:03d}"


@dataclass(frozen=True)
class Persona:
    """What makes one process's lines its own: rank, pid, thread ids."""

    rank: int
    world: int
    pid: int
    tid_shift: int
    """Added to every template thread id: ASLR moves all of a process's stacks together."""

    @property
    def device(self) -> int:
        return self.rank % DEVICES_PER_NODE

    def tid(self, template_tid: str) -> str:
        return f"{int(template_tid, 16) + self.tid_shift:012x}"

    def head(self, line: TLine) -> str:
        """The line's `[LEVEL] MODULE(pid,tid,proc):` prefix for this process."""
        if line.python:
            return f"{line.level_module}({self.pid}:{int(line.tid) + self.tid_shift},{line.proc}):"
        return f"{line.level_module}({self.pid},{self.tid(line.tid)},{line.proc}):"

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


def rank_substitutions(p: Persona) -> list[tuple[re.Pattern[str], str]]:
    """Rewrites that make the rank-0 start-up section read as rank p.rank's."""
    r, n, d = p.rank, p.world, p.device
    group = ", ".join(str(i) for i in range(n))
    pairs = [
        (r"(DEVICE_ID to: )\d+", rf"\g<1>{d}"),
        (r"(The compute graph node: )\d+( has been registered)", rf"\g<1>{r}\g<2>"),
        (r"This node \d+ rank id: \d+", f"This node {r} rank id: {r}"),
        (r"(MCCL_COLLECTIVE_RANK_MS_WORKER_)0( has been registered)", rf"\g<1>{r}\g<2>"),
        (r"(The cpu collective rank )\d+", rf"\g<1>{r}"),
        (
            r"Global rank id: \d+, global rank size: \d+",
            f"Global rank id: {r}, global rank size: {n}",
        ),
        (r"(Host name for rank )\d+", rf"\g<1>{r}"),
        (r"(local rank id assigned for this process is )\d+", rf"\g<1>{d}"),
        (r"('DEVICE_ID' assigned for this process is: )\d+", rf"\g<1>{d}"),
        (r"(Refresh device id to )\d+", rf"\g<1>{d}"),
        (r"(local rank id \[)\d+", rf"\g<1>{d}"),
        (r"(Number of role MS_WORKER is )\d+", rf"\g<1>{n}"),
        (r"\[const vector\]\{0, 1\}", f"[const vector]{{{group}}}"),
        (
            r"^\[train_dense\] rank=\d+ size=\d+ pid=\d+",
            f"[train_dense] rank={r} size={n} pid={p.pid}",
        ),
        (r"^device_id: \d+$", f"device_id: {d}"),
        (r"^num_devices: \d+$", f"num_devices: {n}"),
        (r"(Create tcp client for role: 1, rank: )\d+", rf"\g<1>{(r + 1) % n}"),
    ]
    return [(re.compile(a), b) for a, b in pairs]


def render_verbatim(
    lines: Iterable[TLine], p: Persona, subs: list[tuple[re.Pattern[str], str]]
) -> str:
    """Lines with their original timestamps, rewritten for persona p."""
    out = []
    for line in lines:
        tail = line.tail
        for pattern, repl in subs:
            if pattern.search(tail):
                tail = pattern.sub(repl, tail)
        out.append(f"{p.head(line)}{line.ts_text}{tail}" if line.is_glog else tail)
    return "\n".join(out) + "\n"


def render_shifted(lines: list[TLine], p: Persona, start_us: int, clock: Clock) -> str:
    """Lines re-timed so the first starts at start_us; gaps as in the template, never backwards."""
    base = next(_ts(ln) for ln in lines if ln.is_glog)
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


# -- the run plan ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What every rank agrees on: the cluster, the fault, the step count and step times."""

    ranks: int
    mb: float
    fault_rank: int
    seed: int
    steps: int
    """Global step in which the fault rank fails; every rank logs steps 1..steps-1 in full."""
    steps_per_epoch: int
    step_ms: float
    hccl_timeout_s: float
    node_timeout_s: float = 31.0
    """The scheduler notices a dead node this long after it died (MS_NODE_TIMEOUT 30 s)."""

    def timeline(self, t: WorkerTemplate) -> list[tuple[int, int]]:
        """(start, extra compute) of steps 2..steps, in µs; the same on every rank (they sync)."""
        rng = random.Random(self.seed)
        extra = max(0.0, self.step_ms * 1000 - t.cycle_us)
        start, out = _ts(t.step[0]), []
        for _ in range(2, self.steps + 1):
            stretch = int(extra * max(0.5, rng.gauss(1.0, 0.04)))
            out.append((start, stretch))
            start += t.cycle_us + stretch
        return out


def loss_curve(seed: int, rank: int) -> Callable[[int], str]:
    """Per-rank losses: a decaying curve with data-parallel noise, deterministic."""
    rng = random.Random(seed * 7_919 + rank)

    def loss(step: int) -> str:
        value = 0.35 + 6.5 * math.exp(-step / 900.0) + abs(rng.gauss(0.0, 0.12))
        return float32_repr(value)

    return loss


# -- one worker file ---------------------------------------------------------------------------

MAX_SKEW_US = 400
"""Ranks log the same step up to this far apart."""
FAULT_DELAY_US = 3_000
OOM_KERNEL = "Default/network-WithLossCell/_backbone-DenseNet/fc1-Dense/MatMul-op123"
OOM_SIZE = 2147483648
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


def oom_tail(p: Persona, t: WorkerTemplate, when_us: int, clock: Clock) -> str:
    """The fault: the real 2.10.0 OOM lines (Ascend wording), then the RuntimeError."""
    detail = (
        f"Device(id:{p.device}) memory isn't enough and alloc failed, kernel name: {OOM_KERNEL}, "
        f"alloc size: {OOM_SIZE}B."
    )
    lines = [
        p.glog(
            "[WARNING] ME",
            t.actor_tid,
            clock.fmt(when_us),
            "mindspore/ccsrc/runtime/hardware_abstract/device_context/device_context.cc:113",
            f"AllocateMemory] Allocate memory failed for size: {OOM_SIZE}",
        ),
        p.glog(
            "[ERROR] RUNTIME_FRAMEWORK",
            t.actor_tid,
            clock.fmt(when_us + 51),
            "mindspore/ccsrc/backend/ms_backend/runtime/actors/base/memory_manager_actor.cc:515",
            f"SetOpContextMemoryAllocFail] #umsg#Memory not enough:#umsg#{detail}",
        ),
        *_train_frames(),
        "RuntimeError: ",
        SEP,
        "- Memory not enough:",
        SEP,
        detail,
        "",
        SEP,
        "- C++ Call Stack: (For framework developers)",
        SEP,
        "mindspore/ccsrc/backend/ms_backend/runtime/graph_scheduler/base/"
        "graph_scheduler.cc:1168 Run",
        "",
    ]
    return "\n".join(lines) + "\n"


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


def hccl_tail(p: Persona, t: WorkerTemplate, when_us: int, clock: Clock) -> str:
    """A victim: the graph run fails with EI0006 after waiting for the dead rank."""
    lines = [
        p.glog(
            "[ERROR] DEVICE",
            t.actor_tid,
            clock.fmt(when_us),
            RUN_GRAPH_SRC,
            "RunGraph] run task error!",
        ),
        p.glog(
            "[ERROR] DEVICE",
            t.actor_tid,
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


def fault_time_us(plan: Plan, t: WorkerTemplate) -> int:
    """When the fault rank's allocation fails: 3 ms into the last step's compute."""
    last_start, _ = plan.timeline(t)[-1]
    return last_start + _ts(t.step[t.fetch_index]) - _ts(t.step[0]) + FAULT_DELAY_US + MAX_SKEW_US


class WorkerFile:
    """Writes one worker_N.log in large chunks."""

    def __init__(self, path: Path) -> None:
        self._fh = path.open("wb")
        self._parts: list[str] = []
        self._pending = 0
        self.size = 0

    def add(self, text: str) -> None:
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= CHUNK:
            self.flush()

    def flush(self) -> None:
        data = "".join(self._parts).encode("utf-8")
        self._fh.write(data)
        self.size += len(data)
        self._parts.clear()
        self._pending = 0

    def close(self) -> None:
        self.flush()
        self._fh.close()


def write_worker(out: Path, plan: Plan, rank: int, fault_us: int) -> int:
    """Write worker_<rank>.log; returns its size in bytes."""
    t = worker_template()
    p = persona(rank, plan.ranks, plan.seed)
    clock = Clock()
    steps = StepWriter.build(t, p)
    loss = loss_curve(plan.seed, rank)
    skew = random.Random(plan.seed * 31 + rank).randrange(MAX_SKEW_US)
    spe = plan.steps_per_epoch

    f = WorkerFile(out / f"worker_{rank}.log")
    f.add(render_verbatim(t.startup, p, rank_substitutions(p)))
    f.add(f"epoch: 1 step: 1, loss is {loss(1)}\n")
    epoch_start = t.compile_start_us
    last_end = next(_ts(ln) for ln in reversed(t.startup) if ln.is_glog)  # step 1's end
    timeline = plan.timeline(t)
    for g, (start, stretch) in enumerate(timeline[:-1], 2):
        epoch, step = divmod(g - 1, spe)
        if step == 0:
            f.add(epoch_end(t, p, clock, last_end, epoch_start, spe))
            epoch_start = start + skew
        f.add(steps.render(start + skew, stretch, g, epoch + 1, step + 1, loss(g)))
        last_end = steps.end_us(start + skew, stretch)
    start, stretch = timeline[-1]
    f.add(steps.partial(start + skew, stretch, plan.steps))
    if rank == plan.fault_rank:
        f.add(oom_tail(p, t, fault_us, clock))
        exit_at = fault_us + 40_000
    else:
        jitter = random.Random(plan.seed * 131 + rank).randrange(1_500_000)
        hang_end = fault_us + int(plan.hccl_timeout_s * 1e6) + jitter
        f.add(hccl_tail(p, t, hang_end, clock))
        exit_at = hang_end + 40_000
    f.add(render_shifted(t.exit, p, exit_at, clock))
    f.close()
    return f.size


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


# -- scheduler.log ---------------------------------------------------------------------------------


def write_scheduler(out: Path, plan: Plan, fault_us: int) -> int:
    """scheduler.log: the real one, with every rank registering and the fault rank timing out."""
    lines = read_template("scheduler.log")
    p = Persona(rank=-1, world=plan.ranks, pid=99_000 + plan.seed % 1000, tid_shift=0)
    clock = Clock()
    first_reg = _index(lines, "ProcessRegister] The new node:")
    last_reg = max(i for i, ln in enumerate(lines) if "ProcessRegister] The new node:" in ln.tail)
    finalize = _index(lines, "This log means the cluster is successfully created")
    n = plan.ranks
    subs = [
        (re.compile(r"current alive node num: \(0/\d+\)"), f"current alive node num: (0/{n})"),
        (
            re.compile(r"Cluster currently has \d+ alive nodes"),
            f"Cluster currently has {n} alive nodes",
        ),
    ]

    text = [render_verbatim(lines[:first_reg], p, subs)]
    text.append(registrations(lines, first_reg, last_reg, p, plan, clock))
    text.append(render_verbatim(lines[last_reg + 1 : finalize + 1], p, subs))
    main_tid, meta_tid = lines[finalize].tid, lines[first_reg].tid
    heartbeat_src = "mindspore/ccsrc/cluster/topology/meta_server_node.cc:91"
    died = fault_us + int(plan.node_timeout_s * 1e6)
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
    text.append(scheduler_tail(p, plan, main_tid, meta_tid, died, clock))
    data = "".join(text).encode("utf-8")
    (out / "scheduler.log").write_bytes(data)
    return len(data)


def registrations(
    lines: list[TLine], first: int, last: int, p: Persona, plan: Plan, clock: Clock
) -> str:
    """Every rank registers, in a seeded arrival order, between the template's first and last."""
    t0, t1 = _ts(lines[first]), _ts(lines[last])
    order = list(range(plan.ranks))
    random.Random(plan.seed).shuffle(order)
    src = "mindspore/ccsrc/cluster/topology/meta_server_node.cc"
    tid = lines[first].tid
    out = []
    for k, rank in enumerate(order, 1):
        when = t0 + (t1 - t0) * (k - 1) // max(1, plan.ranks - 1)
        out.append(
            p.glog(
                "[WARNING] DISTRIBUTED",
                tid,
                clock.fmt(when),
                f"{src}:254",
                f"ProcessRegister] The new node: {rank}(role: MS_WORKER), rank id: {rank}, "
                f"device id: {rank % DEVICES_PER_NODE}, hostname: vm, ip: 127.0.0.1 "
                "is registered successfully. "
                f"Currently registered node number: {k}, expected node number: {plan.ranks}",
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
    p: Persona, plan: Plan, main_tid: str, tid: str, died_us: int, clock: Clock
) -> str:
    """The scheduler's real reaction to a dead node (fixture cpu_dp2_oom_alloc_failed, GLOG_v=1)."""
    f = plan.fault_rank
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
            clock.fmt(died_us + 1_490_000),
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


# -- planning and driving ------------------------------------------------------------------------


def plan_run(
    ranks: int,
    mb: float,
    fault_rank: int,
    seed: int,
    steps_per_epoch: int,
    step_ms: float,
    hccl_timeout_s: float,
) -> Plan:
    """Choose the step count so that each worker file comes out at about `mb` MiB."""
    t = worker_template()
    p = persona(0, ranks, seed)
    clock, far = Clock(), 10**15  # any time with as many digits as the real ones
    writer = StepWriter.build(t, p)
    tail = min(len(oom_tail(p, t, far, clock)), len(hccl_tail(p, t, far, clock)))
    fixed = tail + sum(
        len(text)
        for text in (
            render_verbatim(t.startup, p, rank_substitutions(p)),
            render_shifted(t.exit, p, far, clock),
            writer.partial(far, 0, 10_000),
        )
    )
    epoch_bytes = len(epoch_end(t, p, clock, far, far, steps_per_epoch)) / steps_per_epoch
    steps = 10_000
    for _ in range(2):  # step bytes depend (a little) on how many digits the counters have
        loss = loss_curve(seed, 0)
        counts = [2 + (steps - 2) * i // 199 for i in range(200)]
        sample = [len(writer.render(far, 0, g, 1, g, loss(g))) for g in counts]
        per_step = sum(sample) / len(sample) + epoch_bytes
        steps = max(3, math.ceil((mb * MIB - fixed) / per_step) + 2)  # step 1 is in the start-up
    return Plan(ranks, mb, fault_rank, seed, steps, steps_per_epoch, step_ms, hccl_timeout_s)


def _job(args: tuple[str, Plan, int, int]) -> tuple[int, int]:
    out, plan, rank, fault_us = args
    return rank, write_worker(Path(out), plan, rank, fault_us)


def generate(out: Path, plan: Plan, jobs: int | None = None) -> dict[str, int]:
    """Write every file of the run into out; returns file name -> bytes."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("worker_*.log"):
        stale.unlink()
    fault_us = fault_time_us(plan, worker_template())
    sizes = {"scheduler.log": write_scheduler(out, plan, fault_us)}
    work = [(str(out), plan, rank, fault_us) for rank in range(plan.ranks)]
    jobs = max(1, min(jobs or os.cpu_count() or 1, plan.ranks))
    if jobs == 1:
        results = map(_job, work)
        sizes.update({f"worker_{r}.log": n for r, n in results})
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            sizes.update({f"worker_{r}.log": n for r, n in pool.imap_unordered(_job, work)})
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write (the msrun_log/ itself)")
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=16.0, help="MiB per worker log")
    parser.add_argument("--fault-rank", type=int, default=None, help="default: 37, or ranks*0.58")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps-per-epoch", type=int, default=DEFAULT_STEPS_PER_EPOCH)
    parser.add_argument(
        "--step-ms", type=float, default=DEFAULT_STEP_MS, help="mean simulated step time"
    )
    parser.add_argument(
        "--hccl-timeout-s",
        type=float,
        default=DEFAULT_HCCL_TIMEOUT_S,
        help="how long the other ranks wait before EI0006 (HCCL_CONNECT_TIMEOUT)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="writer processes (default: CPUs)")
    args = parser.parse_args(argv)
    if args.ranks < 2:
        parser.error("--ranks must be at least 2")
    fault = args.fault_rank if args.fault_rank is not None else default_fault_rank(args.ranks)
    if not 0 <= fault < args.ranks:
        parser.error(f"--fault-rank must be in 0..{args.ranks - 1}")
    began = time.perf_counter()
    plan = plan_run(
        args.ranks,
        args.mb,
        fault,
        args.seed,
        args.steps_per_epoch,
        args.step_ms,
        args.hccl_timeout_s,
    )
    sizes = generate(args.out, plan, args.jobs)
    total = sum(sizes.values())
    print(
        f"wrote {len(sizes)} files, {total / MIB:.1f} MiB ({total} bytes) to {args.out} in "
        f"{time.perf_counter() - began:.1f} s: {plan.ranks} ranks x {plan.steps - 1} steps, "
        f"OOM on rank {plan.fault_rank}, EI0006 on the others",
        file=sys.stderr,
    )
    return 0


def default_fault_rank(ranks: int) -> int:
    """Rank 37 of 64 by default; a rank at the same relative place for other sizes."""
    return 37 if ranks > 37 else int(ranks * 0.58)


if __name__ == "__main__":
    sys.exit(main())
