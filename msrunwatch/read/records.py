"""What every kind of line a reader reads shares: the log record it belongs to, its date,
and the rules' findings on it.

A record is one GLOG line with the un-prefixed lines that follow it (a traceback, an
exception's body, the memory block). A finding of a fallback rule waits for its record to
end: a more specific rule may still fire on another line of it. The kinds of line have
their own modules (read.glog: GLOG lines; read.plain: prints, tracebacks, progress), which
build on this one; read.extract puts them together.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from msrunwatch.core.compat import zip_strict
from msrunwatch.read import shortcuts
from msrunwatch.read.around import Around
from msrunwatch.read.facts import FileRole, Hit
from msrunwatch.read.progress import CompileTracker, ProgressTracker
from msrunwatch.read.traceback import Traceback
from msrunwatch.rules.matcher import LineMatch, LineMatcher

MAX_DISTINCT_HITS = 256
"""Distinct (rule, fingerprint) pairs kept per file; repeats only raise a count."""
MAX_TEXT = 400

HitKey = tuple[str, ...]


class Records:
    """A file's records, dates and findings, and the facts several kinds of line set."""

    def __init__(self, matcher: LineMatcher, role: FileRole) -> None:
        self.role = role
        self.matcher = matcher
        self._every_rule = not shortcuts.enabled()
        """The shortcuts are off (see read.shortcuts): every rule tried on every line, and
        every line read again however often it repeats."""
        self.block_time: float | None = None
        """Time of the last GLOG line (INFO included) of the blocks read so far."""
        self._compile = CompileTracker()
        self._progress = ProgressTracker()
        self._finished_line: int | None = None
        self._uncaught_line: int | None = None
        """The latest exception that ended a traceback Python prints when the program dies
        of it (not one it survives: see read.traceback.SURVIVED)."""
        self._activity: float | None = None
        self._hits: dict[HitKey, Hit] = {}
        self._repeats: Counter[HitKey] = Counter()
        """How many more times each finding was met after its first line (counted here, not
        in the Hit: a flood of one message made a new Hit per line)."""
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
        """The fallback findings of the open record, waiting for it to end."""
        self._levels: dict[HitKey, int] = {}
        """How readily each waiting finding yields (rules.matcher.LineMatch.fallback)."""
        self._fired = False
        """A rule matched the line being read."""
        self._under: frozenset[str] = frozenset()
        """The rules whose `under` heading the current record has passed (rules.matcher's
        Headings): they hold on the lines after it, until the record ends."""
        self._undated: dict[HitKey, int] = {}
        self._settled: set[HitKey] = set()

    def _normal_end(self) -> int | None:
        """The line where the log said it ended normally, unless an uncaught exception came
        after it: "training finished" is followed by evaluation, a last checkpoint or an
        export, and a program that dies there did not end normally (a real 2.10.0 run:
        `[train] rank=1 finished`, then save_checkpoint's FileNotFoundError, exit code 1)."""
        end, died = self._finished_line, self._uncaught_line
        return None if end is None or (died is not None and died > end) else end

    # -- records ----------------------------------------------------------------------

    def at_rest(self) -> bool:
        """No record is open that a quiet line (see read.quiet) would continue: no
        traceback's frames, no bare exception waiting for its body."""
        return self._traceback.state != "frames" and self._deferred is None

    def quiet_lines(self, count: int, last: int) -> None:
        """`count` quiet lines were passed over, the last of them line `last`, the reader at
        rest: what reading them would have done. A line that does not follow the one read
        before it ends the record (see read.plain); ending it twice is ending it once."""
        if last - self._last_line != count:
            self._new_record()
        self._last_line = last

    def _new_record(self) -> None:
        """A new log record starts: the most specific fallback hits of the last one stand."""
        if self._deferred is not None:
            self._flush_deferred()
        if self._pending:
            levels = [self._levels.get(hit_key(h), 1) for h in self._pending]
            keep = min(levels)
            for hit, level in zip_strict(self._pending, levels):
                if level == keep:
                    self._keep(hit)
        self._pending.clear()
        self._levels.clear()
        self._record_specific = False
        self._under = frozenset()

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

    # -- dates ------------------------------------------------------------------------

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

    def _note_activity(self, when: float | None) -> None:
        """A line with its own non-GLOG timestamp (Megatron, MindFormers) shows activity."""
        if when is not None and (self._activity is None or when > self._activity):
            self._activity = when

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
        opened = self.matcher.headings(text)
        if opened:
            self._fired = True  # a heading changes how the lines after it read: never inert
            self._under |= opened
        for found in self.matcher.match(text, level, kind, frame, every_rule=self._every_rule):
            self._fired = True  # said even when not under its heading: a repeat is read again
            if found.rule.under is not None and found.rule.id not in self._under:
                continue
            if fallbacks and not found.fallback:
                continue
            if not exact:
                when = self.date()
            if found.fallback and self._record_specific:
                continue  # a specific rule fired on the record: no fallback finding stands
            hit = _hit(found, text, lineno, offset, when, exact)
            if found.fallback:
                self._pending.append(hit)
                self._levels[hit_key(hit)] = found.fallback
            else:
                self._record_specific = True
                self._pending.clear()
                self._levels.clear()
                self._keep(hit)

    def _keep(self, hit: Hit) -> None:
        key = hit_key(hit)
        if key in self._hits:
            self._repeats[key] += 1
        elif len(self._hits) < MAX_DISTINCT_HITS:
            self._hits[key] = hit
            if not hit.time_exact and key not in self._settled:
                self._undated[key] = hit.offset

    def undated(self) -> list[tuple[HitKey, int]]:
        """Hits dated only by the line before them, with their file offsets."""
        pending = [
            (key, h.offset)
            for h in self._pending
            if not h.time_exact and (key := hit_key(h)) not in self._settled
        ]
        return [*self._undated.items(), *pending]

    def settle(self, key: HitKey, when: float | None) -> None:
        """Date a hit by the first GLOG line after it: an exception is printed as the
        process dies, and the line before it can be minutes older."""
        self._undated.pop(key, None)
        if when is None:
            return
        self._settled.add(key)
        if key in self._hits:
            self._hits[key] = replace(self._hits[key], time=when)
        self._pending = [replace(h, time=when) if hit_key(h) == key else h for h in self._pending]

    def _absorb_hits(self, later: Records, shift: int) -> None:
        """The findings of a reader of the rest of the file (lines `shift` on)."""
        for key, hit in later._hits.items():
            count = hit.count + later._repeats[key]
            if key in self._hits:
                self._repeats[key] += count
            elif len(self._hits) < MAX_DISTINCT_HITS:
                self._hits[key] = replace(hit, line=hit.line + shift, count=count)
        self._pending.extend(replace(h, line=h.line + shift) for h in later._pending)
        self._levels.update(later._levels)

    def _findings(self) -> tuple[Hit, ...]:
        """Every finding so far, the waiting fallback ones included, in line order."""
        repeats = self._repeats
        hits = {
            k: replace(h, count=h.count + repeats[k]) if k in repeats else h
            for k, h in self._hits.items()
        }
        pending = {hit_key(h): h for h in self._pending}  # the last of a key stands
        hits.update((k, h) for k, h in pending.items() if k not in hits)
        return tuple(sorted(hits.values(), key=lambda h: h.line))


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


def hit_key(hit: Hit) -> HitKey:
    """Equal messages about different ranks (the scheduler on two nodes) stay apart."""
    return (hit.rule, hit.fingerprint, hit.subject or "")
