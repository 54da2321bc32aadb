"""Turn the chosen lines of one file into facts: identity, memory, compile, progress, hits.

Each kind of line has its module: read.glog (GLOG lines: header, message facts, the
scheduler's and msrun's lines, compile stage timings read from the bytes), read.plain
(prints, tracebacks, the memory summary, progress) and read.records (what they share: the
log record, dates, the rules' findings). The Extractor puts them together: it dispatches a
line to its kind, joins the readers of a file's pieces, and freezes the facts.

Cheap substring tests guard every pattern, so a line only meets the regexes that can
match it. Fault lines are recognised by the rules; this module only records them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from msrunwatch.read import patterns as P
from msrunwatch.read.around import Around
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.glog import GlogLines
from msrunwatch.read.plain import PlainLines
from msrunwatch.rules.matcher import LineMatcher

READ_WHOLE = (FileRole.CONSOLE, FileRole.MSRUN, FileRole.SCHEDULER)
"""Files read line by line whole; in the others (workers' logs) the lines PASSED_OVER are
not read and LossMonitor lines are records of their own (see Extractor.line)."""


class Extractor(GlogLines, PlainLines):
    """The per-file state a FileScanner feeds line by line."""

    def __init__(
        self,
        path: str,
        log_dir: str,
        role: FileRole,
        matcher: LineMatcher,
        rank_from_name: int | None,
    ) -> None:
        super().__init__(matcher, role)
        self.path, self.log_dir = path, log_dir
        self._worker = role not in READ_WHOLE
        self.size = 0
        self._rank_from_name = rank_from_name
        self._encodings: Counter[str] = Counter()
        """Lines that were not UTF-8, by how they were read."""

    def line(self, text: str, lineno: int, offset: int, around: Around) -> None:
        """Read one line; `around` dates it when it has no timestamp of its own. In a
        worker's log, a line PASSED_OVER without a marker is not read at all (the next line
        read starts a new record), and a LossMonitor line is a record of its own."""
        if self._worker and text[:1] in "[e":
            if P.PASSED_OVER.match(text) and not P.INFO_MARKER.search(text):
                return
            if P.BULK_TEXT.match(text):
                self.progress_line(text, lineno, around, offset)
                return
        header = P.GLOG_HEADER.match(text) if text[:1] == "[" else None
        if self.role in (FileRole.CONSOLE, FileRole.MSRUN):
            self._msrun(text, header, lineno, offset)
        elif header is not None:
            fields = header["level"], header["pid"], header["ts"], header["msg"]
            self.glog_line(fields, text, lineno, offset, around)
        else:
            self._unprefixed(text, lineno, offset, around)
        self._last_line = lineno

    def decoded(self, encoding: str) -> None:
        """A line was not UTF-8: read as `encoding` ("invalid": with U+FFFD)."""
        self._encodings[encoding] += 1

    # -- pieces (see read.pieces) -----------------------------------------------------

    def clean(self) -> bool:
        """Whether a reader starting afresh at the next GLOG line would read on as this one
        does: no traceback's frames, bare exception or memory block still open."""
        return (
            self._traceback.state != "frames" and self._deferred is None and not self._memory.open
        )

    def stop(self, when: float | None) -> None:
        """The piece ends before a GLOG line dated `when`: it dates what waits for one, and
        the record ends. Nothing that refers to the block is kept (the state is sent on)."""
        for key, _ in self.undated():
            self.settle(key, when)
        self._new_record()
        self._around, self._deferred = None, None

    def absorb(self, later: Extractor, shift: int) -> None:
        """Continue with the state of a reader of the rest of the file (whose lines are
        numbered from `shift` on), as one reader of the whole file would have it."""
        self.size = later.size
        if later.block_time is not None:
            self.block_time = later.block_time
        for name in _LAST_WINS:
            if (value := getattr(later, name)) is not None:
                setattr(self, name, value)
        for pid, count in later._pids.items():
            if len(self._pids) < 64 or pid in self._pids:
                self._pids[pid] += count
        if self._first_time is None:
            self._first_time = later._first_time
        if self._first_dated is None:
            self._first_dated = later._first_dated
        self._last_time = _latest(self._last_time, later._last_time)
        self._activity = _latest(self._activity, later._activity)
        self._memory.absorb(later._memory, shift)
        self._compile.absorb(later._compile, shift)
        self._progress.absorb(later._progress, shift)
        self._absorb_ends(later, shift)
        self._absorb_hits(later, shift)
        self._registrations.update(later._registrations)
        self._assigned.update(later._assigned)
        self._unregistered.extend(later._unregistered)
        for node, when in later._timed_out.items():
            self._timed_out.setdefault(node, when)
        self._cluster.absorb(later._cluster)
        self._worker_starts.extend(later._worker_starts)
        self._worker_exits.extend(replace(e, line=e.line + shift) for e in later._worker_exits)
        self._all_ok = self._all_ok or later._all_ok
        self._encodings.update(later._encodings)

    def _absorb_ends(self, later: Extractor, shift: int) -> None:
        if later._finished_line is not None:
            self._finished_line = later._finished_line + shift
        if later._uncaught_line is not None:
            self._uncaught_line = later._uncaught_line + shift
        self._training_started = self._training_started or later._training_started
        self._meta_failures += later._meta_failures
        if later._last_fault is not None:
            self._last_fault = (later._last_fault[0] + shift, later._last_fault[1])
        elif later._progress.seen:
            self._last_fault = None
        if later._kill_all_time is not None:
            self._kill_all_time = later._kill_all_time
        if self._gave_up_time is None:
            self._gave_up_time = later._gave_up_time
        if self._terminate_all_time is None:
            self._terminate_all_time = later._terminate_all_time

    def __getstate__(self) -> dict[str, object]:
        """Sent between processes without the matcher (each process has its own)."""
        state = dict(self.__dict__)
        state["matcher"], state["_inert"] = None, set()
        return state

    # -- results ----------------------------------------------------------------------

    def close(self) -> None:
        """End of file: settle pending hits and the memory block."""
        self._new_record()
        end = self._normal_end()
        if end and self._last_fault and self._last_fault[0] < end:
            self._last_fault = None
        self._memory.close()

    def news(self) -> tuple[object, ...]:
        """What can change a verdict at once: a new kind of fault line, the log's normal
        end, the scheduler's or msrun's word on a worker. The live view judges again as
        soon as this changes, and otherwise waits (steps alone are not urgent)."""
        return (
            len(self._hits),
            len(self._pending),
            self._normal_end(),
            self._rank_from_log,
            len(self._registrations),
            len(self._unregistered),
            len(self._worker_exits),
            self._kill_all_time,
            self._gave_up_time,
            self._terminate_all_time,
            self._all_ok,
        )

    def _ended_after_fault(self) -> bool:
        fault, end = self._last_fault, self._normal_end()
        return fault is not None and end is not None and end > fault[0]

    def facts(self, lines: int) -> FileFacts:
        """A frozen copy of what the file has said so far."""
        times = (self._last_time, self.block_time, self._activity)
        last = max((t for t in times if t is not None), default=None)
        pid = self._pids.most_common(1)[0][0] if self._pids else None
        return FileFacts(
            path=self.path,
            log_dir=self.log_dir,
            role=self.role,
            size=self.size,
            lines=lines,
            rank_from_name=self._rank_from_name,
            rank_from_log=self._rank_from_log,
            node_id=self._node_id,
            world_size=self._world_size,
            sim_level=self._sim_level,
            pid=int(pid) if pid is not None else None,
            first_time=self._first_dated if self._first_time is None else self._first_time,
            last_time=last,
            memory=self._memory.summary,
            compile=self._compile.stats(),
            progress=self._progress.progress,
            finished_line=self._normal_end(),
            training_started=self._training_started,
            pipeline_stages=self._pipeline_stages,
            meta_connect_failures=self._meta_failures,
            last_fault=self._last_fault if not self._ended_after_fault() else None,
            meta_server_url=self._meta_url,
            hits=self._findings(),
            registrations=tuple(
                replace(r, rank=self._assigned.get(r.node, r.rank))
                for r in self._registrations.values()
            ),
            unregistered_nodes=tuple(self._unregistered),
            timed_out_nodes=tuple(self._timed_out.items()),
            worker_starts=tuple(self._worker_starts),
            worker_exits=tuple(self._worker_exits),
            kill_all_time=self._kill_all_time,
            scheduler_gave_up_time=self._gave_up_time,
            terminate_all_time=self._terminate_all_time,
            all_workers_ok=self._all_ok,
            encodings=tuple(sorted(self._encodings.items())),
            handshake=self._cluster.handshake(),
            groups=self._cluster.groups(),
        )


_LAST_WINS = (
    "_rank_from_log",
    "_node_id",
    "_world_size",
    "_sim_level",
    "_pipeline_stages",
    "_meta_url",
)
"""Facts the latest line that states them decides."""


def _latest(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None or a >= b else b
