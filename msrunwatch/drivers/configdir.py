"""`check DIR`: every training config under a directory, and what was not linted and why.

A readable file that is not a training config (a converter, a data script, another
framework's YAML) is counted in one info finding, by reason, whether named or found under a
directory. A file named on the command line that cannot be read or parsed is an error
(exit 2): the user asked for it; under a directory it is counted too.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from msrunwatch.core.errors import ConfigError
from msrunwatch.judge.config.lint import lint
from msrunwatch.judge.model import Finding
from msrunwatch.read.config import NotATrainingConfig, read_config, read_msrun
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.rules.model import Rule

CONFIG_SUFFIXES = (".yaml", ".yml", ".sh", ".bash")
NOT_LINTED = "config-not-linted"
MAX_DEPTH = 12
"""Directories deeper than this under the target are not walked."""


def config_files(root: Path) -> list[str]:
    """Config-suffixed files under root, in a stable order (hidden directories skipped)."""
    found: list[str] = []
    base = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if len(here.parts) - base >= MAX_DEPTH:
            dirnames[:] = []
        found += [str(here / f) for f in sorted(filenames) if f.lower().endswith(CONFIG_SUFFIXES)]
    return found


def expand(paths: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Files to lint: the files given, and every config under each directory given."""
    files: list[str] = []
    skipped: list[tuple[str, str]] = []
    for path in paths:
        if Path(path).is_dir():
            found = config_files(Path(path))
            files += found
            if not found:
                skipped.append((path, "no .yaml, .yml, .sh or .bash file under it"))
        else:
            files.append(path)
    return files, skipped


def read_each(
    files: Sequence[str], msrun: str | None, strict: bool
) -> tuple[list[TrainingConfig], list[tuple[str, str]]]:
    """The configs read, and (path, why) for each that could not be; strict re-raises."""
    launch = read_msrun(msrun) if msrun else None
    configs: list[TrainingConfig] = []
    unread: list[tuple[str, str]] = []
    for path in files:
        try:
            config = read_config(path)
        except NotATrainingConfig as exc:
            unread.append((path, _reason(str(exc), path)))
            continue
        except ConfigError as exc:
            if strict:
                raise
            unread.append((path, _reason(str(exc), path)))
            continue
        configs.append(config.merged(launch) if launch else config)
    if launch is not None and not files:
        configs.append(launch)
    return configs, unread


def _reason(message: str, path: str) -> str:
    """A read error without its file name and line: the reason alone."""
    return message.removeprefix(path).lstrip(":0123456789 ")


def _short(reason: str) -> str:
    """A reason without its particulars, to count files by it."""
    return (
        reason.split(" (")[0]
        .split(": it has none of")[0]
        .split(": the document is")[0]
        .split(": it has none of")[0]
    )


def not_linted(
    unread: Sequence[tuple[str, str]], rules: Sequence[Rule], paths: Sequence[str]
) -> list[Finding]:
    """One info finding counting the files under the directories that were not linted."""
    chosen = [r for r in rules if r.id == NOT_LINTED]
    if not unread or not chosen:
        return []
    if len(unread) == 1:
        summary = [unread[0][1]]
    else:
        counts = Counter(_short(why) for _, why in unread)
        summary = [f"{why} ({n})" for why, n in counts.most_common()]
    pseudo = TrainingConfig(
        paths[0],
        "directory",
        {
            "not_linted": Value(summary),
            "not_linted_count": Value(len(unread)),
            "not_linted_files": Value([p for p, _ in unread]),
        },
    )
    return lint([pseudo], chosen)
