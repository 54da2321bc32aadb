"""A subdirectory that can be listed but not entered (what `chmod -R 644` does), read by a
user who is not root (issue 21, defect 3): a warning naming the directory, the rest read.
Before, `triage` and `check` ended in an internal error, and `watch` saw no file at all,
said nothing and never ended with --exit-when-done.

The test needs a user without root's bypass of permissions: run as root (this machine), it
runs msrunwatch as `nobody` through setpriv or runuser; it is skipped only when neither
exists."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.support import shown
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
NOBODY = 65534


def as_user() -> tuple[list[str] | None, str]:
    """The command prefix that drops root ([] when not root), or None and why it cannot be
    done: no setpriv or runuser, or `nobody` cannot run this Python (a pyenv build under
    /root, mode 700, cannot load its libpython as anyone else)."""
    if os.geteuid() != 0:
        return [], ""
    if shutil.which("setpriv"):
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    elif shutil.which("runuser"):
        prefix = ["runuser", "-u", "nobody", "--"]
    else:
        return None, "root, and no setpriv or runuser"
    probe = [*prefix, sys.executable, "-c", "import msrunwatch"]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=60, cwd="/")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"nobody cannot run {sys.executable}: {why}"
    return prefix, ""


PREFIX, CANNOT = as_user()
pytestmark = pytest.mark.skipif(PREFIX is None, reason=CANNOT)


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A real failed run (rank 1 failed first with an OOM) whose rank 1 log sits in rank_1/,
    mode 644 like the rest: listed, never entered. Made outside pytest's root-only tmp."""
    base = Path(tempfile.mkdtemp(prefix="msrunwatch-perm-"))
    base.chmod(0o755)
    directory = base / "msrun_log"
    (directory / "rank_1").mkdir(parents=True)
    for path in OOM.iterdir():
        target = directory / "rank_1" if path.name == "worker_1.log" else directory
        shutil.copy(path, target / path.name)
    for path in [directory, *directory.rglob("*")]:
        path.chmod(0o644 if path.is_file() or path.name == "rank_1" else 0o755)
    try:
        yield directory
    finally:
        (directory / "rank_1").chmod(0o755)
        shutil.rmtree(base)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    assert PREFIX is not None
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("MSRUNWATCH_DEBUG", None)
    command = [*PREFIX, sys.executable, "-m", "msrunwatch", *args]
    return subprocess.run(command, capture_output=True, cwd=cwd, env=env, timeout=60, check=False)


def test_the_fixture_really_cannot_be_entered(run_dir: Path) -> None:
    mode = (run_dir / "rank_1").stat().st_mode
    assert stat.S_ISDIR(mode) and not mode & 0o111
    done = subprocess.run(
        [*(PREFIX or []), "cat", str(run_dir / "rank_1" / "worker_1.log")],
        capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and b"Permission denied" in done.stderr


@pytest.mark.parametrize("command", ["triage", "check"])
def test_a_directory_listed_but_not_entered_is_a_warning(command: str, run_dir: Path) -> None:
    done = run(command, "msrun_log", "--format", "json", cwd=run_dir.parent)
    assert done.returncode == 1, done.stderr  # rank 0's OOM and the scheduler were read
    report = json.loads(shown(done.stdout))
    assert report["warnings"] == [
        "skipped msrun_log/rank_1: can be listed but not entered (Permission denied)"
    ]
    assert report["files_read"] == 2


def test_the_watcher_warns_reads_the_rest_and_ends(run_dir: Path) -> None:
    done = run("watch", "msrun_log", "--headless", "--exit-when-done", cwd=run_dir.parent)
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in shown(done.stdout).splitlines()]
    warnings = [e["message"] for e in events if e["event"] == "warning"]
    assert warnings == [
        "skipped msrun_log/rank_1: can be listed but not entered (Permission denied)"
    ]
    assert events[-1]["event"] == "done" and events[-1]["outcome"] == "failed"
    assert next(e for e in events if e["event"] == "caught_up")["files"] == 2
    assert b"can be listed but not entered" in done.stderr


def test_a_target_that_cannot_be_entered_is_exit_2(run_dir: Path) -> None:
    run_dir.chmod(0o644)
    try:
        done = run("triage", "msrun_log", cwd=run_dir.parent)
    finally:
        run_dir.chmod(0o755)
    assert done.returncode == 2 and done.stdout == b""
    err = shown(done.stderr)
    assert err.count("\n") == 1 and "can be listed but not entered" in err
