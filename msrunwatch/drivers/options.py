"""Typed options the commands hand to the drivers (never an argparse namespace)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Launch:
    """What the command line says about the job beyond its files."""

    devices: int | None = None
    """Card count, when the config does not say (`--devices`)."""
    msrun: str | None = None
    """The job's msrun command line (`--msrun`)."""
    consoles: tuple[str, ...] = ()
    """msrun's saved console output (`--console`)."""
    framework_version: str | None = None
    """The framework versions the job runs (`--framework-version mindformers=1.6.0`): the
    version-dependent config checks are errors only when they are known."""
    sets: tuple[str, ...] = ()
    """`--set KEY=VALUE` items: settings over what the configs say (the run mode a launch
    passes, a card count, a sequence length)."""
    post: PostMortem | None = None
    """How the logs' end is judged (--now, --finished, --stall-after); None: not by the clock."""


@dataclass(frozen=True)
class PostMortem:
    """How triage reads the clock (see judge.clock): is the run over?"""

    now: float | None = None
    """--now: the clock on the logs' local time; None: this host's clock."""
    last_line: bool = False
    """--now last-line: the clock stands at the newest log line (a snapshot taken then)."""
    finished: bool = False
    """--finished: the run is over, whatever the clock."""
    stall_after_s: float = 120.0
    """--stall-after: nothing written for longer than this, the run is not running."""

    @property
    def pinned(self) -> bool:
        """The clock is fixed on the logs' own time (--now): no file time is read."""
        return self.last_line or self.now is not None
