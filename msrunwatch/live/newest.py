"""Several runs under one watched directory: the newest is followed, and the view says so.

`triage` and `check` refuse a directory holding two runs (drivers.runs): they are asked
once, and the user can give the run meant. A watcher is often started on the parent of
msrun's log directories before or while a job runs, and a second attempt may appear
beside the first while it watches; refusing then would end the watch. So the live view
follows the newest run alone (the one whose logs reach the latest log time) and says
which runs it found, which it shows and how to see the other: their ranks are never
merged into one verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from msrunwatch.drivers.runs import run_dirs
from msrunwatch.read.facts import FileFacts


@dataclass
class Newest:
    """What `newest_runs` chose."""

    files: list[FileFacts]
    """The files to judge."""
    said: list[str] = field(default_factory=list)
    """One warning per target holding several runs."""
    shown: dict[str, str] = field(default_factory=dict)
    """Such a target -> the run directory shown (what `triage` of it would read)."""

    def log_dir(self, target: str) -> str:
        return self.shown.get(target, target)


def newest_runs(files: Sequence[FileFacts]) -> Newest:
    """Under a target holding two runs or more, only the newest run's files (a file under
    no run's directory is kept: nothing tells which run it belongs to)."""
    chosen = Newest(list(files))
    for target, dirs in run_dirs(files).items():
        if len(dirs) < 2:
            continue
        kept = chosen.files
        newest = max(dirs, key=lambda d: (_last_time(kept, target, d, dirs), d))
        chosen.files = [f for f in kept if f.log_dir != target or _home(f, dirs) in (newest, None)]
        chosen.shown[target] = str(PurePosixPath(target) / newest)
        others = " ".join(str(PurePosixPath(target) / d) for d in dirs if d != newest)
        other = "the other" if len(dirs) == 2 else "the others"
        chosen.said.append(
            f"{target} holds {len(dirs)} runs, each with its own scheduler.log "
            f"({', '.join(dirs)}): showing the newest, {newest}, alone "
            f"(watch {others} for {other})"
        )
    return chosen


def _home(f: FileFacts, dirs: Sequence[str]) -> str | None:
    """The run directory a file is under (the deepest that holds it), or None."""
    path = PurePosixPath(f.path)
    homes = [d for d in dirs if d == "." or PurePosixPath(d) in path.parents]
    return max(homes, key=lambda d: len(PurePosixPath(d).parts), default=None)


def _last_time(files: Sequence[FileFacts], target: str, run: str, dirs: Sequence[str]) -> float:
    """The latest log time of a run's files (a run copied elsewhere keeps its log times,
    not its file times); -inf for a run that logged no time yet."""
    times = [
        f.last_time
        for f in files
        if f.log_dir == target and f.last_time is not None and _home(f, dirs) == run
    ]
    return max(times, default=float("-inf"))
