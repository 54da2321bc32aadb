"""SIGTERM and SIGINT end every child process and leave no partial output (issue 21,
defect 6 and the signals point). Before, SIGTERM to the triage parent alone left its
reader processes alive for good, holding stdout open (a `| tee` never ended).

Each command runs in its own session, so its process group is the parent and every worker
it forked; /proc says who is still there. The workers are killed and reaped before the
parent exits, so "nothing left" is checked when the parent's exit status is in, not after
some delay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from msrunwatch.drivers.triage import usable_cpus
from tests.hostile.support import strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
ERROR = b"[ERROR] ME(100,7f,python):2026-11-21-05:34:22.600.374 [a.cc:1] F] Step failed: %d\n"
SLOW_BYTES = 48 << 20
"""ERROR lines cost the most to read: this many take tens of CPU-seconds, far longer than
it takes to send a signal once the workers are there."""

parallel = pytest.mark.skipif(usable_cpus() < 2, reason="one CPU: no worker processes")


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("slow") / "msrun_log"
    directory.mkdir()
    for path in OOM.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    lines = b"".join(ERROR % n for n in range(1000))
    with open(directory / "worker_1.log", "ab") as fh:
        for _ in range(SLOW_BYTES // len(lines)):
            fh.write(lines)
    return directory


def group_of(leader: int) -> list[int]:
    """Processes (not zombies) whose process group is leader's."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) == leader and fields[0] != "Z":
            members.append(int(entry))
    return members


def as_from_a_terminal() -> None:
    """A command started from an interactive shell gets SIGINT and SIGTERM at their defaults.
    A test run started in the background (`cmd &`, nohup) inherits SIGINT ignored, and a
    process that starts with SIGINT ignored rightly keeps ignoring it: without this the
    SIGINT cases would test how the suite was launched, not msrunwatch."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(*args: str, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("MSRUNWATCH_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "msrunwatch", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
        start_new_session=True, preexec_fn=as_from_a_terminal,
    )  # fmt: skip


def wait_for_workers(proc: subprocess.Popen[bytes], count: int) -> None:
    while len(group_of(proc.pid)) < count + 1:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        time.sleep(0.02)


@parallel
@pytest.mark.parametrize(
    ("command", "signum", "whom"),
    [
        ("triage", signal.SIGTERM, "parent"),  # the case: `kill PID`
        ("triage", signal.SIGINT, "group"),  # Ctrl+C on a terminal
        ("check", signal.SIGTERM, "group"),
        ("check", signal.SIGINT, "parent"),
    ],
)
def test_a_signal_ends_every_reader_and_writes_nothing(
    command: str, signum: int, whom: str, slow_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proc = start(command, str(slow_run), "--format", "json", "-o", str(out / "report.json"))
    wait_for_workers(proc, 2)
    (os.killpg if whom == "group" else os.kill)(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, stderr
    assert group_of(proc.pid) == []  # every worker ended, before the parent did
    word = "terminated" if signum == signal.SIGTERM else "interrupted"
    assert stderr == f"msrunwatch: {word}\n".encode() and stdout == b""
    assert list(out.iterdir()) == []  # no report, no temporary file


@parallel
def test_workers_die_with_a_parent_killed_outright(slow_run: Path) -> None:
    proc = start("triage", str(slow_run))
    wait_for_workers(proc, 2)
    proc.kill()  # SIGKILL: nothing in the parent runs
    proc.communicate(timeout=60)
    while group_of(proc.pid):  # the kernel's parent-death signal; the hang guard bounds it
        time.sleep(0.02)


def test_the_report_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """-o writes beside the file and renames: an existing report is replaced at once."""
    from msrunwatch.core.fileio import write_whole

    report = tmp_path / "report.json"
    report.write_text("old")
    write_whole(report, b"new")
    assert report.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_the_headless_watcher_ends_its_hooks_on_sigterm(tmp_path: Path) -> None:
    pids = tmp_path / "hooks"
    pids.mkdir()
    hook = f'echo $$ > "$(mktemp -p {pids})"; exec sleep 300'
    events = tmp_path / "events.jsonl"
    proc = start(
        "watch", str(OOM), "--headless", "--events", str(events), "--on-every-finding",
        "--on-finding", hook,
    )  # fmt: skip
    while len(list(pids.iterdir())) < 2 or any(p.stat().st_size == 0 for p in pids.iterdir()):
        assert proc.poll() is None
        time.sleep(0.02)
    hooks = [int(p.read_text()) for p in pids.iterdir()]
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    last = strict_json(events.read_text().splitlines()[-1])
    assert last["event"] == "done" and last["reason"] == "terminated"
    for pid in hooks:  # each hook ran in its own session: killed with it, then reaped by init
        while Path(f"/proc/{pid}").exists() and "Z" not in state(pid):
            time.sleep(0.02)


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# -- in process: the handlers themselves -----------------------------------------------


def test_sigterm_raises_terminated_only_inside_the_block() -> None:
    from msrunwatch.core.stopping import Terminated, sigterm_raises

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), sigterm_raises():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises in the main thread long before this ends
    assert signal.getsignal(signal.SIGTERM) == before


def test_sigterm_raises_leaves_other_threads_alone() -> None:
    import threading

    from msrunwatch.core.stopping import sigterm_raises

    seen = []

    def body() -> None:
        with sigterm_raises():  # signal handlers are the main thread's only
            seen.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGTERM)]


def test_signals_are_held_while_workers_are_forked() -> None:
    from msrunwatch.core.stopping import STOPS, signals_held

    with signals_held():
        held = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    after = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert set(held) >= STOPS and not STOPS & set(after)


def test_watch_without_a_terminal_stops_on_sigterm_as_triage_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch DIR` in a pipe prints the triage report: a SIGTERM there was the default
    death (no line, readers left to the kernel); now it is triage's one line and 143."""
    from msrunwatch.cli import main
    from msrunwatch.drivers import triage

    real = triage.scan_all

    def scan_all(*args: object, **kwargs: object) -> object:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # never kill pytest
            raise AssertionError("SIGTERM would kill the process outright")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(triage, "scan_all", scan_all)
    assert main(["watch", str(OOM)]) == 128 + signal.SIGTERM
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[-1] == "msrunwatch: terminated"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_headless_watcher_says_why_it_stopped(
    signum: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One line on stderr, as every other command stopped by a signal, beside the done
    event (before, stderr said nothing)."""
    import io

    from msrunwatch.live.headless.loop import Headless
    from msrunwatch.live.headless.options import HeadlessOptions
    from msrunwatch.live.run import LiveRun
    from msrunwatch.rules.loader import load_rules

    live = LiveRun([str(OOM)], load_rules())
    out, err = io.StringIO(), io.StringIO()
    headless = Headless(live, HeadlessOptions(metrics_addr="127.0.0.1"), out=out, err=err)
    real = live.tick

    def tick() -> object:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
            raise AssertionError("the watcher's own handler is not installed")
        os.kill(os.getpid(), signum)
        return real()

    monkeypatch.setattr(live, "tick", tick)
    try:
        assert headless.run() == 128 + signum
    finally:
        live.close()
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert err.getvalue().splitlines()[-1] == f"msrunwatch: {word}"
    done = strict_json(out.getvalue().splitlines()[-1])
    assert (done["event"], done["reason"]) == ("done", word)


# -- a reader that goes away: `| head` ---------------------------------------------------


@pytest.fixture(scope="module")
def wide_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 ranks that failed alike: every command's output is past a pipe's 64 KiB."""
    directory = tmp_path_factory.mktemp("wide") / "msrun_log"
    directory.mkdir()
    failed = (OOM / "worker_1.log").read_bytes()
    for rank in range(300):
        (directory / f"worker_{rank}.log").write_bytes(failed)
    return directory


@pytest.mark.parametrize(
    "args",
    [
        ["triage", "--format", "json"],
        ["check", "--format", "sarif"],
        ["facts", "--evidence"],
        ["watch", "--headless", "--exit-when-done"],
    ],
    ids=lambda args: " ".join(args),
)
def test_a_closed_pipe_ends_the_command_quietly(args: list[str], wide_run: Path) -> None:
    """`msrunwatch ... | head -c 10`: the reader leaves after a few bytes. The command ends,
    says nothing on stderr (no traceback, no 'Exception ignored'), leaves no process, and
    exits 141 (128 + SIGPIPE, as `cat` would): never 0, which said a run that failed, or
    facts cut short, were whole and healthy."""
    proc = start(*args, str(wide_run))
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 141, err
    assert err == b""
    assert group_of(proc.pid) == []
