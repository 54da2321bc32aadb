"""Time `msrunwatch watch --headless`: from a line appended to a worker log to its event.

    python bench/bench_live.py [--ranks 8,1024] [--rate 20000] [--seconds 30] [--probes 200]
                               [--poll] [--history-kb 512] [--msrunwatch PATH] [--keep]

For each rank count: writes a fresh msrun_log/ whose worker logs hold the real GLOG_v=1
start-up section of each rank and some steps of history (gen_msrun_log.py's lines), starts
the real CLI on it (`msrunwatch watch DIR --headless --events FILE`, so start-up, the
watchdog observer and the tick loop are all in the figures) and waits for its `caught_up`
event. Then this process appends training steps round-robin to every worker log at the
target total rate, and now and then a probe: a traceback ending in an exception with a
unique word (`ValueError: probe-<word> on rank <r>`), a new finding with a fingerprint of
its own. A reader thread tails the events file; a probe's latency is the time its
`finding` event was seen minus the time just before the probe was written. The watcher's
CPU (utime + stime from /proc/<pid>/stat) and the summed RSS of its process tree are
sampled over the steady phase. Results are printed, never asserted: timing belongs here,
not in the tests. Linux only (/proc, inotify). The writer and the watcher share the
machine's cores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # a checkout without `pip install -e .` still finds msrunwatch

import bench_triage as bt  # noqa: E402
import gen_msrun_log as gen  # noqa: E402

MIB = 1 << 20
CLK_TCK = os.sysconf("SC_CLK_TCK")
READ_POLL_S = 0.002
"""How often the reader looks for new event lines: the resolution of 'seen'."""
SCRIPT_LINE = (
    "    model.train(EPOCHS, dataset, callbacks=[LossMonitor(1), TimeMonitor()], "
    "dataset_sink_mode=False)"
)
HEARTBEAT_S = 5.0
"""The scheduler logs `Cluster currently has N alive nodes` this often (a WARNING line)."""
TARGETS = {"p99_ms": 250.0, "cpu_cores": 1.0, "rss_mib": 300.0}


# -- the run being watched -----------------------------------------------------------------


class RankStream:
    """One worker's lines: its real start-up section, then training steps, on demand.

    Steps are gen_msrun_log's (the INFO lines one real step logs, a LossMonitor line, a
    TimeMonitor line per epoch) with monotonic timestamps; `stretch_us` sets the step time.
    """

    def __init__(self, rank: int, world: int, seed: int, steps_per_epoch: int) -> None:
        t = gen.worker_template()
        self.t = t
        self.p = gen.persona(rank, world, seed)
        self.rank = rank
        self.writer = gen.StepWriter.build(t, self.p)
        self.clock = gen.Clock()
        self.loss = gen.loss_curve(seed, rank)
        self.spe = steps_per_epoch
        skew = random.Random(seed * 31 + rank).randrange(gen.MAX_SKEW_US)
        self.start_us = gen._ts(t.step[0]) + skew
        self.epoch_start = t.compile_start_us
        self.last_end = next(gen._ts(ln) for ln in reversed(t.startup) if ln.is_glog)
        self.g = 2  # global step 1 ends the start-up section
        self.pending: deque[bytes] = deque()

    def header(self) -> str:
        """The start-up section (with `This node N rank id: N`) and step 1's loss."""
        subs = gen.rank_substitutions(self.p)
        return gen.render_verbatim(self.t.startup, self.p, subs) + (
            f"epoch: 1 step: 1, loss is {self.loss(1)}\n"
        )

    def step(self, stretch_us: int) -> str:
        """The next step's lines (after the epoch's end lines when an epoch ends)."""
        epoch, step = divmod(self.g - 1, self.spe)
        out = ""
        if step == 0:
            out = gen.epoch_end(
                self.t, self.p, self.clock, self.last_end, self.epoch_start, self.spe
            )
            self.epoch_start = self.start_us
        out += self.writer.render(
            self.start_us, stretch_us, self.g, epoch + 1, step + 1, self.loss(self.g)
        )
        self.last_end = self.writer.end_us(self.start_us, stretch_us)
        self.start_us += self.t.cycle_us + stretch_us
        self.g += 1
        return out

    def lines(self, n: int, stretch_us: int) -> bytes:
        """The next n lines, one step rendered at a time."""
        pending = self.pending
        while len(pending) < n:
            pending.extend(ln + b"\n" for ln in self.step(stretch_us).encode().splitlines())
        return b"".join(pending.popleft() for _ in range(n))

    def probe(self, word: str) -> bytes:
        """A traceback ending in an exception only the python-exception rule knows."""
        return (
            "Traceback (most recent call last):\n"
            f'  File "{gen.SCRIPT}", line 86, in <module>\n'
            f"{SCRIPT_LINE}\n"
            f"ValueError: probe-{word} on rank {self.rank}\n"
        ).encode()


class Scheduler:
    """scheduler.log: the real start-up (every rank registers), then WARNING heartbeats."""

    def __init__(self, ranks: int, seed: int) -> None:
        self.lines = gen.read_template("scheduler.log")
        self.p = gen.Persona(rank=-1, world=ranks, pid=99_000 + seed % 1000, tid_shift=0)
        self.clock = gen.Clock()
        self.ranks, self.seed = ranks, seed
        self.finalize = gen._index(self.lines, "This log means the cluster is successfully created")
        self.tid = self.lines[self.finalize].tid
        self.next_us = gen._ts(self.lines[self.finalize]) + int(HEARTBEAT_S * 1e6)

    def header(self) -> str:
        lines, p, n = self.lines, self.p, self.ranks
        first = gen._index(lines, "ProcessRegister] The new node:")
        last = max(i for i, ln in enumerate(lines) if "ProcessRegister] The new node:" in ln.tail)
        subs = [
            (re.compile(r"current alive node num: \(0/\d+\)"), f"current alive node num: (0/{n})"),
            (
                re.compile(r"Cluster currently has \d+ alive nodes"),
                f"Cluster currently has {n} alive nodes",
            ),
        ]
        return "".join(
            [
                gen.render_verbatim(lines[:first], p, subs),
                gen.registrations(lines, first, last, p, n, self.seed, self.clock),
                gen.render_verbatim(lines[last + 1 : self.finalize + 1], p, subs),
            ]
        )

    def heartbeat(self) -> bytes:
        line = self.p.glog(
            "[WARNING] DISTRIBUTED",
            self.tid,
            self.clock.fmt(self.next_us),
            "mindspore/ccsrc/cluster/topology/meta_server_node.cc:91",
            f"Finalize] Cluster currently has {self.ranks} alive nodes.",
        )
        self.next_us += int(HEARTBEAT_S * 1e6)
        return (line + "\n").encode()


def build_run(
    log_dir: Path, ranks: int, history_kb: int, seed: int, spe: int
) -> tuple[list[RankStream], Scheduler, int]:
    """Write scheduler.log and worker_N.log with start-up and history; returns the streams."""
    log_dir.mkdir(parents=True)
    sched = Scheduler(ranks, seed)
    total = 0
    data = sched.header().encode()
    (log_dir / "scheduler.log").write_bytes(data)
    total += len(data)
    history_stretch = int(max(0.0, gen.DEFAULT_STEP_MS * 1000 - gen.worker_template().cycle_us))
    streams = []
    for rank in range(ranks):
        s = RankStream(rank, ranks, seed, spe)
        parts, size = [s.header()], 0
        size = len(parts[0])
        while size < history_kb * 1024:
            parts.append(s.step(history_stretch))
            size += len(parts[-1])
        data = "".join(parts).encode()
        (log_dir / f"worker_{rank}.log").write_bytes(data)
        total += len(data)
        streams.append(s)
    return streams, sched, total


# -- watching the watcher ------------------------------------------------------------------


@dataclass
class Seen:
    """A probe's finding event: when this process read it, and the event's own time."""

    seen: float
    stamp: float


class EventReader(threading.Thread):
    """Tails the events file; notes caught_up, done, and every probe's finding."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True, name="events")
        self.path = path
        self.caught_up = threading.Event()
        self.done = threading.Event()
        self.caught_up_at = 0.0
        self.caught_up_event: dict[str, object] = {}
        self.start_event: dict[str, object] = {}
        self.done_event: dict[str, object] = {}
        self.probes: dict[str, Seen] = {}
        self.counts: Counter[str] = Counter()
        self.findings_other: list[str] = []
        self.bad_lines = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self.path.exists():
            if self._halt.wait(READ_POLL_S):
                return
        buf = b""
        with self.path.open("rb", buffering=0) as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    if self._halt.is_set():
                        return
                    time.sleep(READ_POLL_S)
                    continue
                now = time.time()
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._line(line, now)

    def _line(self, raw: bytes, now: float) -> None:
        try:
            ev = json.loads(raw)
        except ValueError:
            self.bad_lines += 1
            return
        kind = ev.get("event", "?")
        self.counts[kind] += 1
        if kind == "finding":
            msg = str(ev.get("message", ""))
            word = _probe_word(msg)
            if word is None:
                self.findings_other.append(f"{ev.get('rule')}: {msg[:120]}")
            elif word not in self.probes:
                self.probes[word] = Seen(now, _parse_time(str(ev.get("time", ""))))
        elif kind == "caught_up":
            self.caught_up_at, self.caught_up_event = now, ev
            self.caught_up.set()
        elif kind == "start":
            self.start_event = ev
        elif kind == "done":
            self.done_event = ev
            self.done.set()

    def stop(self) -> None:
        self._halt.set()
        self.join(5)


def _probe_word(message: str) -> str | None:
    marker = "ValueError: probe-"
    at = message.find(marker)
    if at < 0:
        return None
    return message[at + len(marker) :].split(" ", 1)[0]


def _parse_time(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return math.nan


def _cpu_ticks(pid: int) -> int:
    """utime + stime of one process (all its threads), in clock ticks; 0 once gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            rest = fh.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return 0


def tree_cpu_ticks(root: int) -> int:
    """utime + stime summed over root and its descendants right now."""
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            total += _cpu_ticks(pid)
            todo.extend(bt._children(pid))
    return total


def status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Samples the watcher tree's CPU ticks and summed RSS, and this process's CPU."""

    def __init__(self, pid: int, every_s: float) -> None:
        super().__init__(daemon=True, name="sampler")
        self.pid, self.every_s = pid, every_s
        self.samples: list[tuple[float, int, int, int]] = []
        """(wall time, watcher tree CPU ticks, watcher tree RSS KiB, bench CPU ticks)."""
        self._done = threading.Event()

    def sample(self) -> tuple[float, int, int, int]:
        s = (
            time.time(),
            tree_cpu_ticks(self.pid),
            bt.tree_rss_kib(self.pid),
            _cpu_ticks(os.getpid()),
        )
        self.samples.append(s)
        return s

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(self.every_s)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def window(self, t0: float, t1: float) -> list[tuple[float, int, int, int]]:
        return [s for s in self.samples if t0 <= s[0] <= t1]


# -- one benchmark -------------------------------------------------------------------------


@dataclass
class Probe:
    k: int
    rank: int
    word: str
    due: float
    """Seconds after the writer started."""
    written: float = math.nan
    seen: float = math.nan
    stamp: float = math.nan

    @property
    def latency_ms(self) -> float:
        return (self.seen - self.written) * 1000 if not math.isnan(self.seen) else math.inf

    @property
    def stamp_latency_ms(self) -> float:
        return (self.stamp - self.written) * 1000 if not math.isnan(self.stamp) else math.inf


@dataclass
class Result:
    ranks: int
    poll: bool
    files: int
    history_bytes: int
    build_s: float
    catch_up_s: float
    """From starting the process to this process reading its caught_up event."""
    caught_up_bytes: int
    rate_target: float
    rate_achieved: float
    lines_written: int
    bytes_written: int
    write_calls: int
    writer_s: float
    late_batches: int
    """Batches that started more than one batch interval late (the writer fell behind)."""
    probes: list[Probe]
    cpu_cores: float
    cpu_cores_max_1s: float
    bench_cpu_cores: float
    rss_steady_peak_mib: float
    rss_catch_up_peak_mib: float
    vm_hwm_mib: float
    events: dict[str, int]
    other_findings: list[str]
    exit_code: int | None
    stderr_tail: str
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return sum(1 for p in self.probes if math.isnan(p.seen))

    def pct(self, q: float, stamp: bool = False) -> float:
        return percentile([p.stamp_latency_ms if stamp else p.latency_ms for p in self.probes], q)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); lost probes are inf."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    frac = pos - lo
    if math.isinf(xs[lo]) or (frac > 0 and math.isinf(xs[hi])):
        return math.inf
    return xs[lo] + (xs[hi] - xs[lo]) * frac


def make_probes(n: int, ranks: int, warmup: float, seconds: float, seed: int) -> list[Probe]:
    """n probes at jittered, evenly spread times in the window, on random ranks, with
    distinct letter-only words (fingerprints mask digits, so words must differ)."""
    rng = random.Random(seed * 7 + ranks)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: set[str] = set()
    out = []
    span = seconds / max(n, 1)
    for k in range(n):
        word = ""
        while not word or word in words:
            word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(4))
        words.add(word)
        due = warmup + (k + rng.uniform(0.1, 0.9)) * span
        out.append(Probe(k, rng.randrange(ranks), word, due))
    return out


@dataclass(frozen=True)
class Written:
    """What the writer did."""

    start: float
    elapsed: float
    lines: int
    bytes: int
    writes: int
    late: int
    """Batches that started more than one batch interval late."""


class HarnessError(Exception):
    """The benchmark itself failed (not the watcher missing a target)."""


def run_one(args: argparse.Namespace, ranks: int, msrunwatch: Sequence[str]) -> Result:
    root = Path(tempfile.mkdtemp(prefix=f"msrunwatch-live-{ranks}-", dir=args.tmp))
    try:
        return _run_one(args, ranks, msrunwatch, root)
    finally:
        if args.keep:
            print(f"  kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def _run_one(args: argparse.Namespace, ranks: int, msrunwatch: Sequence[str], root: Path) -> Result:
    log_dir, events = root / "msrun_log", root / "events.jsonl"
    began = time.perf_counter()
    streams, sched, history = build_run(
        log_dir, ranks, args.history_kb, args.seed, args.steps_per_epoch
    )
    build_s = time.perf_counter() - began
    say(f"  {ranks} ranks: wrote {history / MIB:.0f} MiB of history in {build_s:.1f} s")
    bt.warm_cache(bt.describe(log_dir, None))

    cmd = [*msrunwatch, "watch", str(log_dir), "--headless", "--events", str(events)]
    if args.poll:
        cmd.append("--poll")
    stderr_path = root / "watcher.stderr"
    reader = EventReader(events)
    reader.start()
    with stderr_path.open("wb") as err:
        started = time.time()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    sampler = Sampler(proc.pid, args.sample_ms / 1000)
    sampler.start()
    result: Result | None = None
    try:
        deadline = started + args.catch_up_timeout
        while not reader.caught_up.wait(0.05):
            if proc.poll() is not None:
                raise HarnessError(f"watcher exited with {proc.returncode} before caught_up")
            if time.time() > deadline:
                raise HarnessError(f"no caught_up event within {args.catch_up_timeout:g} s")
        catch_up_s = reader.caught_up_at - started
        say(f"  caught up after {catch_up_s:.2f} s; writing {args.rate:g} lines/s ...")
        catch_up_samples = list(sampler.samples)
        probes = make_probes(args.probes, ranks, args.warmup, args.seconds, args.seed)
        w = write(args, streams, sched, log_dir, probes, proc)
        # the window: after the warm-up, until the writer stopped
        t0, t1 = w.start + args.warmup, w.start + args.warmup + args.seconds
        wait_for_probes(reader, probes, proc, args.grace)
        hwm = status_kib(proc.pid, "VmHWM") / 1024
        win = sampler.window(t0, t1 + args.sample_ms / 1000)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise HarnessError("watcher did not exit within 60 s of SIGTERM") from None
        reader.done.wait(2)
        for p in probes:
            if p.word in reader.probes:
                p.seen, p.stamp = reader.probes[p.word].seen, reader.probes[p.word].stamp
        if len(win) < 2:
            raise HarnessError("too few samples in the measurement window")
        wall = win[-1][0] - win[0][0]
        cpu = (win[-1][1] - win[0][1]) / CLK_TCK / wall
        bench_cpu = (win[-1][3] - win[0][3]) / CLK_TCK / wall
        result = Result(
            ranks=ranks,
            poll=args.poll,
            files=ranks + 1,
            history_bytes=history,
            build_s=build_s,
            catch_up_s=catch_up_s,
            caught_up_bytes=int(str(reader.caught_up_event.get("bytes_read", 0))),
            rate_target=args.rate,
            rate_achieved=w.lines / w.elapsed,
            lines_written=w.lines,
            bytes_written=w.bytes,
            write_calls=w.writes,
            writer_s=w.elapsed,
            late_batches=w.late,
            probes=probes,
            cpu_cores=cpu,
            cpu_cores_max_1s=max_rate_over(win, 1.0),
            bench_cpu_cores=bench_cpu,
            rss_steady_peak_mib=max(s[2] for s in win) / 1024,
            rss_catch_up_peak_mib=max((s[2] for s in catch_up_samples), default=0) / 1024,
            vm_hwm_mib=hwm,
            events=dict(reader.counts),
            other_findings=reader.findings_other[:20],
            exit_code=proc.returncode,
            stderr_tail=stderr_path.read_text(errors="replace")[-2000:],
            samples=[s for s in sampler.samples if s[0] >= started],
        )
    finally:
        sampler.stop()
        reader.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if result.lost == len(result.probes) and result.probes:
        raise HarnessError(
            "no probe produced a finding event: the probe line is not recognised "
            f"(other findings: {result.other_findings[:3]}; stderr: {result.stderr_tail[-300:]!r})"
        )
    return result


def max_rate_over(samples: Sequence[tuple[float, int, int, int]], span: float) -> float:
    """Highest CPU use (cores) over any stretch of about `span` seconds."""
    best, j = 0.0, 0
    for i in range(len(samples)):
        while samples[i][0] - samples[j][0] > span:
            j += 1
        if j > 0 and samples[i][0] - samples[j - 1][0] >= span:
            a = samples[j - 1]
            best = max(best, (samples[i][1] - a[1]) / CLK_TCK / (samples[i][0] - a[0]))
    return best


def write(
    args: argparse.Namespace,
    streams: list[RankStream],
    sched: Scheduler,
    log_dir: Path,
    probes: list[Probe],
    proc: subprocess.Popen[bytes],
) -> Written:
    """Append lines round-robin at the target total rate, a batch every --batch-ms; write
    each probe as its own append, noting the time just before it. Returns what it did."""
    n = len(streams)
    per_rank = args.rate / n
    lines_per_step = len(gen.worker_template().step) + 1
    step_us = lines_per_step / per_rank * 1e6  # log time advances about as fast as the wall
    stretch = int(max(0.0, step_us - gen.worker_template().cycle_us))
    flags = os.O_WRONLY | os.O_APPEND
    fds = [os.open(log_dir / f"worker_{r}.log", flags) for r in range(n)]
    sched_fd = os.open(log_dir / "scheduler.log", flags)
    batch_s = args.batch_ms / 1000
    duration = args.warmup + args.seconds
    lines = nbytes = writes = late = 0
    rr = 0
    todo = deque(probes)
    next_beat = HEARTBEAT_S
    start = time.time()
    k = 0
    try:
        while True:
            k += 1
            target = start + k * batch_s
            now = time.time()
            if target > now:
                time.sleep(target - now)
            elif now - target > batch_s:
                late += 1
            now = time.time()
            elapsed = now - start
            if elapsed >= duration:
                break
            while todo and todo[0].due <= elapsed:
                p = todo.popleft()
                data = streams[p.rank].probe(p.word)
                p.written = time.time()
                os.write(fds[p.rank], data)
                writes += 1
                nbytes += len(data)
            due = int(args.rate * elapsed) - lines
            if due > 0:
                base, extra = divmod(due, n)
                for i in range(min(due, n)):
                    r = (rr + i) % n
                    count = base + (1 if i < extra else 0)
                    data = streams[r].lines(count, stretch)
                    os.write(fds[r], data)
                    nbytes += len(data)
                    writes += 1
                rr = (rr + due) % n
                lines += due
            if elapsed >= next_beat:
                os.write(sched_fd, sched.heartbeat())
                next_beat += HEARTBEAT_S
            if k % 200 == 0 and proc.poll() is not None:
                raise HarnessError(f"watcher exited with {proc.returncode} while writing")
        end = time.time()
    finally:
        for fd in (*fds, sched_fd):
            os.close(fd)
    for p in todo:  # a probe due after the end (only with a tiny --seconds): never written
        p.due = math.nan
    return Written(start, end - start, lines, nbytes, writes, late)


def wait_for_probes(
    reader: EventReader, probes: list[Probe], proc: subprocess.Popen[bytes], grace: float
) -> None:
    """Until every written probe's event was seen, or `grace` seconds after the writer."""
    until = time.time() + grace
    words = {p.word for p in probes if not math.isnan(p.written)}
    while time.time() < until and not words <= reader.probes.keys():
        if proc.poll() is not None:
            raise HarnessError(f"watcher exited with {proc.returncode} after writing")
        time.sleep(0.05)


# -- reporting -----------------------------------------------------------------------------


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _ms(x: float) -> str:
    return "lost" if math.isinf(x) else f"{x:.0f}"


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_result(r: Result) -> None:
    """The figures of one rank count, one per line, with the targets next to them."""
    sent = sum(1 for p in r.probes if not math.isnan(p.written))
    met = _met
    p99 = r.pct(99)
    rss_ok = r.rss_steady_peak_mib < TARGETS["rss_mib"]
    rows = [
        ("ranks", f"{r.ranks} ({r.files} files, {'polling' if r.poll else 'inotify'})"),
        (
            "history",
            f"{r.history_bytes / MIB:.1f} MiB written in {r.build_s:.1f} s, "
            f"{r.caught_up_bytes / MIB:.1f} MiB read before caught_up",
        ),
        ("catch-up", f"{r.catch_up_s:.2f} s from exec to the caught_up event"),
        (
            "rate",
            f"{r.rate_achieved:.0f} lines/s achieved of {r.rate_target:g} "
            f"({r.lines_written} lines, {r.bytes_written / MIB:.1f} MiB, {r.write_calls} appends "
            f"in {r.writer_s:.1f} s; {r.late_batches} late batches)",
        ),
        ("probes", f"{sent} written, {r.lost} lost (no finding event)"),
        (
            "latency (seen)",
            f"p50 {_ms(r.pct(50))} ms, p90 {_ms(r.pct(90))} ms, p99 {_ms(p99)} ms, "
            f"max {_ms(r.pct(100))} ms  (target p99 < {TARGETS['p99_ms']:g}: "
            f"{met(p99 < TARGETS['p99_ms'])})",
        ),
        (
            "latency (stamp)",
            f"p50 {_ms(r.pct(50, True))} ms, p99 {_ms(r.pct(99, True))} ms, "
            f"max {_ms(r.pct(100, True))} ms  (the event's own time, ms resolution)",
        ),
        (
            "watcher CPU",
            f"{r.cpu_cores:.2f} cores on average, {r.cpu_cores_max_1s:.2f} in the busiest second "
            f"(target < {TARGETS['cpu_cores']:g}: {met(r.cpu_cores < TARGETS['cpu_cores'])})",
        ),
        ("bench CPU", f"{r.bench_cpu_cores:.2f} cores (writer, reader, sampler: same machine)"),
        (
            "watcher RSS",
            f"{r.rss_steady_peak_mib:.0f} MiB peak while writing "
            f"(target < {TARGETS['rss_mib']:g}: {met(rss_ok)}), "
            f"{r.rss_catch_up_peak_mib:.0f} MiB peak while catching up, "
            f"VmHWM {r.vm_hwm_mib:.0f} MiB",
        ),
        ("events", ", ".join(f"{k} {v}" for k, v in sorted(r.events.items()))),
        ("exit", f"{r.exit_code} after SIGTERM (143 expected)"),
    ]
    if r.other_findings:
        rows.append(("other findings", "; ".join(r.other_findings[:5])))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def markdown_table(results: list[Result]) -> str:
    head = (
        "| ranks | files | events from | lines/s achieved | probes lost | p50 ms | p90 ms | p99 ms "
        "| max ms | watcher CPU cores | bench CPU cores | peak RSS MiB | catch-up s (MiB) |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        sent = sum(1 for p in r.probes if not math.isnan(p.written))
        lines.append(
            f"| {r.ranks} | {r.files} | {'polling' if r.poll else 'inotify'} "
            f"| {r.rate_achieved:,.0f} | {r.lost}/{sent} | {_ms(r.pct(50))} | {_ms(r.pct(90))} "
            f"| {_ms(r.pct(99))} | {_ms(r.pct(100))} | {r.cpu_cores:.2f} "
            f"| {r.bench_cpu_cores:.2f} | {r.rss_steady_peak_mib:.0f} "
            f"| {r.catch_up_s:.1f} ({r.history_bytes / MIB:.0f}) |"
        )
    return "\n".join(lines)


def environment(msrunwatch: Sequence[str], args: argparse.Namespace) -> str:
    mw = subprocess.run([*msrunwatch, "--version"], capture_output=True, text=True).stdout.strip()
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in bt._read("/proc/cpuinfo").splitlines()
            if ln.startswith("model name")
        ),
        platform.processor() or "?",
    )
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "msrunwatch"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (
        f"{cpu}, {os.cpu_count()} CPUs shared by the watcher and the writer, Linux "
        f"{platform.release()}, Python {platform.python_version()}, {mw} at {rev or '?'}"
        f"{' (+ uncommitted changes in msrunwatch/)' if dirty else ''}; "
        f"watcher `{' '.join(msrunwatch)}`; "
        f"{args.rate:g} lines/s in all for {args.seconds:g} s after a {args.warmup:g} s warm-up, "
        f"appends every {args.batch_ms:g} ms, {args.probes} probes, "
        f"{args.history_kb} KiB of history per worker log"
    )


def save_results(results: list[Result], env: str, args: argparse.Namespace, path: Path) -> None:
    rows = []
    for r in results:
        row = asdict(r)
        row["probes"] = [
            {
                **asdict(p),
                "latency_ms": _finite(p.latency_ms),
                "stamp_ms": _finite(p.stamp_latency_ms),
            }
            for p in r.probes
        ]
        row["percentiles_ms"] = {f"p{q}": _finite(r.pct(q)) for q in (50, 90, 99, 100)}
        row["stamp_percentiles_ms"] = {f"p{q}": _finite(r.pct(q, True)) for q in (50, 90, 99, 100)}
        row["lost"] = r.lost
        row["samples"] = [
            {"t": round(t - r.samples[0][0], 3), "cpu_ticks": c, "rss_kib": m, "bench_ticks": b}
            for t, c, m, b in r.samples
        ]
        rows.append(row)
    path.write_text(
        json.dumps(
            {"environment": env, "args": {k: str(v) for k, v in vars(args).items()}, "runs": rows},
            indent=1,
            default=_finite,
        )
    )


def _finite(x: float) -> float | None:
    return None if isinstance(x, float) and (math.isnan(x) or math.isinf(x)) else x


# -- driver --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="8,1024", help="comma-separated rank counts")
    parser.add_argument("--rate", type=float, default=20_000.0, help="lines/s over all workers")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured writing time")
    parser.add_argument("--warmup", type=float, default=2.0, help="writing before the window")
    parser.add_argument("--probes", type=int, default=200, help="probe findings per run")
    parser.add_argument("--poll", action="store_true", help="run the watcher with --poll")
    parser.add_argument("--history-kb", type=int, default=512, help="per worker log at start")
    parser.add_argument("--batch-ms", type=float, default=5.0, help="append every this often")
    parser.add_argument("--sample-ms", type=float, default=100.0, help="CPU/RSS sampling")
    parser.add_argument("--grace", type=float, default=10.0, help="wait for late events, s")
    parser.add_argument("--catch-up-timeout", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps-per-epoch", type=int, default=gen.DEFAULT_STEPS_PER_EPOCH)
    parser.add_argument("--msrunwatch", help="command (default: beside this Python, then PATH)")
    parser.add_argument("--tmp", help="where the temporary msrun_log/ goes (default: $TMPDIR)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    parser.add_argument("--out", type=Path, default=BENCH / "out")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    try:
        rank_counts = [int(x) for x in args.ranks.split(",") if x]
    except ValueError:
        parser.error("--ranks takes comma-separated integers")
    if any(n < 2 for n in rank_counts):
        parser.error("every --ranks value must be at least 2")
    args.out.mkdir(parents=True, exist_ok=True)
    msrunwatch = bt.resolve_msrunwatch(args.msrunwatch)
    env = environment(msrunwatch, args)

    results = []
    for ranks in rank_counts:
        say(f"benchmarking {ranks} ranks ...")
        try:
            results.append(run_one(args, ranks, msrunwatch))
        except HarnessError as exc:
            print(f"bench_live: harness failure at {ranks} ranks: {exc}", file=sys.stderr)
            return 2
        print()
        print_result(results[-1])
    print()
    print(env)
    print()
    print(markdown_table(results))
    save_results(results, env, args, args.out / "live_results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
