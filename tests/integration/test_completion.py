"""Shell completion as a user meets it, in the real shells: commands, the bare
`msrunwatch DIR` form, options after a directory, choices, and rule ids."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

ASKED = [
    ("msrunwatch tr", ["triage"]),
    ("msrunwatch fix", ["fixtures"]),  # the bare form: a directory to watch
    ("msrunwatch fixtures/cpu_dp2_oom_alloc_failed --stall-a", ["--stall-after"]),
    ("msrunwatch rules show oom-memory-not-e", ["oom-memory-not-enough"]),
    ("msrunwatch check --select cann-ei000", ["cann-ei0002", "cann-ei0004", "cann-ei0006"]),
    ("msrunwatch triage --format ", ["json", "markdown", "text"]),
    ("msrunwatch completion ", ["bash", "fish", "tcsh", "zsh"]),
]
"""What is typed (completing its last word) and what must be offered."""


def script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "msrunwatch", "completion", shell],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def completion_script(shell: str, tmp_path: Path) -> Path:
    path = tmp_path / f"msrunwatch.{shell}"
    path.write_text(script(shell))
    return path


BASH_DRIVER = """
source {script}
words=({typed})
[[ "{typed}" == *" " ]] && words+=("")
COMP_WORDS=("${{words[@]}}")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMPREPLY=()
_msrunwatch
printf '%s\\n' "${{COMPREPLY[@]}}"
"""


@pytest.mark.parametrize(("typed", "offered"), ASKED, ids=[a[0] for a in ASKED])
def test_bash(typed: str, offered: list[str], tmp_path: Path) -> None:
    path = completion_script("bash", tmp_path)
    driver = BASH_DRIVER.format(script=path, typed=typed)
    done = subprocess.run(
        ["bash", "-c", driver], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    got = sorted(line.rstrip("/") for line in done.stdout.split())
    assert got == offered, done.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
@pytest.mark.parametrize(("typed", "offered"), ASKED, ids=[a[0] for a in ASKED])
def test_fish(typed: str, offered: list[str], tmp_path: Path) -> None:
    path = completion_script("fish", tmp_path)
    done = subprocess.run(
        ["fish", "--no-config", "-c", f"source {path}; complete -C '{typed}'"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    got = sorted(line.split("\t")[0].rstrip("/") for line in done.stdout.splitlines())
    assert got == offered, done.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_parses_and_knows_the_bare_form(tmp_path: Path) -> None:
    path = completion_script("zsh", tmp_path)
    done = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert "_describe 'msrunwatch commands' _commands; _files -/" in text
    assert "compdef _msrunwatch -N msrunwatch" in text and "oom-memory-not-enough" in text
