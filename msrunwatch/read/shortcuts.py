"""The reader's shortcuts, and the one switch that turns them all off.

A gibibyte of logs reads in seconds because the reader does not read most lines in full:

* the scanner picks the lines worth parsing out of each block (GLOG INFO/DEBUG lines are
  passed over unless they carry a compile marker);
* LossMonitor lines (`epoch: 1 step: 3, loss is 0.38`) are read in bulk: counted, and only
  the last few of a block parsed for progress;
* quiet lines (read.quiet) and floods of prints are passed over in runs;
* an un-prefixed line seen to change nothing is not read again when it repeats;
* cheap literal tests guard the fact shapes (read.patterns) and the rules (the prefilter
  of rules.prefilter, the capture gates of rules.matcher).

Each is allowed under one invariant, which every new shortcut (block-level extraction
included) must keep: **a line may be passed over, or read only in part, only when reading
it in full, line by line, could change nothing**: no rule could match it, no fact shape
could, it opens or closes no record (a traceback's frames, a bare exception waiting for its
body, a memory block), and it leaves every fact (line numbers, where records begin and end,
dates) as reading it would.

`off()` turns every shortcut off: every line of a file goes through Extractor.line, every
line rule is tried on every line, every shape's regex runs unguarded. It is for tests
(tests/unit/test_shortcuts.py triages every fixture, and fixtures with lines injected, with
the shortcuts on and off and compares the verdicts) and for a user who suspects a fast
path: `MSRUNWATCH_SHORTCUTS=off` in the environment. It is slow (every rule on every line).
A reader reads the switch when it is made; a process pool started inside `off()` inherits
it (fork), or reads the environment (spawn).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

ENVIRONMENT = "MSRUNWATCH_SHORTCUTS"


class _Switch:
    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = os.environ.get(ENVIRONMENT, "").strip().lower() not in ("off", "0", "no")


SWITCH = _Switch()
"""`SWITCH.on`: whether the shortcuts are taken (read where speed matters)."""


def enabled() -> bool:
    """Whether the reader takes its shortcuts."""
    return SWITCH.on


@contextmanager
def off() -> Iterator[None]:
    """Every shortcut off while inside: readers made here read every line in full."""
    before, variable = SWITCH.on, os.environ.get(ENVIRONMENT)
    SWITCH.on = False
    os.environ[ENVIRONMENT] = "off"
    try:
        yield
    finally:
        SWITCH.on = before
        if variable is None:
            os.environ.pop(ENVIRONMENT, None)
        else:
            os.environ[ENVIRONMENT] = variable
