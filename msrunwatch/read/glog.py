"""GLOG lines (`[LEVEL] MODULE(pid,...):time [source:line] func] message`): their header's
time and process, the facts their messages carry (rank identity, compile markers, the
scheduler's registrations, msrun's word on its workers), and the rules on the lines of
WARNING and above. Faults are never logged at INFO, so INFO lines are read only for their
facts; most are not read at all (see read.scan)."""

from __future__ import annotations

from collections import Counter

from msrunwatch.read import patterns as P
from msrunwatch.read.around import Around
from msrunwatch.read.cluster import ClusterLines
from msrunwatch.read.facts import FileRole, Registration, WorkerExit
from msrunwatch.read.records import Records
from msrunwatch.read.timestamps import parse_glog
from msrunwatch.rules.matcher import LineMatcher

QUIET_LEVELS = ("INFO", "DEBUG")
StageTiming = tuple[str, str, str, str, int]
"""A compile stage timing line read from the bytes: its pid, time, stage, msec and line
number (0 when nothing needs it: only compile_graph's and the last line's are counted)."""
FAULT_LEVELS = ("ERROR", "CRITICAL")


class GlogLines(Records):
    """What a file's GLOG lines said: times, processes, identity, compiles, the cluster."""

    def __init__(self, matcher: LineMatcher, role: FileRole) -> None:
        super().__init__(matcher, role)
        self._pids: Counter[str] = Counter()
        self._first_time: float | None = None
        self._last_time: float | None = None
        self._rank_from_log: int | None = None
        self._node_id: str | None = None
        self._world_size: int | None = None
        self._sim_level: int | None = None
        self._meta_failures = 0
        self._meta_url: str | None = None
        self._registrations: dict[str, Registration] = {}
        self._assigned: dict[str, int] = {}
        """Scheduler: the rank it assigned each node id (no `--node_rank`)."""
        self._unregistered: list[str] = []
        self._timed_out: dict[str, float | None] = {}
        """Scheduler: the node ids it timed out, with when it first said so."""
        self._cluster = ClusterLines()
        self._worker_starts: list[tuple[int, str]] = []
        self._worker_exits: list[WorkerExit] = []
        self._kill_all_time: float | None = None
        self._gave_up_time: float | None = None
        self._terminate_all_time: float | None = None
        """Scheduler: when its shutdown found abnormal nodes (P.GAVE_UP)."""
        self._all_ok = False

    def glog_line(
        self,
        fields: tuple[str, str, str, str],
        text: str,
        lineno: int,
        offset: int,
        around: Around,
    ) -> None:
        """A GLOG line of a worker's or the scheduler's log; `fields`: its header's level,
        pid and time, and its message: GLOG_HEADER's groups (Extractor.line), or for a
        worker's WARNING/ERROR/CRITICAL line those the scanner read in its block pass
        (P.CANDIDATE_LINE's `fault`), which is not matched again (issue 22)."""
        level, pid, ts, msg = fields
        self._traceback.reset()
        when = self._header(ts, pid, lineno)
        self._line_time = when or self._line_time
        self._around, self._floor = None, around.start
        self._message(msg, lineno, when)
        if level not in QUIET_LEVELS:  # faults are never logged at INFO
            if level in FAULT_LEVELS:
                self._fault(lineno, text)
            self._rules(text, lineno, offset, when, True, level)
        self._last_line = lineno

    def stage_lines(self, timings: list[StageTiming], start: int) -> None:
        """GLOG INFO lines whose messages are compile stage timings and hold nothing else
        `_message` looks for (the scanner checked each: P.STAGE_LINE, P.stage_only), one
        after another with no other line read between them: what `line` does with each of
        them, at once (issue 22: a real log has about 80 a MiB). Each line ends the record
        before it, so only the first can end one; `start`: where the last one starts."""
        self._traceback.reset()
        self._new_record()
        pids, first, last, latest = self._pids, self._first_time, self._last_time, None
        stages = []
        for pid, ts, stage, ms, lineno in timings:
            when = parse_glog(ts)
            if when is not None:
                latest = when or latest
                if first is None:
                    first = when
                if last is None or when > last:
                    last = when
            if len(pids) < 64 or pid in pids:
                pids[pid] += 1
            stages.append((stage, ms, when, lineno))
        self._first_time, self._last_time = first, last
        self._line_time = latest or self._line_time
        self._around, self._floor = None, start
        self._compile.stages(stages)
        self._last_line = timings[-1][4]

    @property
    def first_time_known(self) -> bool:
        return self._first_time is not None

    def note_first_time(self, when: float | None) -> None:
        """The file's first GLOG line (INFO included): when the process started logging."""
        if when is not None and (self._first_time is None or when < self._first_time):
            self._first_time = when

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
        """Facts carried by a GLOG line's message (a new one here must be among the shapes
        P.stage_only looks for: a stage line holding none is read without this)."""
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
        elif P.GAVE_UP.search(msg) and self._gave_up_time is None:
            self._gave_up_time = when if when is not None else self._line_time

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
        elif P.TERMINATE_ALL.search(msg) and self._terminate_all_time is None:
            self._terminate_all_time = when if when is not None else self._line_time
        self._rules(text, lineno, offset, when, True, header["level"])  # type: ignore[index]
