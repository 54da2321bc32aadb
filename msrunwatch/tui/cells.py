"""How one value reads in a cell: short, fixed-width friendly, never raw log bytes."""

from __future__ import annotations

import math

from msrunwatch.core.sanitize import terminal
from msrunwatch.judge.model import FirstError, RankReport, Report, Status
from msrunwatch.report import fmt
from msrunwatch.rules.template import rank_name

BAR_WIDTH = 8
"""Cells in a memory bar (each cell holds eight steps)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"

PROBLEMS = frozenset({"failed", "killed", "timed-out", "stalled", "waiting"})
"""Statuses (by value) the "problems" filter keeps."""
RUNNING = frozenset({"starting", "compiling", "training"})
"""Statuses (by value) of a rank still at work."""


def is_problem(status: Status) -> bool:
    """Whether the "problems" filter keeps a rank of this status."""
    return status.value in PROBLEMS


def is_running(status: Status) -> bool:
    """Whether a rank of this status is still at work (its log is followed at its end)."""
    return status.value in RUNNING


STATUS_STYLES = {
    "failed": "bold $text-error",
    "killed": "$text-accent",
    "timed-out": "$text-warning",
    "stalled": "bold $text-warning",
    "waiting": "italic $text-warning",
    "finished": "$text-success",
    "training": "$text-primary",
    "compiling": "$foreground-darken-1",
    "starting": "$text-muted",
    "unknown": "$text-muted",
}
"""Status colours as Content styles, by value (the rank table keeps the same in its CSS);
a status the judge adds later shows unstyled until it gets one here."""


NOT_READ = "not read yet"
"""An `unknown` rank while the first catch-up reads the logs: most have a log not read yet."""


def status_style(status: Status) -> str:
    """A status's Content style."""
    return STATUS_STYLES.get(status.value, "")


SEVERITY_STYLE = {"error": "bold $text-error", "warning": "$text-warning", "info": "$text-muted"}

WORST_FIRST = (
    "failed", "stalled", "waiting", "timed-out", "killed", "unknown", "starting", "compiling",
    "training", "finished",
)  # fmt: skip
"""Worst first: sorting by status puts the ranks to look at on top."""


def status_rank(status: Status) -> int:
    """Where a status sorts, worst first (one the UI does not know yet sorts last)."""
    value = status.value
    return WORST_FIRST.index(value) if value in WORST_FIRST else len(WORST_FIRST)


def printable(text: str) -> str:
    """Log text made safe for a terminal, as triage's text shows it: escapes, control
    characters and bidirectional overrides as visible escapes (`\\x1b`, `\\u202e`: a right-to-left
    override must not reorder what is read), line breaks as spaces, tabs spaced."""
    return terminal(text.replace("\n", " ")).expandtabs(4)


LONG_WORD = 20
"""A word this long (an operator's path, a kernel name) may lose its middle alone."""
TAIL_SHARE = 0.6
"""Of a message cut between words, the share kept from its end (where a Python
exception's `(at file.py:79 in func)` and an OOM's size are)."""


def middle_cut(text: str, width: int) -> str:
    """`text` in `width` characters with one cut, its ends kept: a long word (an operator's
    path) loses its middle when that is enough, so what follows it (`could not allocate
    1.2 GiB`) stays in view; else the cut falls between words, keeping the start (an
    exception's class) and the end (its file:line), and never takes a figure with it (the
    trial's #28 read `for … s`). Never several cuts mid-word."""
    if len(text) <= width:
        return text
    words = text.split(" ")
    excess = len(text) - width
    n = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[n]
    keep = len(word) - excess - 1  # one cell for the ellipsis
    if len(word) >= LONG_WORD and keep >= 8:
        words[n] = word[: keep - keep // 2] + "…" + word[len(word) - keep // 2 :]
        return " ".join(words)
    return _cut_between_words(with_units(words), width)


UNITS = frozenset({"s", "ms", "us", "min", "h", "B", "KB", "MB", "GB", "TB"}) | frozenset(
    {"KiB", "MiB", "GiB", "TiB", "%", "s)", "s,", "s;", "s.", "GiB)", "MiB)", "GiB,", "MiB,"}
)
"""Units our texts write after a figure (fmt.human_sizes, seconds), with what may end them."""


def with_units(words: list[str]) -> list[str]:
    """Words, a bare number joined to the unit after it (`125 s`, `1.2 GiB`): a cut between
    words keeps a figure and its unit together."""
    out: list[str] = []
    for word in words:
        if out and _bare_number(out[-1]) and word in UNITS:
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def _bare_number(word: str) -> bool:
    return word.replace(".", "", 1).replace(",", "").isdigit()


def _has_figure(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _cut_between_words(words: list[str], width: int) -> str:
    """`head … tail` in whole words: the first word, then words from the end up to
    TAIL_SHARE of the room, then words from the start, then from the end again while they
    fit; a first word too long for the room is cut at its end by the caller. When that cut
    would take a figure, the shortest run of words without one that frees enough goes
    instead, if there is one."""
    room = width - 2  # "…" and the space after it
    first, rest = words[0], words[1:]
    used, head, cut = len(first), 0, len(rest)  # kept: rest[:head] and rest[cut:]
    while cut > head and used + len(rest[cut - 1]) + 1 - len(first) <= room * TAIL_SHARE:
        cut -= 1
        used += len(rest[cut]) + 1
    while head < cut and used + len(rest[head]) + 1 <= room:
        used += len(rest[head]) + 1
        head += 1
    while cut > head and used + len(rest[cut - 1]) + 1 <= room:
        cut -= 1
        used += len(rest[cut]) + 1
    if head == cut:
        return " ".join(words)
    if any(map(_has_figure, rest[head:cut])):
        head, cut = _figure_free_run(rest, len(" ".join(words)) - width) or (head, cut)
    return " ".join([first, *rest[:head], "…", *rest[cut:]])


def _figure_free_run(rest: list[str], excess: int) -> tuple[int, int] | None:
    """(start, end) of the run of words without a digit whose place, taken by `…`, saves
    `excess` characters: the shortest, preferring one that keeps the word just before a
    figure (`threshold 120 s`, `for 187 s`: what the figure is); None when there is none."""
    runs = []
    for start in range(len(rest)):
        saved = -1  # the ellipsis
        for end in range(start, len(rest)):
            if _has_figure(rest[end]):
                break
            saved += len(rest[end]) + (1 if end > start else 0)
            if saved >= excess:
                labels = end + 1 < len(rest) and _has_figure(rest[end + 1])
                runs.append((labels, end + 1 - start, start, end + 1))
                break
    return min(runs)[2:] if runs else None


def ago(seconds: float | None) -> str:
    """`0.4s`, `12s`, `3m05s`, `2h10m`, `3d04h`: how long since something happened."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


def millis(value: float | None) -> str:
    """A step time in milliseconds: three significant figures at most."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


PHASES = ("-", "init", "compile", "compiled", "train", "done")
"""Phases in the order a rank goes through them."""


def phase(r: RankReport) -> str:
    """Where a rank got to, whatever its status: init, compile, compiled, train, done."""
    if r.status is Status.FINISHED:
        return "done"
    if r.progress is not None:
        return "train"
    c = r.compile
    if c is not None and c.in_progress:
        return "compile"
    if c is not None and c.count:
        return "compiled"
    return "init" if r.lines or r.first_time is not None else "-"


def first_error(r: RankReport) -> str:
    """`oom worker_3.log:24`: the category and where, the file relative to its log directory;
    a rank lost with no fault of its own, `node-timeout, last line worker_1.log:83`: no error
    is at that line, its log stops there (the trial's A1 read it as an error location)."""
    e = r.first_error
    return "" if e is None else f"{what_first(e)} {e.file}:{e.line}"


def what_first(e: FirstError) -> str:
    """The category of a first error, and `last line` when its line is only where the log
    stops."""
    return f"{e.category}, last line" if e.at_end else e.category


def first_error_within(r: RankReport, width: int) -> str:
    """first_error in `width` cells: the directories between the first one (a node's) and
    the file's own name give way first (`oom node1/…/worker_3.log:24`), then a lost rank's
    `, last line` (its detail says it), so the file and its line number stay whole (the
    trial's N15 read `worker_2.log:11` for line 118)."""
    text = first_error(r)
    e = r.first_error
    if len(text) <= width or e is None:
        return text
    for what in dict.fromkeys((what_first(e), e.category)):
        fits = _dirs_cut(what, e, width)
        if fits is not None:
            return fits
    return middle_cut(f"{e.category} {e.file}:{e.line}", width)


def _dirs_cut(what: str, e: FirstError, width: int) -> str | None:
    """`what FILE:LINE` in `width`, whole or with as many of the directories nearest the
    file as fit (`oom node1/…/msrun_log/worker_3.log:24`); None when even the fewest do not."""
    whole = f"{what} {e.file}:{e.line}"
    if len(whole) <= width:
        return whole
    parts = f"{e.file}:{e.line}".split("/")
    if len(parts) < 3:
        return None
    head, *middle, name = parts
    best, kept = None, [name]
    while middle:
        shorter = f"{what} {head}/…/{'/'.join(kept)}"
        if len(shorter) > width:
            break
        best = shorter
        kept.insert(0, middle.pop())
    return best


def memory_limit(r: RankReport) -> int | None:
    """The memory a rank may use: max_device_memory as MindSpore logged it, else the card."""
    m = r.memory
    return None if m is None else (m.used_mb or m.device_mb or None)


def memory_ratio(r: RankReport) -> float | None:
    """Actual peak over the usable limit (the one denominator triage uses too)."""
    limit = memory_limit(r)
    if r.memory is None or not limit or r.memory.peak_actual_mb is None:
        return None
    return r.memory.peak_actual_mb / limit


def headroom(report: Report) -> str:
    """`memory 94% of usable on rank 4, 3.1 GiB headroom`: the rank nearest its limit."""
    ratios = [(ratio, r) for r in report.ranks if (ratio := memory_ratio(r)) is not None]
    if not ratios:
        return ""
    ratio, r = max(ratios, key=lambda pair: pair[0])
    peak = r.memory.peak_actual_mb if r.memory else None
    spare = (memory_limit(r) or 0) - (peak or 0)
    room = f"{fmt.mib(spare)} headroom" if spare >= 0 else f"{fmt.mib(-spare)} OVER"
    return f"memory {ratio:.0%} of usable on {rank_name(r.rank)}, {room}"


def bar(ratio: float, width: int = BAR_WIDTH) -> str:
    """A proportion as a bar of block characters, in eighths of a cell."""
    steps = round(min(max(ratio, 0.0), 1.0) * width * 8)
    full, part = divmod(steps, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    return text.ljust(width)
