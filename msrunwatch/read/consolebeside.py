"""Which of msrun's saved consoles above a log directory is the one of that directory's node.

A run of several nodes keeps one console per node beside the nodes' log directories
(`run/node0_console.txt`, `run/node1_console.txt`, `run/node0/msrun_log`, ...). Each console
starts with msrun's `Start worker process with rank id:N, log file:PATH.` lines, one per
worker it spawned: the console whose PATHs lead into the log directory given (or whose file
names are that directory's) is that node's. A console whose PATHs all lead elsewhere is
another node's and is never offered for it: reading node 0's console with node 1's logs
adds node 0's ranks to node 1's table (re-trial A17). A console that names no worker (cut
short, or not started yet) may be anyone's: offered only when it is the only one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from msrunwatch.core.compat import dataclass
from msrunwatch.core.fileio import read_head
from msrunwatch.read import encoding
from msrunwatch.read import patterns as P
from msrunwatch.read.discover import SNIFF_BYTES, _never_a_log, sniff
from msrunwatch.read.facts import FileRole

BESIDE_LEVELS = 2
"""How far up from a log directory a console is looked for: its run directory (msrun_log's
parent), or the one above (a node's `node0/msrun_log`, with `node0_console.txt` beside
`node0/`)."""
BESIDE_FILES = 64
"""Files of a directory sniffed for a console, at most: a parent may be a home directory."""
LISTED_FILES = 4096
"""Files of the log directory whose names are compared with a console's, at most."""


@dataclass(frozen=True)
class Beside:
    """The consoles found in the nearest directory up that has any."""

    mine: Path | None
    """The console of the logs given, when it can be told (or is the only one, naming no
    worker); None otherwise."""
    untold: tuple[Path, ...] = ()
    """Consoles that may be the logs' but could not be told apart (none is `mine`)."""


def console_beside(target: str) -> Path | None:
    """msrun's saved console of the node whose log directory was given alone (not read
    with it: the run directory, or --console, reads it), or None: none there, only other
    nodes' consoles, or several that cannot be told apart (consoles_beside says which)."""
    return consoles_beside(target).mine


def consoles_beside(target: str) -> Beside:
    """The consoles above a log directory given alone, and which one is its node's. Only
    the files of each directory up are sniffed, not its subdirectories."""
    root = Path(target)
    if not target or not root.is_dir():
        return Beside(None)
    here = root.resolve()
    for _ in range(BESIDE_LEVELS):
        if here.parent == here:
            break
        here = here.parent
        found = list(_consoles_in(here))
        if found:
            return _whose(root.resolve(), found)
    return Beside(None)


def _whose(root: Path, consoles: list[Path]) -> Beside:
    """Which console is the log directory's: the one naming its logs, else the only one
    naming no worker at all (the others name other nodes' logs); else none, with the
    undecided ones."""
    names = _file_names(root)
    named = {path: _worker_files(path) for path in consoles}
    mine = [path for path, files in named.items() if _leads_into(root, path, files, names)]
    blank = [path for path, files in named.items() if not files]
    if len(mine) == 1:
        return Beside(_as_typed(mine[0]))
    if not mine and len(blank) == 1:
        return Beside(_as_typed(blank[0]))
    return Beside(None, tuple(_as_typed(path) for path in (mine or blank)))


def _leads_into(root: Path, console: Path, files: list[str], names: set[str]) -> bool:
    """Whether a worker log a console names is in the log directory: its path, taken from
    the console's directory (where msrun is usually run), lies under it, or, when msrun ran
    elsewhere, its file name is one of the directory's."""
    for file in files:
        path = Path(os.path.normpath(console.parent / file))
        if path.is_relative_to(root) or Path(file).name in names:
            return True
    return False


def _worker_files(console: Path) -> list[str]:
    """The log file of each `Start worker process` line in a console's first bytes."""
    try:
        head = read_head(console, SNIFF_BYTES)
    except OSError:
        return []
    codec = encoding.detect(head)
    if codec is not None:
        head = encoding.Transcoder(codec).feed(head)
    text = head.decode("utf-8", errors="replace")
    return [m["file"] for line in text.splitlines() if (m := P.WORKER_START.search(line))]


def _file_names(root: Path) -> set[str]:
    """Names of the files under a log directory (a bounded walk)."""
    names: set[str] = set()
    for _top, _dirs, files in os.walk(root):
        names.update(files)
        if len(names) >= LISTED_FILES:
            break
    return names


def _consoles_in(directory: Path) -> Iterator[Path]:
    """The files of a directory (by name) whose first bytes are msrun's console's."""
    try:
        names = sorted(e.name for e in os.scandir(directory) if e.is_file())
    except OSError:
        return
    for name in names[:BESIDE_FILES]:
        if _never_a_log(name):
            continue
        try:
            head = read_head(directory / name, SNIFF_BYTES)
        except OSError:
            continue
        if sniff(head) is FileRole.CONSOLE:
            yield directory / name


def _as_typed(path: Path) -> Path:
    """A path as a user would type it from here: relative when that is shorter."""
    try:
        relative = Path(os.path.relpath(path))
    except ValueError:  # another drive
        return path
    return relative if len(str(relative)) < len(str(path)) else path
