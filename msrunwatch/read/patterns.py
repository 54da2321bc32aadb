"""The line shapes msrunwatch extracts state from, compiled once: one table.

Fault messages are not here: which line is which fault is data, in the YAML rules.
These patterns find structure (GLOG headers, the memory block, compile and progress
markers, rank identity, msrun's own lines) and run on already-filtered lines.

Each `Shape` carries the literal(s) every match of its regex must contain, derived from
the regex itself (the rule prefilter's analysis), and tests it before running the
regex: a pre-check can never drift from its pattern.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from msrunwatch.read.shortcuts import SWITCH
from msrunwatch.rules.prefilter import required_literals
from msrunwatch.rules.programs import read_side


class Shape:
    """A structural pattern guarded by the literal(s) its matches cannot lack."""

    __slots__ = ("_flags", "_one", "_pattern", "ignore_case", "needs", "regex")
    _DERIVED = frozenset({"_one", "ignore_case", "needs", "regex"})

    regex: re.Pattern[str]
    needs: tuple[str, ...]
    """Literals one of which every match contains."""
    ignore_case: bool
    _one: str | None

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags

    def __getattr__(self, name: str) -> object:
        """Compile and analyse the pattern on first use (a cold start uses few shapes)."""
        if name not in Shape._DERIVED:
            raise AttributeError(name)
        self.regex = read_side(self._pattern, self._flags)
        ignoring = self._flags & re.IGNORECASE
        found = required_literals(f"(?i){self._pattern}" if ignoring else self._pattern)
        if found is None:
            raise ValueError(f"no literal every match of {self._pattern!r} contains")
        self.needs, self.ignore_case = found
        self._one = self.needs[0] if len(self.needs) == 1 and not self.ignore_case else None
        return getattr(self, name)

    def could_match(self, text: str) -> bool:
        """False when the text lacks every literal a match needs (most lines); with the
        shortcuts off (read.shortcuts), whether the regex matches."""
        if not SWITCH.on:
            return self.regex.search(text) is not None
        if self._one is not None:
            return self._one in text
        haystack = text.lower() if self.ignore_case else text
        return any(literal in haystack for literal in self.needs)

    def search(self, text: str) -> re.Match[str] | None:
        return self.regex.search(text) if not SWITCH.on or self.could_match(text) else None

    def match(self, text: str) -> re.Match[str] | None:
        return self.regex.match(text) if not SWITCH.on or self.could_match(text) else None


def shapes() -> Iterator[tuple[str, Shape]]:
    """Every shape of this module, by name (for tests and the grep markers)."""
    for name, value in globals().items():
        if isinstance(value, Shape):
            yield name, value


LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
N = r"\d{1,18}(?!\d)"
"""A count or id that is converted with int(): bounded, so a forged 5,000-digit rank or pid
fails to match (the line is read as text) instead of overflowing Python's conversion."""

GLOG_HEADER = read_side(
    r"\[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL|V\d+)\] "
    rf"(?P<module>[A-Za-z_]+)\((?P<pid>{N})(?:[,:][^)]*)?\):"
    r"(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{1,3}\.\d{0,3}) "
    r"\[(?P<src>[^\]]*):(?P<srcline>\d+)\] "
    r"(?:(?P<func>[A-Za-z_][A-Za-z0-9_~:<>]*)\] )?"
    r"(?P<msg>.*)"
)
"""C++ (`pid,tid-hex,proc` then `func]`), Python (`pid:tid,MainProcess`, no func) and CANN
(`HCCL(pid,python)`) lines. The source runs to the first `]` and ends in `:<digits>`: only
its last `:` can end it, so it is matched greedily (a lazy match tried every character)."""

# What a worker's log is read for, line by line (Extractor.line decides with the text
# forms, the scanner picks lines out of whole blocks with the bytes forms: one source).
_PASSED_OVER = r"\[(?:INFO|DEBUG)\] [A-Za-z_]+\(|\[PROF\]PreLaunchCommKernel "
PASSED_OVER = read_side(_PASSED_OVER)
"""The start of a GLOG INFO/DEBUG line, or of the per-step `[PROF]PreLaunchCommKernel` timing
(not a compile stage): a worker's log is not read for them unless they carry a marker
(INFO_MARKER); faults are never logged at INFO."""
MARKER_TEXTS = (b"[PROF]", b"compiling")
NOT_A_MARKER = b"PreLaunchCommKernel "
"""The `[PROF]` timing that follows no compile (see PASSED_OVER)."""
_INFO_MARKERS = (
    re.escape(MARKER_TEXTS[0].decode()) + f"(?!{NOT_A_MARKER.decode()})",
    re.escape(MARKER_TEXTS[1].decode()),
)
INFO_MARKER = read_side("|".join(_INFO_MARKERS))
"""What makes such a line worth reading: compile stage timings and compile start/finish."""
_BULK = r"epoch: [0-9]"
BULK_TEXT = read_side(_BULK)
"""A LossMonitor line (`epoch: 1 step: 3, loss is 0.38`), one per step: a record of its own
(see Extractor.progress_line), which the scanner reads in bulk."""

# Bytes-level scanners: these run over whole blocks, so each has a literal core that
# CPython's regex engine finds with a fast substring search.
_FAULT_HEADER = (
    rb"(?P<fault>\[(?P<level>WARNING|ERROR|CRITICAL)\] "
    rb"[A-Za-z_]+\((?P<pid>\d{1,18})(?!\d)(?:[,:][^)\n]*)?\):"
    rb"(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{1,3}\.\d{0,3}) "
    rb"\[[^\]\n]*:\d+\] "
    rb"(?:[A-Za-z_][A-Za-z0-9_~:<>]*\] )?)"
)
"""GLOG_HEADER of a WARNING/ERROR/CRITICAL line, up to its message, as bytes: what the
scanner's block pass (CANDIDATE_LINE) reads of such a line, so that it is not matched
again line by line (FileScanner._headers). On an ASCII line it matches where GLOG_HEADER
does, with the same level, pid, time and message (a test checks it)."""
CANDIDATE_LINE = read_side(rb"\n(?!" + _PASSED_OVER.encode() + rb")" + _FAULT_HEADER + rb"?[^\n]*")
"""Every line that is not PASSED_OVER: the only lines faults are on. LossMonitor lines
(BULK_LINE) are among them, and read in bulk (see FileScanner); the header of a
WARNING/ERROR/CRITICAL line is read here (group `fault`, see _FAULT_HEADER)."""
NOT_CANDIDATE = read_side(rb"\n(?:" + _PASSED_OVER.encode() + rb")")
"""The lines CANDIDATE_LINE passes over: where a run of candidate lines ends."""
BULK_LINE = read_side(rb"\n" + _BULK.encode())
"""LossMonitor lines (BULK_TEXT), read in bulk: the rules read each, progress only the last
few of a block; the others are counted."""
LOSS_BULK = read_side(rb"\nepoch: (\d{1,18}),? step: (\d{1,18}), loss is ")
"""The epoch and step of a LossMonitor line that is counted but not parsed."""
LOSS_SHAPE = (
    rb"epoch: ([0-9]{1,18}),? step: ([0-9]{1,18}), loss is "
    rb"[+-]?[0-9]{1,40}(?:\.[0-9]{0,40})?(?:[eE][+-]?[0-9]{1,4})?"
)
"""A whole LossMonitor line whose loss is a number written in digits (never `nan` or
`inf`), with LOSS_BULK's groups: read.lossonly passes over those no rule can fire on."""
LOSS_ALPHABET = "epoch: step,lossi0123456789+-.eE"
"""Every character a line LOSS_SHAPE matches can hold (a test checks it)."""
ANY_LINE = read_side(rb"\n[^\n]*")
INFO_MARKERS = tuple(read_side(marker.encode()) for marker in _INFO_MARKERS)
"""The bytes forms of INFO_MARKER: the passed-over lines the scanner picks out to read (it
finds them with marked_lines, which must agree with them)."""
HEADER_START = read_side(rb"\n\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL|V\d+)\] [A-Za-z_]+\(\d+")


def marked_lines(buf: bytes, end: int) -> Iterator[tuple[int, int]]:
    """(which of INFO_MARKERS, where its line starts) for each match of one in buf[:end],
    in the order of INFO_MARKERS, then of the bytes: what their finditer gives. Found with
    bytes.find, which skips ahead by the length of the text (CPython's two-way search): a
    regex looks at every byte for the first character of its literal (a 4 MiB worker log
    scanned: 41.3 against 33.1 million instructions a MiB, callgrind)."""
    find, rfind, skip = buf.find, buf.rfind, len(MARKER_TEXTS[0])
    for index, text in enumerate(MARKER_TEXTS):
        at = find(text, 0, end)
        while at >= 0:
            if index or not buf.startswith(NOT_A_MARKER, at + skip, end):
                yield index, rfind(b"\n", 0, at) + 1
            at = find(text, at + len(text), end)


COUNT_BY_REPLACE = 2048
"""From this many bytes on, newlines are counted by what removing them removes."""


def newlines(buf: bytes, start: int, stop: int) -> int:
    """Newlines in buf[start:stop]. bytes.count looks at a byte at a time; replace finds
    each newline with memchr and copies the rest in blocks: from a few KiB on, the copy
    of the slice and the replace together take half the time (0.29 against 0.62 ms/MiB in
    64 KiB slices of a real log)."""
    if stop - start < COUNT_BY_REPLACE:
        return buf.count(b"\n", start, stop)
    part = buf[start:stop]
    return len(part) - len(part.replace(b"\n", b""))


# Memory summary block (un-prefixed lines after `... deinitialize success, statistics:`
# or `Memory Statistic:`). Values are MiB with an `M` suffix; the oldest form is bytes.
MEMORY_LINE = Shape(
    r"(?:\[MS_RUNTIME_PROF\])?(?P<key>Device (?:MOC|HBM) memory size"
    r"|MindSpore Used memory size"
    r"|MindSpore memory base address"
    r"|Used peak memory usage \(without fragments\)"
    r"|Actual peak memory usage \(with fragments\)"
    r"): ?(?P<value>\S+)"
)
MEMORY_FIELDS = {
    "Device MOC memory size": "device_mb",
    "Device HBM memory size": "device_mb",
    "MindSpore Used memory size": "used_mb",
    "MindSpore memory base address": "base_address",
    "Used peak memory usage (without fragments)": "peak_used_mb",
    "Actual peak memory usage (with fragments)": "peak_actual_mb",
}
TEARDOWN = Shape(r"Memory Adapter deinitialize success")

# Compile markers.
COMPILE_START = Shape(r"Start compiling, phase: (?P<phase>\S+)")
COMPILE_FINISH = Shape(r"CompileInner\] Finish compiling|^Finish compiling\.")
PROF_STAGE = Shape(r"\[PROF\](?P<stage>[A-Za-z_][A-Za-z0-9_]*) costs (?P<ms>[0-9.]+) msec")

# Rank identity.
NODE_RANK = Shape(rf"This node (?P<node>\S+) rank id: (?P<rank>{N})")
SIM_RANK = Shape(
    rf"simulation mode with level (?P<level>{N})\. Process's RANK_ID: (?P<rank>{N}), "
    rf"RANK_SIZE: (?P<size>{N})"
)

# A worker registering with the scheduler (meta server): each failed attempt is logged.
META_CONNECT_FAILED = Shape(r"Failed to connect to the meta server node url: (?P<url>\S+)")

# Scheduler.
REGISTERED = Shape(
    rf"The new node: (?P<node>\S+?)\(role: MS_WORKER\), rank id: (?P<rank>{N}), "
    rf"device id: (?P<device>{N}), hostname: (?P<host>[^,]*), ip: (?P<ip>\S+) is "
    r"registered successfully\. Currently registered node number: \d+, "
    rf"expected node number: (?P<expected>{N})"
)
UNREGISTERED = Shape(r"Node (?P<node>\S+) has unregistered\.")
TIMED_OUT = Shape(r"The node: (?P<node>\S+) is timed out\.")
"""The scheduler lost a worker's heartbeat (meta_server_node.cc UpdateTopoState)."""
GAVE_UP = Shape(r"There are [1-9][0-9]* abnormal compute graph nodes")
"""The scheduler's shutdown found nodes that left without unregistering (meta_server_node.cc
Finalize): it raises `The total number of timed out node is N` and exits with an exception,
and msrun, seeing its scheduler fail, stops every worker still running: the job is over."""
ASSIGNED = Shape(
    r"Assign rank id of node id: (?P<node>[^,\s]+), role: MS_WORKER, with host ip: [^,\s]+, "
    rf"old rank id: {N}, new rank id: (?P<rank>{N})"
)
"""Without `--node_rank` the scheduler assigns the ranks once every worker registered
(sorted by host address): the rank a registration line showed is provisional."""

# Cluster lines of a worker (read.cluster): the registration handshake and the groups.
CONNECTED = Shape(r"Connection \d+ source: \S+, destination: \S+")
"""tcp_comm.cc `Connect]`: a connection opened (before registering: to the scheduler)."""
TOPOLOGY_WAIT = Shape(r"Topology build timed out\., retry\(")
CLUSTER_BUILT = Shape(r"Cluster is successfully initialized")
GROUP_CREATED = Shape(
    r"Create collective communication group: (?P<name>[^\s\[]+) \[const vector\]"
    r"\{(?P<members>[0-9, ]*)\}"
)

# msrun's own lines (console, or msrun's GLOG file).
MSRUN_SOURCE = "mindspore/parallel/cluster/"
WORKER_START = Shape(
    rf"Start worker process with rank id:(?P<rank>{N}|None), log file:(?P<file>.*?)\. "
)
SCHEDULER_START = Shape(r"Start scheduler process, log file:")
WORKER_EXIT = Shape(
    rf"Worker process (?P<pid>{N}) exit with exception\.(?: Error code: (?P<code>-?{N})\.)?"
)
KILL_ALL = Shape(r"There's worker exits with exception, kill all other workers")
ALL_OK = Shape(r"All workers successfully exit")
TERMINATE_ALL = Shape(r"msrun process received SIG[A-Z]+(?: \([^)]*\))?, terminating all workers")
"""msrun itself was stopped (Ctrl+C, SIGTERM) and stops every worker (_api.py's signal
handler): whatever they were doing, none goes on."""

# Training progress, most specific first.
LOSS_MONITOR = Shape(rf"epoch: (?P<epoch>{N}),? step: (?P<step>{N}), loss is (?P<loss>\S+)")
TIME_MONITOR = Shape(r"epoch time: [0-9.]+ ms, per step time: (?P<step_ms>[0-9.]+) ms")
MINDFORMERS = Shape(
    r"\{ ?Epoch:\[\s*(?P<epoch>\d+)/\s*\d+\], step:\[\s*(?P<step>\d+)/\s*(?P<steps>\d+)\], "
    r"loss:\s*\[?(?P<loss>[-+0-9.eE]+|nan|inf)"
    r"(?:.*?per_step_time: (?P<step_ms>[0-9.]+)ms)?"
)
MEGATRON = Shape(
    r"iteration\s+(?P<step>\d+)/\s*\d+ \|"
    r"(?:.*?elapsed time per iteration \(ms\): (?P<step_ms>[0-9.]+))?"
    r"(?:.*? lm loss: (?P<loss>[-+0-9.eE]+|nan|inf))?"
)
EPOCH_STEP = Shape(
    r"\bepoch:?\s*\[?\s*(?P<epoch>\d{1,9})\s*/\s*\d{1,9}\s*\]?,?\s*(?:step|batch):?\s*\[?\s*"
    r"(?P<step>\d{1,12})\s*/\s*(?P<steps>\d{1,12})\s*\]?,?.*?\bloss:?\s*\[?"
    r"(?P<loss>[-+]?[0-9.]+(?:[eE][-+]?\d+)?|nan|inf)",
    re.IGNORECASE,
)
"""The suites' `Epoch e/E, Step s/S, ..., loss: l` in its spellings: MindYOLO (`Epoch 146/500,
Step 52/422, imgsize (640, 640), loss: 3.8198`), MindCV (`Epoch: [1/90], batch: [100/1251],
loss: 6.85`), MindOCR (`epoch: [1/1200] step: [100/125], loss: 2.34`), older MindFormers
(`Epoch:[  1/  1], step:[  116/  125], loss:[2.220/2.220]`)."""
GENERIC_STEP = Shape(
    r"\bstep[=:\s]\s*(?P<step>\d+)\b.*?\bloss[=:\s]\s*(?P<loss>[-+]?[0-9.]+(?:[eE][-+]?\d+)?|nan|inf)",
    re.IGNORECASE,
)
HF_LOGS = Shape(
    r"\{'loss': (?P<loss>[-+]?[0-9.]+(?:[eE][-+]?\d+)?|nan|inf)[,}].*'epoch': [0-9.]+[,}]"
)
"""Hugging Face Trainer's step log, as LLaMA-Factory and TRL print it (`{'loss': 1.4596,
'grad_norm': nan, 'learning_rate': 4.5e-06, 'epoch': 0.66}`): no step number, so each line
counts as the next logged step."""
MEGATRON_STAMP = Shape(r"\[(?P<what>[^\]]+)\] datetime: (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
"""Megatron print_datetime: `[before the start of training step] datetime: 2025-08-01 07:17:08`."""
PIPELINE_STAGES = Shape(rf"pipeline stages: (?P<stages>{N}) > 1")
"""MindFormers: `pipeline stages: 2 > 1, the loss on the last card is valid.`"""
ISO_PREFIX = read_side(r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")

# A process that ended normally says so in one of these (besides the scheduler and msrun).
FINISHED = Shape(
    r"(?:^\[[\w.-]+\].*\bfinished\s*$"
    r"|\b[Tt]raining (?:is )?(?:finished|completed|complete|done|over)\b"
    r"|Training Over"
    r"|after training is done)"
)

TRACEBACK_START = "Traceback (most recent call last):"
FATAL = Shape(r"^Fatal Python error: |\*\*\* Process received signal \*\*\*|^Signal: \w")
"""A process dying of a signal, as Python's faulthandler or a signal handler reports it."""


class AnyOf:
    """One scan for the literals of several shapes: False when a line can match none of
    them (most lines), so they are not tried one by one (a print line met nine of them)."""

    def __init__(self, *shapes: Shape, prefixes: tuple[str, ...] = ()) -> None:
        self.shapes, self._prefixes = shapes, prefixes
        self._exact: re.Pattern[str] | None = None
        self._folded: re.Pattern[str] | None = None

    def _compile(self) -> None:
        from msrunwatch.rules.prefilter import trie_pattern

        exact = {n for s in self.shapes if not s.ignore_case for n in s.needs}
        folded = {n for s in self.shapes if s.ignore_case for n in s.needs}
        self._exact = read_side(trie_pattern(exact | set(self._prefixes)))
        self._folded = read_side(trie_pattern(folded), re.IGNORECASE) if folded else None

    def literals(self) -> set[tuple[str, bool]]:
        """Every literal this scan looks for, with whether its case is ignored."""
        exact = {(n, False) for s in self.shapes if not s.ignore_case for n in s.needs}
        folded = {(n, True) for s in self.shapes if s.ignore_case for n in s.needs}
        return exact | folded | {(p, False) for p in self._prefixes}

    def could_match(self, text: str) -> bool:
        """False when a line can match none of the shapes; always True with the shortcuts
        off (read.shortcuts): each shape's regex decides."""
        if not SWITCH.on:
            return True
        if self._exact is None:
            self._compile()
        assert self._exact is not None
        if self._exact.search(text) is not None:
            return True
        return self._folded is not None and self._folded.search(text) is not None


PLAIN_FACTS = AnyOf(
    MEMORY_LINE,
    TEARDOWN,
    LOSS_MONITOR,
    TIME_MONITOR,
    MINDFORMERS,
    EPOCH_STEP,
    MEGATRON,
    GENERIC_STEP,
    HF_LOGS,
    MEGATRON_STAMP,
    PIPELINE_STAGES,
    FINISHED,
    FATAL,
    prefixes=("[PROF]", "Device ", "MindSpore ", "Used peak", "Actual peak", "[MS_RUN"),
)
"""Everything Extractor._plain and the fault check look for in an un-prefixed line."""

MESSAGE_FACTS = AnyOf(
    META_CONNECT_FAILED, NODE_RANK, SIM_RANK, COMPILE_START, COMPILE_FINISH, PROF_STAGE, TEARDOWN
)
"""Everything Extractor._message looks for in a GLOG line's message."""
CLUSTER_FACTS = AnyOf(CONNECTED, TOPOLOGY_WAIT, CLUSTER_BUILT, GROUP_CREATED)
"""Everything read.cluster looks for in a worker's GLOG message."""


# Compile stage timings at INFO, read without reading the line whole (FileScanner._stages).
STAGE_LINE = read_side(
    rb"\[(?:INFO|DEBUG)\] [A-Za-z_]+\((?P<pid>\d{1,18})(?![0-9])(?:[,:][^)\n]*)?\):"
    rb"(?P<ts>\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{1,3}\.\d{0,3}) "
    rb"\[[^\]\n]*:\d+\] (?:[A-Za-z_][A-Za-z0-9_~:<>]*\] )?"
    rb"(?P<msg>\[PROF\](?P<stage>[A-Za-z_][A-Za-z0-9_]*) costs (?P<ms>[0-9.]+) msec)"
)
"""An ASCII GLOG INFO line whose message begins with a compile stage's timing: GLOG_HEADER
and PROF_STAGE as one bytes pattern, the stage where PROF_STAGE's search would find it."""


def _others(*groups: AnyOf, but: Shape) -> re.Pattern[bytes]:
    """A search for the literals of every shape of the groups but one: where none is in a
    line, no other shape can match it."""
    from msrunwatch.rules.prefilter import trie_pattern

    shapes = [s for group in groups for s in group.shapes if s is not but]
    exact = {n for s in shapes if not s.ignore_case for n in s.needs}
    folded = {n for s in shapes if s.ignore_case for n in s.needs}
    parts = [trie_pattern(exact)] if exact else []
    if folded:  # bytes fold ASCII only: the lines searched are ASCII
        parts.append(f"(?i:{trie_pattern(folded)})")
    return read_side("|".join(parts).encode("utf-8"))


@functools.cache
def stage_only() -> re.Pattern[bytes]:
    """The literals of every other fact a GLOG message is read for (Extractor._message):
    a stage line whose message holds none of them gives nothing but its header and its
    stage."""
    return _others(MESSAGE_FACTS, CLUSTER_FACTS, but=PROF_STAGE)
