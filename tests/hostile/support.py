"""Helpers for the hostile-input tests: a run directory from lines, strict JSON parsing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.cli import main

GLOG = "[ERROR] ME(100,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] "
"""A GLOG header of an ERROR line, for lines that need one."""


def log_dir(root: Path, *lines: str, name: str = "worker_0.log") -> Path:
    """An msrun log directory whose one worker log holds the lines."""
    directory = root / "msrun_log"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def strict_json(text: str) -> Any:
    """Parse JSON refusing NaN and Infinity, which Python writes but JSON has not."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command line in-process: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_cli(*args: str, timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """The command line in its own process, as a user runs it: stdout and stderr as bytes
    (what a terminal or a file receives), never decoded on the way."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("MSRUNWATCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "msrunwatch", *args],
        capture_output=True, timeout=timeout, check=False, env=env, **kwargs,
    )  # fmt: skip


RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
"""What must never reach a terminal raw: C0 and C1 controls but tab and line feed, and the
bidirectional marks and overrides."""


def shown(data: bytes) -> str:
    """Output bytes as a terminal shows them: they must be UTF-8 and carry no raw control."""
    text = data.decode("utf-8")  # UnicodeDecodeError: not UTF-8
    assert RAW_CONTROL.search(text) is None, f"a raw control character in {text[:300]!r}"
    return text
