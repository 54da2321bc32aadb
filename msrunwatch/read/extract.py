"""Turn the chosen lines of one file into facts: identity, memory, compile, progress, hits.

Cheap substring tests guard every pattern, so a line only meets the regexes that can
match it. Fault lines are recognised by the rules; this module only records them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from msrunwatch.read import patterns as P
from msrunwatch.read import shortcuts
from msrunwatch.read.around import Around
from msrunwatch.read.cluster import ClusterLines
from msrunwatch.read.facts import FileFacts, FileRole, Hit, Registration, WorkerExit
from msrunwatch.read.memory import MemoryBlock
from msrunwatch.read.progress import CompileTracker, ProgressTracker
from msrunwatch.read.timestamps import parse_glog, parse_iso
from msrunwatch.read.traceback import CHAINED, Traceback, informative, is_bare
from msrunwatch.rules.matcher import LineMatch, LineMatcher

QUIET_LEVELS = ("INFO", "DEBUG")
READ_WHOLE = (FileRole.CONSOLE, FileRole.MSRUN, FileRole.SCHEDULER)
"""Files read line by line whole; in the others (workers' logs) the lines PASSED_OVER are
not read and LossMonitor lines are records of their own (see Extractor.line)."""
FAULT_LEVELS = ("ERROR", "CRITICAL")
MAX_DISTINCT_HITS = 256
"""Distinct (rule, fingerprint) pairs kept per file; repeats only raise a count."""
MAX_TEXT = 400
MAX_INERT = 4096
"""Distinct inert lines remembered per file."""


_DATED_START = frozenset("[0123456789")
"""First characters of a line that may begin with a date (checked before the regex)."""


class Extractor:
    """The per-file state a FileScanner feeds line by line."""

    def __init__(
        self,
        path: str,
        log_dir: str,
        role: FileRole,
        matcher: LineMatcher,
        rank_from_name: int | None,
    ) -> None:
        self.path, self.log_dir, self.role = path, log_dir, role
        self.matcher = matcher
        self._worker = role not in READ_WHOLE
        self._every_rule = not shortcuts.enabled()
        """The shortcuts are off (see read.shortcuts): every rule tried on every line, and
        every line read again however often it repeats."""
        self.size = 0
        self.block_time: float | None = None
        """Time of the last GLOG line (INFO included) of the blocks read so far."""
        self._rank_from_name = rank_from_name
        self._rank_from_log: int | None = None
        self._node_id: str | None = None
        self._world_size: int | None = None
        self._sim_level: int | None = None
        self._pids: Counter[str] = Counter()
        self._first_time: float | None = None
        self._first_dated: float | None = None
        """The first print line with a date of its own: the start of a log without GLOG."""
        self._last_time: float | None = None
        self._memory = MemoryBlock()
        self._compile = CompileTracker()
        self._progress = ProgressTracker()
        self._finished_line: int | None = None
        self._training_started = False
        self._pipeline_stages: int | None = None
        self._meta_failures = 0
        self._meta_url: str | None = None
        self._activity: float | None = None
        self._hits: dict[tuple[str, ...], Hit] = {}
        self._registrations: dict[str, Registration] = {}
        self._assigned: dict[str, int] = {}
        """Scheduler: the rank it assigned each node id (no `--node_rank`)."""
        self._unregistered: list[str] = []
        self._timed_out: dict[str, float | None] = {}
        self._cluster = ClusterLines()
        self._worker_starts: list[tuple[int, str]] = []
        self._worker_exits: list[WorkerExit] = []
        self._kill_all_time: float | None = None
        self._all_ok = False
        self._last_line = 0
        self._line_time: float | None = None
        """The time of the last line dated (its own, or the GLOG line before it)."""
        self._around: Around | None = None
        """The latest un-prefixed line, not dated yet: most never need it."""
        self._floor = 0
        """Where in the block the last dated line starts: dating searches back no further."""
        self._record_specific = False
        self._traceback = Traceback()
        self._deferred: tuple[str, int, int, Around] | None = None
        """A bare exception line waiting for the first informative line of its body."""
        self._last_fault: tuple[int, str] | None = None
        """The latest fault line with nothing normal (progress, an end) after it."""
        self._pending: list[Hit] = []
        self._fired = False
        """A rule matched the line being read."""
        self._inert: set[str] = set()
        """Un-prefixed lines seen to change nothing: their repeats are not read again."""
        self._encodings: Counter[str] = Counter()
        """Lines that were not UTF-8, by how they were read."""
        self._undated: dict[tuple[str, ...], int] = {}
        self._settled: set[tuple[str, ...]] = set()

    # -- per line ---------------------------------------------------------------------

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
            self._traceback.reset()
            when = self._header(header["ts"], header["pid"], lineno)
            self._line_time = when or self._line_time
            self._around, self._floor = None, around.start
            self._message(header["msg"], lineno, when)
            if header["level"] not in QUIET_LEVELS:  # faults are never logged at INFO
                if header["level"] in FAULT_LEVELS:
                    self._fault(lineno, text)
                self._rules(text, lineno, offset, when, True, header["level"])
        else:
            self._unprefixed(text, lineno, offset, around)
        self._last_line = lineno

    def stage_line(self, pid: str, ts: str, stage: str, ms: str, lineno: int, start: int) -> None:
        """A GLOG INFO line whose message is a compile stage's timing and holds nothing else
        `_message` looks for (the scanner checked: P.STAGE_LINE, P.stage_only): what `line`
        does with it, without reading it whole."""
        self._traceback.reset()
        when = self._header(ts, pid, lineno)
        self._line_time = when or self._line_time
        self._around, self._floor = None, start
        self._compile.stage(stage, ms, when, lineno)
        self._last_line = lineno

    def _unprefixed(self, text: str, lineno: int, offset: int, around: Around) -> None:
        """A line without a GLOG prefix: a print, a traceback, an exception's body."""
        if text.startswith(P.TRACEBACK_START) or lineno != self._last_line + 1:
            self._new_record()
        if text in self._inert and self._traceback.state != "frames" and self._deferred is None:
            self._around = around
            return
        if text[:1] in _DATED_START and P.ISO_PREFIX.match(text):
            self._dated(parse_iso(text[:32]))
        self._fired = False
        kind = self._traceback.feed(text)
        if self._deferred is not None and kind == "text" and informative(text):
            self._flush_deferred(text.strip())
        self._around = around
        facts = P.PLAIN_FACTS.could_match(text)
        if facts:
            self._plain(text, lineno, around)
        if kind == "exception" or (facts and P.FATAL.search(text)):
            self._fault(lineno, text)
        if kind == "exception" and is_bare(text):
            self._deferred = (text, lineno, offset, around)
        elif text.strip():
            self._rules(text, lineno, offset, None, False, kind=kind)
        if kind == "text" and not facts and self._no_news(text):
            self._remember_inert(text)

    def at_rest(self) -> bool:
        """No record is open that a quiet line (see read.quiet) would continue: no
        traceback's frames, no bare exception waiting for its body."""
        return self._traceback.state != "frames" and self._deferred is None

    def quiet_lines(self, count: int, last: int) -> None:
        """`count` quiet lines were passed over, the last of them line `last`, the reader at
        rest: what reading them would have done. A line that does not follow the one read
        before it ends the record (see _unprefixed); ending it twice is ending it once."""
        if last - self._last_line != count:
            self._new_record()
        self._last_line = last

    def _no_news(self, text: str) -> bool:
        """The line changed nothing but the record it is in (no rule fired, no traceback
        began or ended): the same text later can skip the reading (real logs print the
        same dataset dumps and compile traces again and again)."""
        return (
            not self._fired
            and not self.matcher.gave_up
            and self._traceback.state != "frames"
            and self._deferred is None
            and not text.startswith((P.TRACEBACK_START, *CHAINED))
        )

    def _remember_inert(self, text: str) -> None:
        if self._every_rule:  # the shortcuts are off: every repeat is read again
            return
        if len(self._inert) >= MAX_INERT:
            self._inert.clear()
        self._inert.add(text)

    def _flush_deferred(self, body: str | None = None) -> None:
        """Match a bare exception line (`RuntimeError:`), with the first line of its body
        that says something: the message a person would read."""
        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return
        text, lineno, offset, around = deferred
        combined = f"{text.rstrip().rstrip(':')}: {body}" if body else text
        self._around, self._floor = around, 0
        self._rules(combined, lineno, offset, None, False, kind="exception", fallbacks=bool(body))

    def _fault(self, lineno: int, text: str) -> None:
        """A traceback's end, a fatal signal or an ERROR line: if nothing normal follows,
        the log ends in a fault."""
        self._last_fault = (lineno, text[:MAX_TEXT])

    def new_block(self) -> None:
        """The scanner moved to a new block: positions in the old one mean nothing now."""
        self._around, self._floor = None, 0

    def date(self) -> float | None:
        """The time of the current line: that of the nearest GLOG line before it (INFO
        included), looked up only when something needs it, and whatever the blocks."""
        around = self._around
        if around is not None:
            found = around.time_before(self._floor)
            if found is None and self._floor == 0:
                found = self.block_time  # the last GLOG line of the blocks before
            self._line_time = found if found is not None else self._line_time
            self._around, self._floor = None, around.start
        return self._line_time

    def progress_line(
        self, text: str, lineno: int, around: Around, offset: int, parse: bool = True
    ) -> None:
        """A LossMonitor line: a record of its own, outside any traceback (stdout's prints
        interleave with stderr's tracebacks), read by the rules (a NaN loss is a finding)
        and, when `parse`, for progress (the scanner reads these lines in bulk and parses
        only the last few of a block: see FileScanner). The line after it starts a record."""
        self._new_record()
        self._around = around
        if parse and self._progress.feed(text, lineno, self.date):
            self._last_fault = None
            self._note_activity(self._progress.latest_time)
        self._rules(text, lineno, offset, None, False, kind="text")

    def skipped_progress(self, count: int, epochs: list[tuple[int, int]]) -> None:
        """Progress lines the scanner counted but did not parse (only the latest matter),
        with their (epoch, step): how many steps an epoch has."""
        self._progress.skipped(count, epochs)

    @property
    def first_time_known(self) -> bool:
        return self._first_time is not None

    def decoded(self, encoding: str) -> None:
        """A line was not UTF-8: read as `encoding` ("invalid": with U+FFFD)."""
        self._encodings[encoding] += 1

    def note_first_time(self, when: float | None) -> None:
        """The file's first GLOG line (INFO included): when the process started logging."""
        if when is not None and (self._first_time is None or when < self._first_time):
            self._first_time = when

    def _dated(self, when: float | None) -> None:
        """A print line with its own date (a suite's `[2024-02-01 01:45:11] ... INFO -`
        logger): in a print-only log it shows when the process started (the rank is
        starting, not unknown) and that it is active."""
        if self._first_dated is None:
            self._first_dated = when
        self._note_activity(when)

    def _note_activity(self, when: float | None) -> None:
        """A line with its own non-GLOG timestamp (Megatron, MindFormers) shows activity."""
        if when is not None and (self._activity is None or when > self._activity):
            self._activity = when

    def _header(self, ts: str, pid: str, lineno: int) -> float | None:
        self._new_record()
        when = parse_glog(ts)
        if when is not None:
            if self._first_time is None:
                self._first_time = when
            if self._last_time is None or when > self._last_time:
                self._last_time = when
        if len(self._pids) < 64 or pid in self._pids:
            self._pids[pid] += 1
        return when

    def _message(self, msg: str, lineno: int, when: float | None) -> None:
        """Facts carried by a GLOG line's message."""
        if self.role is FileRole.SCHEDULER:
            self._scheduler(msg, when)
            return
        if P.CLUSTER_FACTS.could_match(msg):
            self._cluster.message(msg, when)
        if not P.MESSAGE_FACTS.could_match(msg):
            return
        if m := P.META_CONNECT_FAILED.search(msg):
            self._meta_failures += 1
            self._meta_url = m["url"]
        elif m := P.NODE_RANK.search(msg):
            self._rank_from_log, self._node_id = int(m["rank"]), m["node"]
        elif m := P.SIM_RANK.search(msg):
            self._rank_from_log = int(m["rank"])
            self._world_size, self._sim_level = int(m["size"]), int(m["level"])
        elif (
            P.COMPILE_START.could_match(msg)
            or P.COMPILE_FINISH.could_match(msg)
            or P.PROF_STAGE.could_match(msg)
        ):
            self._compile.glog_line(msg, when, lineno)
        elif P.TEARDOWN.search(msg):
            self._finished_line = lineno

    def _scheduler(self, msg: str, when: float | None) -> None:
        if m := P.REGISTERED.search(msg):
            self._registrations[m["node"]] = Registration(
                m["node"],
                int(m["rank"]),
                m["host"],
                int(m["expected"]),
                int(m["device"]),
                m["ip"],
                when,
            )
        elif m := P.UNREGISTERED.search(msg):
            self._unregistered.append(m["node"])
        elif m := P.TIMED_OUT.search(msg):
            self._timed_out.setdefault(m["node"], when)
        elif m := P.ASSIGNED.search(msg):
            self._assigned[m["node"]] = int(m["rank"])

    def _plain(self, text: str, lineno: int, around: Around) -> None:
        """Facts carried by an un-prefixed line (stdout prints, the memory block)."""
        if text.startswith("[PROF]"):
            self._compile.bare_line(text, self.date(), lineno)
        elif self._memory.feed(text, lineno, self.date):
            if P.TEARDOWN.search(text):
                self._finished_line = lineno
            elif lineno != self._last_line + 1 and P.TEARDOWN.search(around.previous_line()):
                self._finished_line = lineno - 1  # the summary's INFO header was skipped
        elif self._progress.feed(text, lineno, self.date):
            self._last_fault = None
            self._note_activity(self._progress.latest_time)
        elif m := P.MEGATRON_STAMP.search(text):
            self._note_activity(parse_iso(m["ts"]))
            if m["what"] == "before the start of training step":
                self._training_started = True
            elif m["what"] == "after training is done":
                self._finished_line = lineno
        elif m := P.PIPELINE_STAGES.search(text):
            self._pipeline_stages = int(m["stages"])
        elif P.FINISHED.search(text):
            self._finished_line = lineno

    def _msrun(self, text: str, header: object, lineno: int, offset: int) -> None:
        """msrun's own lines; the worker lines it tails to its console are skipped."""
        if header is None:
            if m := P.WORKER_START.search(text):
                rank = int(m["rank"]) if m["rank"] != "None" else -1
                self._worker_starts.append((rank, m["file"]))
            return
        src, msg = header["src"], header["msg"]  # type: ignore[index]
        if P.MSRUN_SOURCE not in src:
            return
        when = self._header(header["ts"], header["pid"], lineno)  # type: ignore[index]
        if m := P.WORKER_EXIT.search(msg):
            code = int(m["code"]) if m["code"] is not None else None
            self._worker_exits.append(WorkerExit(int(m["pid"]), code, lineno, when))
        elif P.KILL_ALL.search(msg):
            self._kill_all_time = when
        elif P.ALL_OK.search(msg):
            self._all_ok = True
        self._rules(text, lineno, offset, when, True, header["level"])  # type: ignore[index]

    # -- rules ------------------------------------------------------------------------

    def _rules(
        self,
        text: str,
        lineno: int,
        offset: int,
        when: float | None,
        exact: bool,
        level: str = "",
        kind: str = "",
        fallbacks: bool = False,
    ) -> None:
        """Record the rules that match a line; `fallbacks`: only the fallback ones (the
        line was made of an exception and its body, whose own line the others will read)."""
        frame = self._traceback.frame if kind == "exception" else None
        kind = kind or ("glog" if level else "text")
        for found in self.matcher.match(text, level, kind, frame, every_rule=self._every_rule):
            self._fired = True
            if fallbacks and not found.rule.fallback:
                continue
            if not exact:
                when = self.date()
            hit = self._hit(found, text, lineno, offset, when, exact)
            if found.rule.fallback:
                if not self._record_specific:
                    self._pending.append(hit)
            else:
                self._record_specific = True
                self._pending.clear()
                self._keep(hit)

    @staticmethod
    def _hit(
        found: LineMatch, text: str, lineno: int, offset: int, when: float | None, exact: bool
    ) -> Hit:
        return Hit(
            rule=found.rule.id,
            line=lineno,
            offset=offset,
            time=when,
            time_exact=exact and when is not None,
            message=found.message,
            fingerprint=found.fingerprint,
            captures=found.captures,
            text=text[:MAX_TEXT],
            subject=found.subject,
            overrides=found.overrides,
        )

    def _keep(self, hit: Hit) -> None:
        key = _key(hit)
        old = self._hits.get(key)
        if old is not None:
            self._hits[key] = replace(old, count=old.count + 1)
        elif len(self._hits) < MAX_DISTINCT_HITS:
            self._hits[key] = hit
            if not hit.time_exact and key not in self._settled:
                self._undated[key] = hit.offset

    def undated(self) -> list[tuple[tuple[str, ...], int]]:
        """Hits dated only by the line before them, with their file offsets."""
        pending = [
            (key, h.offset)
            for h in self._pending
            if not h.time_exact and (key := _key(h)) not in self._settled
        ]
        return [*self._undated.items(), *pending]

    def settle(self, key: tuple[str, ...], when: float | None) -> None:
        """Date a hit by the first GLOG line after it: an exception is printed as the
        process dies, and the line before it can be minutes older."""
        self._undated.pop(key, None)
        if when is None:
            return
        self._settled.add(key)
        if key in self._hits:
            self._hits[key] = replace(self._hits[key], time=when)
        self._pending = [replace(h, time=when) if _key(h) == key else h for h in self._pending]

    def _new_record(self) -> None:
        """A new log record starts: the most specific fallback hits of the last one stand."""
        if self._deferred is not None:
            self._flush_deferred()
        if self._pending:
            levels = {h.rule: self.matcher.fallback_level(h.rule) for h in self._pending}
            keep = min(levels.values())
            for hit in self._pending:
                if levels[hit.rule] == keep:
                    self._keep(hit)
        self._pending.clear()
        self._record_specific = False

    # -- results ----------------------------------------------------------------------

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
        self._training_started = self._training_started or later._training_started
        self._meta_failures += later._meta_failures
        if later._last_fault is not None:
            self._last_fault = (later._last_fault[0] + shift, later._last_fault[1])
        elif later._progress.seen:
            self._last_fault = None
        if later._kill_all_time is not None:
            self._kill_all_time = later._kill_all_time

    def _absorb_hits(self, later: Extractor, shift: int) -> None:
        for key, hit in later._hits.items():
            old = self._hits.get(key)
            if old is not None:
                self._hits[key] = replace(old, count=old.count + hit.count)
            elif len(self._hits) < MAX_DISTINCT_HITS:
                self._hits[key] = replace(hit, line=hit.line + shift)
        self._pending.extend(replace(h, line=h.line + shift) for h in later._pending)

    def __getstate__(self) -> dict[str, object]:
        """Sent between processes without the matcher (each process has its own)."""
        state = dict(self.__dict__)
        state["matcher"], state["_inert"] = None, set()
        return state

    def close(self) -> None:
        """End of file: settle pending hits and the memory block."""
        self._new_record()
        if self._finished_line and self._last_fault and self._last_fault[0] < self._finished_line:
            self._last_fault = None
        self._memory.close()

    def news(self) -> tuple[object, ...]:
        """What can change a verdict at once: a new kind of fault line, the log's normal
        end, the scheduler's or msrun's word on a worker. The live view judges again as
        soon as this changes, and otherwise waits (steps alone are not urgent)."""
        return (
            len(self._hits),
            len(self._pending),
            self._finished_line,
            self._rank_from_log,
            len(self._registrations),
            len(self._unregistered),
            len(self._worker_exits),
            self._kill_all_time,
            self._all_ok,
        )

    def _ended_after_fault(self) -> bool:
        fault, end = self._last_fault, self._finished_line
        return fault is not None and end is not None and end > fault[0]

    def facts(self, lines: int) -> FileFacts:
        """A frozen copy of what the file has said so far."""
        pending = {_key(h): h for h in self._pending}
        hits = {**self._hits, **{k: v for k, v in pending.items() if k not in self._hits}}
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
            finished_line=self._finished_line,
            training_started=self._training_started,
            pipeline_stages=self._pipeline_stages,
            meta_connect_failures=self._meta_failures,
            last_fault=self._last_fault if not self._ended_after_fault() else None,
            meta_server_url=self._meta_url,
            hits=tuple(sorted(hits.values(), key=lambda h: h.line)),
            registrations=tuple(
                replace(r, rank=self._assigned.get(r.node, r.rank))
                for r in self._registrations.values()
            ),
            unregistered_nodes=tuple(self._unregistered),
            timed_out_nodes=tuple(self._timed_out.items()),
            worker_starts=tuple(self._worker_starts),
            worker_exits=tuple(self._worker_exits),
            kill_all_time=self._kill_all_time,
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


def _key(hit: Hit) -> tuple[str, ...]:
    """Equal messages about different ranks (the scheduler on two nodes) stay apart."""
    return (hit.rule, hit.fingerprint, hit.subject or "")
