"""Config readers: MindFormers YAML, MindSpeed-LLM / Megatron launch scripts, msrun lines.

`read_config(path)` picks the reader by suffix (.yaml/.yml, .sh/.bash) or, failing
that, by content; `read_msrun(cmdline)` reads an msrun command line. Every value
carries the Source where it is written; what cannot be known before the job runs is
`Value(None, source, unresolved="why")`. Unreadable or unparseable input raises
`ConfigError` with a one-line `file:line: why` message.
"""

from __future__ import annotations

import re
from pathlib import Path

from msrunwatch.core.errors import ConfigError
from msrunwatch.core.fileio import FileTooLarge, NotRegularFile, read_capped
from msrunwatch.read.config.common import NotATrainingConfig, TracedValue
from msrunwatch.read.config.mflaunch import ENTRY, MindFormersLaunch, launch_beside, launches
from msrunwatch.read.config.mindformers import read_mindformers
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.msrun import read_msrun
from msrunwatch.read.config.shell import read_script

__all__ = ["ConfigError", "NotATrainingConfig", "TracedValue", "read_config", "read_msrun"]


def as_launched(config: TrainingConfig, launch: MindFormersLaunch | None) -> TrainingConfig:
    """A MindFormers YAML with what its launch command sets (--run_mode, the card count)."""
    if launch is None:
        return config
    values = dict(config.values)
    for name, value in launch.values.items():
        if name == "world" and config.get("world") is not None:
            continue  # the YAML's own device_num is what its checks compare
        values[name] = value
    return TrainingConfig(config.path, config.kind, values)


def _launched_yaml(path: str, launch: MindFormersLaunch) -> TrainingConfig:
    """A script that runs run_mindformer.py: the YAML it names, as the script launches it."""
    for base in (Path(path).parent, Path.cwd()):
        candidate = base / launch.config
        if candidate.is_file():
            text = read_capped(candidate, MAX_BYTES).decode("utf-8-sig", "replace")
            return as_launched(read_mindformers(text, str(candidate)), launch)
    raise NotATrainingConfig(
        f"{path}: launches MindFormers with {launch.config}, which is not beside it: "
        "check that YAML (the launch options are read from this script)"
    )


MAX_BYTES = 4 * 1024 * 1024
"""Bytes actually read, whatever `st_size` says: a config larger than this is refused."""
YAML_SUFFIXES = (".yaml", ".yml")
SHELL_SUFFIXES = (".sh", ".bash")
SHELL_HINT = re.compile(
    r"^\s*(?:#!.*\b(?:ba)?sh\b|(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=\S*\s*$|msrun\s|torchrun\s)",
    re.MULTILINE,
)


def read_config(path: str) -> TrainingConfig:
    """Read a MindFormers YAML or a launch script."""
    file = Path(path)
    try:
        data = read_capped(file, MAX_BYTES)
    except NotRegularFile as exc:
        raise ConfigError(f"{path}: is {exc.kind}, not a config file") from None
    except FileTooLarge:
        raise ConfigError(
            f"{path}: more than {MAX_BYTES} bytes is too large for a training config"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        why = f"not a text file (byte {data[exc.start]:#04x} is not UTF-8)"
        raise ConfigError(f"{path}:{line}: {why}") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ConfigError(f"{path}:{line}: not a text file (it contains NUL bytes)")
    if not text.strip():
        raise ConfigError(f"{path}: empty file")
    try:
        return _dispatch(text, path, file.suffix.lower())
    except (RecursionError, MemoryError):
        raise ConfigError(f"{path}: nested too deeply to read") from None


def _dispatch(text: str, path: str, suffix: str) -> TrainingConfig:
    if suffix in YAML_SUFFIXES:
        return as_launched(read_mindformers(text, path), launch_beside(path))
    if ENTRY in text and (launched := launches(path, text)):
        return _launched_yaml(path, launched[0])
    if suffix in SHELL_SUFFIXES or SHELL_HINT.search(text):
        return read_script(text, path)
    try:
        return read_mindformers(text, path)
    except ConfigError:
        raise ConfigError(
            f"{path}: not a MindFormers YAML or a launch script "
            "(name it .yaml or .sh, or start a script with #!/bin/bash)"
        ) from None
