"""Several runs under one directory: never merged into one verdict in silence.

Every msrun job has one scheduler, which writes one `scheduler.log` (the other nodes of a
job spanning several write none). A directory given as one target that holds two or more
`scheduler.log` of different scheduler processes (`msrun_log/` beside `msrun_log_1/` of a
second attempt, an old job kept in `first_job/`) holds as many runs: read as one, the ranks of
one run would take the steps of another and the verdict would mix them. Such a target is
refused with the runs named, so the user gives the one meant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from msrunwatch.core.errors import InputError
from msrunwatch.read.facts import FileFacts, FileRole


def run_dirs(files: Sequence[FileFacts]) -> dict[str, list[str]]:
    """Each target (as given) -> the directories under it holding the log of a scheduler
    process, one per process (relative to the target, "." for itself): one scheduler's log
    in two layouts (msrun's scheduler.log and its GLOG files) is one run."""
    found: dict[str, dict[object, str]] = {}
    for f in files:
        if f.role is FileRole.SCHEDULER and f.error is None:
            where = str(PurePosixPath(f.path).parent)
            process = f.pid if f.pid is not None else where
            found.setdefault(f.log_dir, {}).setdefault(process, where)
    return {target: sorted(set(by.values())) for target, by in found.items()}


def one_run_each(files: Sequence[FileFacts]) -> None:
    """Raise, naming the runs, when a target holds more than one."""
    for target, dirs in run_dirs(files).items():
        if len(dirs) > 1:
            shown = ", ".join(dirs)
            paths = " or ".join(str(PurePosixPath(target) / d) for d in dirs[:2])
            raise InputError(
                f"{target} holds {len(dirs)} runs, each with its own scheduler.log ({shown}); "
                f"they are not judged as one: give one of them ({paths})"
            )
