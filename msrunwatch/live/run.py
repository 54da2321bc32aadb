"""The live engine: tails every log of a run and judges it again as it grows.

One thread owns a LiveRun and calls `tick()`; nothing in here is shared with other
threads except the DirtySet the file watcher fills. Each tick stats every followed file
and reads what is new (at most `per_tick` bytes in all, so catching up on a large run never
blocks the view) into the same scanners triage uses. The verdict is recomputed at once when
a file says something urgent (a new fault, a restart, a new file) and otherwise at a pace
set by what judging costs, so a thousand busy ranks cannot make the engine spend all its
time re-judging steps. Each tick returns an immutable `Update`.
"""

from __future__ import annotations

import resource
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from msrunwatch.core.errors import InputError
from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.postmortem import local_seconds, with_clock
from msrunwatch.judge.clock import run_over
from msrunwatch.judge.conditions import rank_silences
from msrunwatch.judge.context import Context, Hang
from msrunwatch.judge.model import Finding, RankReport, Report, Status
from msrunwatch.judge.statuses import progress_mark
from msrunwatch.judge.verdict import judge
from msrunwatch.live.changes import Changes
from msrunwatch.live.newest import newest_runs
from msrunwatch.live.tail import Change, FileTail
from msrunwatch.read.discover import (
    LogFile,
    candidates,
    console_file,
    file_size,
    log_file,
)
from msrunwatch.read.encoding import Transcoder, note
from msrunwatch.read.facts import FileFacts
from msrunwatch.read.runstate import RunFacts, assemble
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from msrunwatch.rules.variables import STALL_CADENCES

AT_WORK = frozenset({"starting", "compiling", "training", "waiting"})
"""Statuses of a rank still at work, or waiting for msrun to stop it (by value)."""
GONE = frozenset({"finished", "failed", "killed", "timed-out", "stopped"})
"""Statuses of a rank whose process has ended."""
PER_FILE = 1 << 20
"""Bytes read from one file per tick: large enough to catch up fast, small enough to share."""
PER_TICK = 4 << 20
"""Bytes read per tick in all: the bound on one tick's work while catching up or falling
behind (at 32 MiB the first tick of a 512-rank run read and scanned for seconds before
anything was said). Files take turns: the next tick starts where this one's budget ran out,
so no file waits for more than the backlog ahead of it in the ring."""
RESCAN_S = 2.0
"""New files are looked for this often even without a file event (network file systems)."""
JUDGE_S = 1.0
"""The verdict is recomputed at least this often, so silences grow without new lines."""
MAX_DESCRIPTORS = 256
"""Files read with their descriptor kept open, the most recently grown ones; the rest are
opened again when they grow. Never more than a quarter of the process's RLIMIT_NOFILE."""
IDLE_TICK_S = 2.0
"""Once the run has ended and nothing grows, the files are looked at this often (a new file,
or a stop, wakes the tick at once): a finished run of 1,000 ranks costs next to nothing."""
SETTLED_S = 5.0
"""A run whose verdict is final is called ended once no followed file has grown for this
long while watched: after the first rank times out, msrun's scheduler, its console and the
ranks it has not yet stopped go on writing (the trial saw 40 s of it under `run ended`).
What the first catch-up reads does not count: a finished run opened later ends at once."""
ENDED_LAG = 0.125
"""Once the run has ended and nothing grows, its verdict changes only as silences cross the
rules' thresholds, so it is recomputed every ENDED_LAG of the time since a file was written
(at least every JUDGE_S, at most every ENDED_JUDGE_S): a threshold crossed at 120 s of quiet is
seen by 135 s. Every second, a 512-rank run re-judged for two minutes cost 6-7% of a core
(trial N6); on the clock, not on the judging's cost, so tests on a test clock do not depend on
the machine's speed."""
ENDED_JUDGE_S = 15.0
JUDGE_SHARE = 0.1
"""Share of the engine's time that re-judging for steps alone may take: a verdict that
costs 50 ms is recomputed for new steps every 0.5 s, one that costs 1 ms every tick."""


class DirtySet:
    """Paths the watcher saw created, moved or deleted; its thread only ever adds to it."""

    def __init__(self) -> None:
        self._paths: set[Path] = set()
        self._lock = threading.Lock()
        self.wake = threading.Event()

    def add(self, path: Path) -> None:
        with self._lock:
            self._paths.add(path)
        self.wake.set()

    def drain(self) -> set[Path]:
        with self._lock:
            paths, self._paths = self._paths, set()
        self.wake.clear()
        return paths


@dataclass
class _Tracked:
    log: LogFile
    tail: FileTail
    scanner: FileScanner
    facts: FileFacts | None = None
    stale: bool = True
    """Bytes were read since `facts` was taken (facts are taken only to judge)."""
    mtime: float | None = None
    behind: bool = True
    """More bytes are known to be waiting (catch-up, or a burst bigger than one read)."""
    transcoder: Transcoder | None = None
    """A UTF-16 or UTF-32 log's decoder (read.encoding): its bytes reach the scanner as UTF-8."""
    read_once: bool = False
    """A read reached its end (or it cannot be read): the first pass is done with it."""

    def decoded(self, data: bytes) -> bytes:
        return self.transcoder.feed(data) if self.transcoder else data


@dataclass(frozen=True)
class Update:
    """One tick's result: the verdict now, and what changed since the previous one."""

    report: Report
    new_findings: tuple[Finding, ...] = ()
    status_changes: tuple[tuple[int, Status | None, Status], ...] = ()
    """(rank, old status or None for a new rank, new status)."""
    silence: dict[int, float] = field(default_factory=dict)
    """Seconds since each rank's log last grew (wall clock), when this tick judged; empty
    on a tick that did not (the report is then the previous one): add the time elapsed."""
    bytes_read: int = 0
    behind: int = 0
    """Files with bytes still waiting to be read."""
    restarted: tuple[str, ...] = ()
    """Files that were truncated or replaced this tick (a new run)."""
    time: float = 0.0
    quiet_s: float | None = None
    """Seconds since a followed file last grew while watched (after the first catch-up);
    None: none has, or not measured (a cluster's snapshots): the verdict alone says
    whether the run ended."""

    @property
    def caught_up(self) -> bool:
        return self.behind == 0

    @property
    def ended(self) -> bool:
        """Caught up, the run has ended (`run_ended`) and its files have settled (SETTLED_S):
        what --exit-when-done waits for, and what the header's `run ended` says."""
        settled = self.quiet_s is None or self.quiet_s >= SETTLED_S
        return self.caught_up and settled and run_ended(self.report)


def run_ended(report: Report) -> bool:
    """No rank is still at work or waiting, and at least one has ended. A stalled rank does
    not keep a run going once others have ended (its peers timed out or failed: msrun stops
    it), but a run whose every rank is stalled has not ended: the whole job hangs."""
    statuses = [r.status.value for r in report.ranks]
    return not any(s in AT_WORK for s in statuses) and any(s in GONE for s in statuses)


class Engine(Protocol):
    """What the view and the headless loop drive: a LiveRun, or the cluster view's
    ClusterRun (live.cluster), whose snapshots come from many nodes."""

    targets: list[str]
    consoles: list[str]
    rules: list[Rule]
    clock: Callable[[], float]
    dirty: DirtySet

    def tick(self) -> Update: ...

    def paths(self) -> list[Path]: ...

    def close(self) -> None: ...


class LiveRun:
    """Everything the live view knows about a run, advanced one tick at a time."""

    def __init__(
        self,
        targets: Sequence[str],
        rules: Sequence[Rule],
        consoles: Sequence[str] = (),
        stall_after_s: float = 120.0,
        clock: Callable[[], float] = time.time,
        per_tick: int = PER_TICK,
    ) -> None:
        self.targets, self.rules, self.consoles = list(targets), list(rules), list(consoles)
        self.stall_after_s = stall_after_s
        self.clock = clock
        self.per_tick = per_tick
        self.dirty = DirtySet()
        self._matcher = LineMatcher(rules)
        self._files: dict[Path, _Tracked] = {}
        self._known: set[Path] = set()
        """Listed paths that are followed (under their resolved key, which may be shared)."""
        self._not_logs: dict[Path, int] = {}
        """Listed files that were not logs, with their size then (looked at again on growth)."""
        self._listing: list[str] = []
        """What the last listing could not see (unreadable or vanished directories)."""
        self._skipped: dict[Path, str] = {}
        """Listed files that could not be opened or are not regular files (looked at again)."""
        self._errors: dict[Path, str] = {}
        """Followed files whose last read failed (an open refused for lack of descriptors)."""
        self._descriptors = Descriptors(descriptor_cap())
        self._last_rescan = self._last_judge = float("-inf")
        self._judge_gap = 0.0
        self._previous: Report | None = None
        self._changes = Changes()
        self._urgent = True
        self._grew_at: float | None = None
        """When a file last grew after the first catch-up (the engine's clock)."""
        self._caught_up_once = False
        self._first_pass = False
        """Every followed file has been read to its end once (see reading)."""
        self._turn = 0
        """Where the next tick starts reading in the ring of followed files (see PER_TICK)."""
        self._hung: dict[int, Hang] = {}
        """Ranks the last verdict called stalled: they stay so until their log moves on."""
        self._horizon = stall_after_s
        """The longest silence the last verdict's rules compare with (time_horizon)."""

    # -- files ------------------------------------------------------------------------

    def _rescan(self) -> None:
        """Follow files that appeared; only paths never seen before are opened. What cannot
        be listed or opened is a warning until it can (an open that failed is tried again)."""
        listing: list[str] = []
        for target in self.targets:
            try:
                listed = candidates(target, listing)
            except (InputError, OSError):
                continue  # not there yet: the job has not started
            for path, dir_rank in listed:
                if path not in self._known and self._worth_a_look(path):
                    self._follow(path, target, dir_rank)
        for console in self.consoles:
            path = Path(console)
            if path not in self._known and path.is_file():
                self._add(path, console_file(console))
        if listing != self._listing:
            self._listing, self._urgent = listing, True

    def _worth_a_look(self, path: Path) -> bool:
        """New, or not a log when last seen but grown since (an empty file fills up)."""
        size = self._not_logs.get(path)
        if size is None:
            return True
        return file_size(path) != size

    def _follow(self, path: Path, target: str, dir_rank: int | None) -> None:
        said: list[str] = []
        log = log_file(target, path, dir_rank, said)
        if said:  # could not be opened or is not a regular file: look again next time
            self._urgent = self._urgent or self._skipped.get(path) != said[0]
            self._skipped[path] = said[0]
            return
        if self._skipped.pop(path, None) is not None:
            self._urgent = True
        if log is None:
            self._not_logs[path] = file_size(path)
            return
        self._add(path, log)

    def _add(self, path: Path, log: LogFile) -> None:
        self._not_logs.pop(path, None)
        self._known.add(path)
        key = path.resolve()
        if key not in self._files:
            root = Path(log.log_dir) if log.log_dir in self.targets else None
            root = root if root is not None and root.is_dir() else None
            tracked = _Tracked(log, FileTail(log.path, root), self._scanner(log))
            tracked.transcoder = Transcoder(log.encoding) if log.encoding else None
            self._files[key] = tracked
            self._urgent = True
        elif self._files[key].log.path != path:  # as triage says it: read once, and said
            first = self._files[key].log.path
            self._skipped[path] = f"skipped {path}: another path to {first}, already read"
            self._urgent = True

    def _scanner(self, log: LogFile) -> FileScanner:
        return FileScanner(log.rel, log.log_dir, log.role, self._matcher, log.rank_from_name)

    def paths(self) -> list[Path]:
        """Files being followed (resolved)."""
        return list(self._files)

    def discover(self) -> int:
        """List the targets now (before the first tick reads anything): how many logs there
        are to read, for a screen that says so while the first read takes its time."""
        self._rescan()
        self._last_rescan = self.clock()
        return len(self._files)

    def current_facts(self) -> list[tuple[FileFacts, float | None]]:
        """Each file's facts as of the last verdict, with when it last grew (the wall clock):
        what the node's live snapshot holds (live.snapshot)."""
        return [(t.facts, t.mtime) for t in self._files.values() if t.facts is not None]

    def _read(self, key: Path, tracked: _Tracked, budget: int) -> tuple[int, str | None]:
        """Read one file within the budget; returns bytes read and a restart notice."""
        got = tracked.tail.read(min(PER_FILE, budget))
        self._descriptors.used(key, tracked.tail, bool(got.data))
        if got.error is not None:
            self._urgent = self._urgent or self._errors.get(key) != got.error
            self._errors[key] = got.error
            tracked.behind, tracked.read_once = False, True
            return 0, None
        if self._errors.pop(key, None) is not None:
            self._urgent = True
        restarted = None
        if got.change in (Change.TRUNCATED, Change.REPLACED):
            tracked.scanner = self._scanner(tracked.log)
            tracked.transcoder = Transcoder(tracked.log.encoding) if tracked.log.encoding else None
            self._matcher.forget(str(key))
            tracked.facts, tracked.stale, self._urgent = None, True, True
            restarted = tracked.log.rel
        if got.mtime is not None:
            tracked.mtime = got.mtime
        if got.data:
            news = tracked.scanner.news()
            self._matcher.reading(str(key))
            tracked.scanner.feed(tracked.decoded(got.data))
            tracked.stale = True
            self._urgent = self._urgent or tracked.scanner.news() != news
        tracked.behind = len(got.data) >= min(PER_FILE, budget) > 0
        tracked.read_once = tracked.read_once or not tracked.behind
        return len(got.data), restarted

    def warnings(self) -> list[str]:
        """What is not being read as it should, now: unlistable directories, files that are
        not regular or cannot be opened, lines rules gave up on."""
        encoded = [note(t.log.path, t.log.encoding) for t in self._files.values() if t.log.encoding]
        given_up = [
            a.describe(str(t.log.path))
            for key, t in self._files.items()
            for a in self._matcher.abandoned(str(key))
        ]
        said = [*self._listing, *self._skipped.values(), *self._errors.values(), *given_up]
        said += encoded
        return list(dict.fromkeys(said))  # a file swapped for a link out: listing and read

    # -- ticks ------------------------------------------------------------------------

    def tick(self) -> Update:
        """Read what is new, judge again when it is due, and say what is new."""
        now = self.clock()
        if self.dirty.drain() or now - self._last_rescan >= RESCAN_S:
            self._rescan()
            self._last_rescan = now
        budget, read, restarted = self.per_tick, 0, []
        self._descriptors.next_round()
        ring = self._ring()
        for at, (key, tracked) in enumerate(ring):
            if budget <= 0:
                self._turn = (self._turn + at) % len(ring)
                for _, left in ring[at:]:  # a file read whole before and not grown is not
                    left.behind = left.tail.pending()  # behind (it was: N14's 472 of 471)
                break
            n, restart = self._read(key, tracked, budget)
            budget -= n
            read += n
            if restart:
                restarted.append(restart)
        behind = sum(1 for t in self._files.values() if t.behind)
        if read and self._caught_up_once:
            self._grew_at = now
        self._caught_up_once = self._caught_up_once or behind == 0
        if not self._first_pass and self._read_through():
            self._urgent = True  # the verdict withheld while reading (see reading): now
        if not self._judge_due(now, behind):
            assert self._previous is not None
            quiet = self._quiet(now)
            return Update(self._previous, (), (), {}, read, behind, tuple(restarted), now, quiet)
        return self._judge(now, read, behind, restarted)

    def _read_through(self) -> bool:
        """Every followed file, and at least one, was read to its end once."""
        return bool(self._files) and all(t.read_once for t in self._files.values())

    def _unread_ranks(self) -> set[int]:
        """Ranks with a followed file not yet read to its end."""
        return {
            rank
            for t in self._files.values()
            if not t.read_once and t.facts is not None and (rank := t.facts.rank) is not None
        }

    def _ring(self) -> list[tuple[Path, _Tracked]]:
        """The followed files in reading order for this tick: from the one whose turn it is."""
        files = list(self._files.items())
        turn = self._turn % len(files) if files else 0
        return files[turn:] + files[:turn]

    def _judge_due(self, now: float, behind: int) -> bool:
        """At once for urgent news; while catching up, once a JUDGE_S (what is read then
        happened in the past); for new steps alone, when the judging budget allows."""
        since = now - self._last_judge
        stale = any(t.stale for t in self._files.values())
        if self._previous is None or (self._urgent and not behind):
            return True
        if not stale and not behind and run_ended(self._previous):
            # an ended run's verdict changes only with new lines, once quiet; before, slowly
            return not self._judged_quiet() and since >= self._ended_gap(now)
        if since >= JUDGE_S:
            return True
        return not behind and since >= self._judge_gap and stale

    def _judge(self, now: float, read: int, behind: int, restarted: list[str]) -> Update:
        began = time.perf_counter()
        self._urgent, self._last_judge = False, now
        for t in self._files.values():
            if t.stale or t.facts is None:
                t.facts, t.stale = t.scanner.facts(), False
        runs = newest_runs([t.facts for t in self._files.values() if t.facts is not None])
        quiet = self._silence(now)
        run = assemble(self.targets, runs.files)
        ctx = Context(
            now=now,
            quiet_s=quiet,
            stall_after_s=self.stall_after_s,
            caught_up=behind == 0,
            hung=self._hung,
        )
        said = [*runs.said, *self.warnings(), *run.warnings]
        report = self._as_triage(now, behind, run, said, judge(run, self.rules, said, ctx))
        if runs.shown:  # what triage would read to say the same: the run shown
            report = replace(report, log_dirs=tuple(map(runs.log_dir, report.log_dirs)))
        self._hung = held_hangs(report, run)
        self._horizon = time_horizon(run, self.stall_after_s)
        self._first_pass = self._first_pass or self._read_through()
        if not self._first_pass:
            report = reading(report, self._unread_ranks())
        update = Update(
            report,
            self._changes.new_findings(report),
            self._changes.status_changes(report),
            rank_silences(run, ctx) or {},
            read,
            behind,
            tuple(restarted),
            now,
            self._quiet(now),
        )
        self._previous = self._changes.previous = report
        self._judge_gap = min((time.perf_counter() - began) / JUDGE_SHARE, JUDGE_S)
        return update

    def _as_triage(
        self, now: float, behind: int, run: RunFacts, said: list[str], live: Report
    ) -> Report:
        """Once the run has ended (`■ run ended`: the live verdict has no rank at work and no
        file grew for SETTLED_S) and is over by triage's clock (judge.clock.run_over: nothing
        written for longer than --stall-after), the verdict triage gives at this clock, when it
        too has no rank at work: one judgement of a finished run, not two (the live one called
        a run with a rank cut short `hung` where triage found it `stopped` or finished). Else
        the live verdict (the run goes on, or its last lines are too recent to call it over).
        A file seen to grow while watched was written then, whatever its lines' times say: the
        run is not over by any clock until nothing grew for --stall-after (triage's clock reads
        lines days older than their files' mtimes as a copy of a run long over; a kept run
        replayed into the watched directory with a pause in the writing is not that)."""
        quiet = self._quiet(now)
        settled = quiet is None or (quiet >= SETTLED_S and quiet > self.stall_after_s)
        if behind or not settled or not run_ended(live):
            return live
        post = PostMortem(stall_after_s=self.stall_after_s)
        ctx = replace(with_clock(Context(), post, run, self._written()), clock=local_seconds(now))
        if run_over(run, ctx) is None:
            return live
        report = judge(run, self.rules, said, ctx)
        return report if run_ended(report) else live

    def _written(self) -> float | None:
        """When a followed file was last written (its mtime), on the logs' scale."""
        newest = self._newest_mtime()
        return None if newest is None else local_seconds(newest)

    def _newest_mtime(self) -> float | None:
        """The newest mtime of the followed files (None before any was read)."""
        return max((t.mtime for t in self._files.values() if t.mtime is not None), default=None)

    def _ended_gap(self, now: float) -> float:
        """How often an ended run whose files are still quiet is judged again (ENDED_LAG of
        the newest file's silence: a finished run opened later has been quiet all along)."""
        newest = self._newest_mtime()
        quiet = 0.0 if newest is None else max(now - newest, 0.0)
        return min(max(JUDGE_S, quiet * ENDED_LAG), ENDED_JUDGE_S)

    def _judged_quiet(self) -> bool:
        """Whether time alone can no longer change the last verdict: when it was made, every
        followed file had been quiet for longer than any silence the rules compare with
        (--stall-after, ten of a rank's step cadences). Until then an ended run is judged
        again as silences grow (cause-not-in-logs waits for every rank to be quiet so long)."""
        last = self._last_judge
        return all(t.mtime is None or last - t.mtime > self._horizon for t in self._files.values())

    def _quiet(self, now: float) -> float | None:
        """Seconds since a file last grew while watched (see SETTLED_S); before any did, since
        the newest followed file was written (its mtime). A run whose first read caught it
        being written is not a finished run opened later: taken for one, it was handed to
        triage's verdict on the half read (silent-rank on ranks 1-7, rank 0's file whole),
        undone by the next tick (the pty test's `1 undone`, one run in two). A file written
        while this tick read it has an mtime after `now`, the tick's start, and was written
        just now (the same half read went to triage's verdict one run in eight); an mtime
        ahead of this host's clock (a skewed file server) tells nothing: None, as before any
        read."""
        if self._grew_at is not None:
            return max(now - self._grew_at, 0.0)
        newest = self._newest_mtime()
        if newest is None:
            return None
        if newest > now:
            return 0.0 if newest <= self.clock() else None
        return now - newest

    def _silence(self, now: float) -> dict[tuple[str, str], float]:
        return {
            (t.log.log_dir, t.log.rel): max(now - t.mtime, 0.0)
            for t in self._files.values()
            if t.mtime is not None
        }

    def close(self) -> None:
        """Release every file."""
        for tracked in self._files.values():
            tracked.tail.close()


NOT_READ = "its log is not read to its end yet"
"""Why a rank is `unknown` while the first pass reads the logs there were."""


def reading(report: Report, unread: set[int]) -> Report:
    """The verdict while the first pass reads the logs there were: no root cause, no finding
    and no outcome yet, and ranks whose log is not read to its end `unknown`. Judged on
    part of the logs, a finished run's verdict named what the rest contradicts: the
    scheduler's log, read first, times out rank 37 (`so far: rank 37 failed first:
    node-timeout`) for two seconds before rank 37's own log says it ran out of memory
    (re-trial A15), and a hook ran for the timeout as the root cause. Once every file was
    read through, the findings come, each with its final role, and the verdict with them."""
    ranks = tuple(
        r
        if r.rank not in unread
        else RankReport(r.rank, r.log_dir, r.file, Status.UNKNOWN, NOT_READ)
        for r in report.ranks
    )
    return replace(report, outcome="unknown", root_cause=None, findings=(), ranks=ranks)


def time_horizon(run: RunFacts, stall_after_s: float) -> float:
    """The longest silence a rule compares with: --stall-after, or the slowest rank's step
    cadence times the rules' `stall_cadences` (a rank is silent only after that many of its
    steps' time)."""
    cadences = [f.progress.cadence_s for r in run.ranks for f in r.files if f.progress]
    return max([stall_after_s, *(STALL_CADENCES * c for c in cadences if c is not None)])


def held_hangs(report: Report, run: RunFacts) -> dict[int, Hang]:
    """The stalled ranks of a verdict, each with its progress now and why: the next verdict
    keeps them stalled until that progress moves or their own log says what became of them
    (a hung rank that only logs a lost connection, or whose peers time out, is still hung)."""
    held = {}
    for r in report.ranks:
        facts = run.rank(r.rank)
        if r.status is Status.STALLED and facts is not None:
            why, _, _ = r.status_reason.partition("; then ")  # what followed is judged anew
            held[r.rank] = (progress_mark(facts), why)
    return held


def descriptor_cap() -> int:
    """How many followed files may keep a descriptor: MAX_DESCRIPTORS, and at most a quarter
    of the soft RLIMIT_NOFILE (the rest is for Python, the observer, the metrics server)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return MAX_DESCRIPTORS
    if soft == resource.RLIM_INFINITY:
        return MAX_DESCRIPTORS
    return max(1, min(MAX_DESCRIPTORS, soft // 4))


class Descriptors:
    """The followed files holding a descriptor, least recently grown first: beyond the cap,
    the oldest is released (it is opened again when it grows). When more files grow every
    tick than the cap holds, the files already held keep theirs and the others are opened
    for each read: releasing the least recently grown would release, each time, the file
    read next (at 513 growing logs and a cap of 256, every read opened its file again)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._held: OrderedDict[Path, tuple[FileTail, int]] = OrderedDict()
        self.round = 0
        """The tick now (`next_round`): when each held file last grew."""

    def next_round(self) -> None:
        self.round += 1

    def used(self, key: Path, tail: FileTail, grew: bool) -> None:
        """A file was just looked at: keep its descriptor if it has one, as the most recent
        when it grew, releasing the oldest beyond the cap (or this one, when every file
        held grew this tick too)."""
        if not tail.holds_descriptor:
            self._held.pop(key, None)
            return
        if grew or key not in self._held:
            self._held[key] = (tail, self.round)
            self._held.move_to_end(key)
        while len(self._held) > self.cap:
            oldest, (_, grown) = next(iter(self._held.items()))
            gone = key if grown == self.round else oldest
            self._held.pop(gone)[0].release()
