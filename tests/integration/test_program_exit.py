"""The program ends itself once a command is done (cli.end_now: the interpreter's teardown
skipped): what a user sees is what the usual exit gave. The same output and exit code as
the command run in-process, the atexit functions run (the rule cache's memos are written
there), a reader that went away still ends it quietly with 141, and a thread still running
is waited for."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.rules import rulecache
from tests.support import FIXTURES, ROOT, program, python

OOM = str(FIXTURES / "cpu_dp2_oom_alloc_failed")
"""The run directory, msrun's console with its logs: nothing to say on stderr (given its
msrun_log alone, triage says once that the console beside it is not read)."""


def in_process(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.mark.parametrize(
    "args",
    [["--version"], ["check", OOM], ["triage", OOM], ["triage", OOM, "--format", "json"]],
    ids=" ".join,
)
def test_the_program_says_and_exits_as_the_command_does_in_process(args: list[str]) -> None:
    done = program(*args)
    assert (done.returncode, done.stdout) == in_process(*args)
    assert done.stderr == ""


def test_the_atexit_functions_run_before_the_end(tmp_path: Path) -> None:
    """A first run with the cache on leaves the memos it made, written at exit."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop(rulecache.OFF, None)
    assert program("check", OOM, env=env).returncode == 1
    written = {p.name for p in (tmp_path / "msrunwatch").iterdir()}
    assert {"methods.bin", "regex.bin", "programs.bin"} <= written


def test_a_reader_that_went_away_still_ends_it_quietly_with_141() -> None:
    command = [sys.executable, "-m", "msrunwatch", "triage", OOM]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # before a byte is read: every write finds the pipe closed
        err = proc.stderr.read()
    assert (proc.returncode, err) == (141, b"")


THREAD = """
import sys, threading, time
from msrunwatch.cli import end_now
threading.Thread(target=lambda: (time.sleep(0.2), print("thread done", flush=True))).start()
end_now(3)
print("returned")
"""


def test_a_thread_still_running_gets_the_usual_exit() -> None:
    done = python("-c", THREAD)
    assert done.returncode == 0
    assert done.stdout.split() == ["returned", "thread", "done"]


def test_with_nothing_else_running_end_now_ends_with_the_code() -> None:
    code = "from msrunwatch.cli import end_now\nprint('said', end='')\nend_now(7)\nprint('after')"
    done = python("-c", code)
    assert (done.returncode, done.stdout, done.stderr) == (7, "said", "")
