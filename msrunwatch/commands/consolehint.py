"""Say when msrun's console sits beside the log directories given and is not read.

`msrunwatch triage run/msrun_log` (the README's form) reads the rank logs only; msrun's
console one directory up (`run/msrun_console.txt`) holds the workers' exit codes and
signals, which decide who failed first when a rank was killed from outside. Without it the
verdict rests on the scheduler's heartbeats: the user is told once, on stderr, which file
that is and the two forms that read it (the run directory, or --console). Of a run of
several nodes, only the console of the node whose logs were given is named
(read.consolebeside); when that cannot be told, the candidates are, and none is offered."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msrunwatch.commands.common import note, verbose

if TYPE_CHECKING:
    from msrunwatch.read.consolebeside import Beside


def _beside_targets(targets: Sequence[str]) -> Beside:
    """The consoles above the log directories given, not among the targets: none when
    one was given with --console (the caller checks) or there is none."""
    from msrunwatch.read.consolebeside import Beside, consoles_beside

    for target in targets:
        found = consoles_beside(target)
        if found.mine is not None and not _among(found.mine, targets):
            return found
        untold = tuple(path for path in found.untold if not _among(path, targets))
        if untold:
            return Beside(None, untold)
    return Beside(None)


def _among(path: Path, targets: Sequence[str]) -> bool:
    return any(_within(path, t) for t in targets)


def _within(path: Path, target: str) -> bool:
    try:
        return path.resolve().is_relative_to(Path(target).resolve())
    except OSError:
        return False


def hint(found: Beside) -> str | None:
    """The note: which file, and how to read it; when several consoles may be the logs'
    node's, which ones, and that none is named for it."""
    if found.mine is not None:
        console = found.mine
        return (
            f"msrun's console {console} is beside the logs given and is not read (it holds "
            f"the workers' exit codes and signals): give the run directory ({console.parent}) "
            f"or --console {console}"
        )
    if not found.untold:
        return None
    return (
        f"msrun's consoles {', '.join(map(str, found.untold))} are beside the logs given and "
        "are not read (they hold the workers' exit codes and signals); their first lines do "
        f"not say which is these logs' node's: give the run directory "
        f"({found.untold[0].parent}) or --console with that node's console"
    )


def say_beside(args: argparse.Namespace, targets: Sequence[str]) -> bool:
    """Before following a run live (its consoles are not known yet), and in `say`: the
    console beside the directories given, when none was given with --console (once,
    unless -q). Whether there was one."""
    if getattr(args, "console", None):
        return False
    said = hint(_beside_targets(targets))
    if said is not None:
        note(args, said)
    return said is not None


def say(args: argparse.Namespace, targets: Sequence[str], read: Sequence[str]) -> None:
    """Before or after a verdict: the console that was read (-v), or the one beside that
    was not (once, unless -q), or that none was (-v)."""
    if read or getattr(args, "console", None):
        verbose(args, f"console: {', '.join(read or args.console)} read")
    elif not say_beside(args, targets):
        verbose(args, "console: none read (none given with --console, none among the logs)")
