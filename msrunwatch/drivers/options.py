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
    sets: tuple[str, ...] = ()
    """`--set KEY=VALUE` items: settings over what the configs say (the run mode a launch
    passes, a card count, a sequence length)."""
    """The framework versions the job runs (`--framework-version mindformers=1.6.0`): the
    version-dependent config checks are errors only when they are known."""
