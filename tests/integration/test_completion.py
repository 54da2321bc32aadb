"""Shell completion as a user meets it, in the real shells: commands, the bare
`msrunwatch DIR` form, options after a directory, choices, and rule ids."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.support import ROOT

ASKED = [
    ("msrunwatch tr", ["triage"]),
    ("msrunwatch fix", ["fixtures"]),  # the bare form: a directory to watch
    ("msrunwatch fixtures/cpu_dp2_oom_alloc_failed --stall-a", ["--stall-after"]),
    ("msrunwatch rules show oom-memory-not-e", ["oom-memory-not-enough"]),
    ("msrunwatch check --select cann-ei000", ["cann-ei0002", "cann-ei0004", "cann-ei0006"]),
    ("msrunwatch check --ignore nan", ["nan-loss"]),  # a category
    (
        "msrunwatch triage --select oom-memory-not-enough,loss-n",  # the name after a comma
        ["oom-memory-not-enough,loss-nan-logged", "oom-memory-not-enough,loss-nan-or-inf"],
    ),
    ("msrunwatch check --severity nan-lo", ["nan-loss="]),  # a name, then its level
    ("msrunwatch triage --severity nan-loss=w", ["nan-loss=warning"]),
    ("msrunwatch triage --format ", ["json", "markdown", "text"]),
    ("msrunwatch completion ", ["bash", "fish", "tcsh", "zsh"]),
]
"""What is typed (completing its last word) and what must be offered."""


def script(shell: str) -> str:
    """What `msrunwatch completion SHELL` prints (run in this process, as the CLI runs it)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["completion", shell]) == 0
    return out.getvalue()


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


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        ("msrunwatch check --severity nan-loss = w", ["warning"]),
        ("msrunwatch fixtures --severity oom = ", ["error", "info", "warning"]),
        ("msrunwatch triage --severity nan-loss =", ["error", "info", "warning"]),
    ],
)
def test_bash_completes_the_level_after_the_equals_sign_it_splits_at(
    words: str, offered: list[str], tmp_path: Path
) -> None:
    """Bash splits `nan-loss=w` into three words (`=` is in COMP_WORDBREAKS) and replaces
    only the last: the level alone is offered."""
    path = completion_script("bash", tmp_path)
    driver = BASH_DRIVER.format(script=path, typed=words)
    done = subprocess.run(
        ["bash", "-c", driver], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert sorted(done.stdout.split()) == offered, done.stderr


def test_the_levels_completed_are_the_severities() -> None:
    from msrunwatch.commands.common import LEVELS
    from msrunwatch.rules.vocab import Severity

    assert sorted(LEVELS) == sorted(s.value for s in Severity)


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


def test_fish_script_offers_every_command_and_option() -> None:
    """Without fish installed too: every subcommand, and every long option of every
    (sub)command, has a `complete` line under the condition that the words chose it."""
    import argparse

    from msrunwatch.commands.parser import build

    text = script("fish")
    lines = text.splitlines()

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    def check(path: str, parser: argparse.ArgumentParser) -> None:
        when = f"-n '__msrunwatch_is {path}'" if path else "-n '__msrunwatch_is'"
        mine = [line for line in lines if f"complete -c msrunwatch {when} " in line]
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--"):
                    assert any(f" -l {option[2:]} " in line for line in mine), (path, option)
        for name in subcommands(parser):
            assert any(f" -a {name} " in line for line in mine), (path, name)

    root = build()
    check("", root)
    for name, sub in subcommands(root).items():
        check(name, sub)
        for inner, subsub in subcommands(sub).items():
            check(f"{name} {inner}", subsub)
    assert "oom-memory-not-enough" in text  # rule ids complete from the built-in pack
    assert "'(__msrunwatch_rule_ids)'" in text and "'(__fish_complete_directories)'" in text
