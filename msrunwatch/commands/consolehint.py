"""Say when msrun's console sits beside the log directories given and is not read.

`msrunwatch triage run/msrun_log` (the README's form) reads the rank logs only; msrun's
console one directory up (`run/msrun_console.txt`) holds the workers' exit codes and
signals, which decide who failed first when a rank was killed from outside. Without it the
verdict rests on the scheduler's heartbeats: the user is told once, on stderr, which file
that is and the two forms that read it (the run directory, or --console)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from msrunwatch.commands.common import note, verbose


def console_beside(targets: Sequence[str]) -> Path | None:
    """A console above a log directory given, not among the targets: None when one was
    given with --console (the caller checks) or there is none."""
    from msrunwatch.read.discover import console_beside as beside

    for target in targets:
        found = beside(target)
        if found is not None and not any(_within(found, t) for t in targets):
            return found
    return None


def _within(path: Path, target: str) -> bool:
    try:
        return path.resolve().is_relative_to(Path(target).resolve())
    except OSError:
        return False


def hint(console: Path) -> str:
    """The note: which file, and how to read it."""
    return (
        f"msrun's console {console} is beside the logs given and is not read (it holds the "
        f"workers' exit codes and signals): give the run directory ({console.parent}) or "
        f"--console {console}"
    )


def say_beside(args: argparse.Namespace, targets: Sequence[str]) -> bool:
    """Before following a run live (its consoles are not known yet), and in `say`: the
    console beside the directories given, when none was given with --console (once,
    unless -q). Whether there was one."""
    if getattr(args, "console", None):
        return False
    found = console_beside(targets)
    if found is not None:
        note(args, hint(found))
    return found is not None


def say(args: argparse.Namespace, targets: Sequence[str], read: Sequence[str]) -> None:
    """Before or after a verdict: the console that was read (-v), or the one beside that
    was not (once, unless -q), or that none was (-v)."""
    if read or getattr(args, "console", None):
        verbose(args, f"console: {', '.join(read or args.console)} read")
    elif not say_beside(args, targets):
        verbose(args, "console: none read (none given with --console, none among the logs)")
