"""How a MindFormers YAML is launched: `run_mindformer.py --config X.yaml --run_mode finetune`,
under msrun or MindFormers' `scripts/msrun_launcher.sh "<command>" <cards>`.

The options on that command line override the YAML (run_mindformer.py copies --run_mode and
the others into the config before it builds anything), so a YAML with `run_mode: predict`
launched with `--run_mode finetune` is a training job. A launch script beside the YAML, or one
named on the command line, supplies them.
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path
from typing import NamedTuple

from msrunwatch.core.fileio import read_capped
from msrunwatch.read.config.model import Source, Value

ENTRY = "run_mindformer.py"
OPTIONS = {"--run_mode": "run_mode", "--config": "mf_config", "--use_parallel": "use_parallel"}
"""run_mindformer.py options that change what is checked -> normalised names."""
LAUNCHER_CARDS = re.compile(r"msrun_launcher\.sh$")
WORKER_NUM = re.compile(r"--worker_num[= ](\d+)")
MAX_SCRIPT = 1 << 20
MAX_SCRIPTS = 50
"""Scripts looked at beside a YAML: a directory of thousands is not read whole."""


class MindFormersLaunch(NamedTuple):
    """The YAML a script launches and the values its command line sets."""

    config: str
    values: dict[str, Value]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line with its backslash continuations joined."""
    out: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        parts.append(line)
        out.append((start, " ".join(parts)))
        parts = []
    return out


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


def _command(words: list[str]) -> tuple[list[str], int | None] | None:
    """The run_mindformer.py words, and the card count the launcher gives, if it runs one."""
    for i, word in enumerate(words):
        if LAUNCHER_CARDS.search(word) and i + 1 < len(words) and ENTRY in words[i + 1]:
            inner = _words(words[i + 1])
            cards = words[i + 2] if i + 2 < len(words) else "8"  # the launcher's default
            return inner, int(cards) if cards.isdigit() else None
        if word.endswith(ENTRY):
            return words[i:], None
    return None


def launches(path: str, text: str) -> list[MindFormersLaunch]:
    """Every run_mindformer.py command in a script, with the values it sets."""
    found: list[MindFormersLaunch] = []
    for number, line in _logical_lines(text):
        if ENTRY not in line:
            continue
        command = _command(_words(line))
        if command is None:
            continue
        words, cards = command
        source = Source(path, number, 1, line.strip()[:200])
        values = mindformers_options(words, source)
        worker = WORKER_NUM.search(line)
        world = cards if cards is not None else (int(worker.group(1)) if worker else None)
        if world is not None:
            values["world"] = Value(world, source)
        config = values.pop("mf_config", None)
        if config is not None and isinstance(config.value, str):
            found.append(MindFormersLaunch(config.value, values))
    return found


def mindformers_options(words: list[str], source: Source) -> dict[str, Value]:
    """run_mindformer.py's options that change what is checked, as values."""
    values: dict[str, Value] = {}
    for i, word in enumerate(words):
        flag, eq, given = word.partition("=")
        name = OPTIONS.get(flag)
        if name is None:
            continue
        raw = given if eq else (words[i + 1] if i + 1 < len(words) else None)
        if raw is not None:
            values[name] = Value(raw, source)
    return values


def launch_beside(yaml_path: str) -> MindFormersLaunch | None:
    """The one launch script in the YAML's directory that runs it (by file name), if any."""
    target = Path(yaml_path)
    hits = [h for h in _launches_in(str(target.parent)) if Path(h.config).name == target.name]
    return hits[0] if len(hits) == 1 else None


@functools.lru_cache(maxsize=256)
def _launches_in(directory: str) -> tuple[MindFormersLaunch, ...]:
    """Every run_mindformer.py launch of the scripts in a directory (read once per directory:
    `check DIR` asks for each YAML in it)."""
    found: list[MindFormersLaunch] = []
    try:
        scripts = sorted(Path(directory).glob("*.sh"))[:MAX_SCRIPTS]
    except OSError:
        return ()
    for script in scripts:
        try:
            data = read_capped(script, MAX_SCRIPT)
        except (OSError, ValueError):
            continue
        if ENTRY.encode() in data:
            found += launches(str(script), data.decode("utf-8", "replace"))
    return tuple(found)
