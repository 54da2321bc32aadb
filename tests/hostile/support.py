"""Helpers for the hostile-input tests: a run directory from lines, strict JSON parsing."""

from __future__ import annotations

import json
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
