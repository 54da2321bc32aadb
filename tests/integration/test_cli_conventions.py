"""The command line behaves as users of ruff, git and pip expect: help, typos, versions,
colour switches, standard input, completion, and recipes that work in scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch import __version__
from msrunwatch.cli import main
from msrunwatch.commands.parser import build
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed"
WORKER_1 = OOM / "msrun_log" / "worker_1.log"


def run(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """The installed command, as a shell runs it (stdout is a pipe, never a terminal)."""
    out = subprocess.run(
        [sys.executable, "-m", "msrunwatch", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    return out.returncode, out.stdout.decode(), out.stderr.decode()


def test_a_bare_command_prints_the_help_with_examples_and_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: msrunwatch")
    assert "examples:" in out and "exit codes:" in out
    for command in ("triage", "watch", "check", "rules", "estimate", "completion", "help"):
        assert command in out


@pytest.mark.parametrize("command", ["triage", "watch", "check", "estimate", "rules", "completion"])
def test_help_works_as_a_command_and_every_option_is_explained(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["help", command])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: msrunwatch {command}")
    assert "examples:" in out and "exit codes:" in out
    options = [line for line in out.splitlines() if line.startswith("  -") and "  " in line.strip()]
    lone = [
        line
        for line in out.splitlines()
        if line.startswith("  --") and line.strip().count(" ") == 0
    ]
    assert options and not lone, f"options without help: {lone}"


@pytest.mark.parametrize(
    ("typo", "meant"), [("triag", "triage"), ("chek", "check"), ("hlep", "help")]
)
def test_a_typo_is_an_error_with_a_suggestion_not_a_directory_to_watch(
    typo: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([typo]) == 2
    assert (
        capsys.readouterr().err
        == f"msrunwatch: error: unknown command {typo!r}; did you mean {meant!r}?\n"
    )


def test_a_mistyped_subcommand_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rules", "lst"])
    assert "did you mean 'list'?" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--version` alone is answered before the parser is built: as the parser answers it."""
    assert main([flag]) == 0
    fast = capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        build().parse_args([flag])
    assert done.value.code == 0
    assert capsys.readouterr().out == fast == f"msrunwatch {__version__}\n"


def test_version_among_other_words_is_the_parsers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["-V", "check"])
    assert done.value.code == 0 and capsys.readouterr().out == f"msrunwatch {__version__}\n"


def test_rules_show_and_list_by_scope(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "show", "oom-memory-not-enough"]) == 0
    page = capsys.readouterr().out
    assert "oom-memory-not-enough" in page and "What to do:" in page
    assert main(["rules", "list", "--scope", "run"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split()[:2] == ["ID", "SCOPE"]
    assert all(row.split()[1] == "run" for row in rows[1:])


def test_a_single_file_gives_paths_that_exist_in_text_and_sarif(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = os.path.relpath(WORKER_1)
    main(["triage", target])
    assert f"at {target}:20 " in capsys.readouterr().out
    main(["check", target, "--format", "sarif"])
    sarif = capsys.readouterr().out
    assert f'"uri": "{target}"' in sarif and "worker_1.log/worker_1.log" not in sarif


def test_standard_input_is_read_for_a_dash() -> None:
    code, out, _ = run("triage", "-", stdin=WORKER_1.read_bytes())
    assert code == 1
    assert "at <stdin>:20 " in out
    code, out, _ = run("check", "-", stdin=WORKER_1.read_bytes())
    assert code == 1 and out.startswith("<stdin>:20: error oom-memory-not-enough")


def test_colour_follows_color_then_no_color_then_force_color() -> None:
    red = "\x1b[31m"
    assert red not in run("triage", str(OOM))[1]
    assert red in run("triage", str(OOM), env={"FORCE_COLOR": "1"})[1]
    assert red not in run("triage", str(OOM), env={"FORCE_COLOR": "1", "NO_COLOR": "1"})[1]
    assert red in run("triage", str(OOM), "--color", "always", env={"NO_COLOR": "1"})[1]
    assert red in run("check", str(OOM), "--color", "always")[1]


def test_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    main(["triage", str(OOM), "-v"])
    assert "msrunwatch: read 4 files, 34.2 KiB in " in capsys.readouterr().err
    code, _, err = run(str(OOM), "-q")
    assert code == 1 and err == ""


def test_shell_completion_scripts() -> None:
    for shell in ("bash", "zsh"):
        code, out, _ = run("completion", shell)
        assert code == 0 and "msrunwatch" in out and "triage" in out and "--stall-after" in out


def test_a_pipe_gets_the_triage_report_and_its_exit_code() -> None:
    """`msrunwatch DIR | cat`: no screen drawn into the pipe; the report, a note, the code."""
    code, out, err = run(str(OOM))
    assert code == 1
    assert out.startswith("FAILED  rank 1 failed first: oom") and "\x1b[" not in out
    assert err == (
        "msrunwatch: standard output is not a terminal: printing the triage report instead "
        "(watch --headless follows a run without one)\n"
    )


def test_a_pipe_judges_the_clock_as_triage_does() -> None:
    """A whole job stopped from outside days ago: `msrunwatch DIR | cat` said RUNNING where
    `triage DIR` said job-stopped (the piped form did not read the clock). The report and
    the exit code are triage's, byte for byte."""
    stopped = str(FIXTURES / "cpu_sigterm_whole_job")
    piped, triaged = run(stopped), run("triage", stopped)
    assert piped[:2] == triaged[:2]
    assert piped[1].startswith("FAILED  the job failed: job-stopped")


def test_watch_waits_for_a_directory_that_does_not_exist_yet(tmp_path: Path) -> None:
    """The job-script recipe: the watcher starts before msrun creates its --log_dir. In its
    own process, as in a job script (in a thread, a redirected stderr raced pytest's capture,
    and a watcher that did not end kept the test run alive)."""
    target = tmp_path / "msrun_log"
    events = tmp_path / "events.jsonl"
    command = [sys.executable, "-m", "msrunwatch", "watch", str(target), "--headless"]
    command += ["--exit-when-done", "--events", str(events), "--wait", "60"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as watcher:
        try:
            assert watcher.stderr is not None
            said = watcher.stderr.readline()  # the directory appears only once it waits
            shutil.copytree(OOM / "msrun_log", target)
            _, err = watcher.communicate(timeout=60)
        finally:
            watcher.kill()
    assert watcher.returncode == 1, said + err
    assert f"waiting for {target} to appear" in said
    assert '"event": "done"' in events.read_text().splitlines()[-1]


def test_watch_gives_up_after_wait(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "never")
    assert main(["watch", missing, "--headless", "--wait", "0.3"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"msrunwatch: error: {missing}: did not appear within 0.3s\n")
