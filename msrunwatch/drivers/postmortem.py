"""Post mortem: the clock triage judges a run by (judge.clock says what it decides). The
files' newest mtime and this host's clock are read here, where the files are, and both put
on the logs' scale: this host's local wall-clock time, read as if it were UTC, as the logs'
own naive local times are."""

from __future__ import annotations

import calendar
import os
import time
from collections.abc import Sequence
from dataclasses import replace

from msrunwatch.drivers.options import PostMortem
from msrunwatch.judge.clock import newest_line
from msrunwatch.judge.context import Context
from msrunwatch.read.discover import LogFile
from msrunwatch.read.runstate import RunFacts


def local_seconds(epoch: float) -> float:
    """An instant on the logs' scale: this host's local wall-clock time, read as UTC."""
    return float(calendar.timegm(time.localtime(epoch)))


def host_clock() -> float:
    """Now, on the logs' scale."""
    return local_seconds(time.time())


def newest_write(files: Sequence[LogFile]) -> float | None:
    """The newest mtime of the files, on the logs' scale (None: none could be read)."""
    written = []
    for log in files:
        try:
            written.append(os.stat(log.path).st_mtime)
        except OSError:
            continue
    return local_seconds(max(written)) if written else None


def last_written(post: PostMortem | None, files: Sequence[LogFile]) -> float | None:
    """The files' newest write when the clock will read it (not under --now), taken while
    the file list is at hand: the caller drops the list before the run is assembled."""
    if post is None or post.pinned:
        return None
    return newest_write(files)


def with_clock(ctx: Context, post: PostMortem, run: RunFacts, written: float | None) -> Context:
    """The context with the clock (--now, the newest line for --now last-line: both on the
    logs' own scale; else this host's, with the files' newest write: last_written) and
    --finished."""
    now = newest_line(run) if post.last_line else post.now
    if now is None and not post.pinned:
        now = host_clock()
    return replace(
        ctx,
        clock=now,
        pinned=post.pinned,
        written=None if post.pinned else written,
        finished=post.finished,
        stall_after_s=post.stall_after_s,
    )


def with_facts_clock(
    ctx: Context, post: PostMortem, run: RunFacts, quiet_when_collected: float | None
) -> Context:
    """Facts carry no file times: unless --now says otherwise, they are judged as a snapshot
    taken when they were collected (as with --now at that time), which lies
    `quiet_when_collected` seconds after the run's newest line (each node measured that on
    its own clock). Facts that do not say when they were collected are judged by this host's
    clock, as logs without mtimes are."""
    newest = newest_line(run)
    if not post.pinned and quiet_when_collected is not None and newest is not None:
        post = replace(post, now=newest + max(quiet_when_collected, 0.0))
    return with_clock(ctx, post, run, None)
