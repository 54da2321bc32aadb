"""A log directory given alone, with msrun's console beside it: the user is told once, on
stderr, which console was not read and the two forms that read it; `-v` says which console
was read, or that none was. Before, `triage fixtures/cpu_kill9_rank1/msrun_log` said
nothing of the console one directory up (trial N1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.read.consolebeside import console_beside, consoles_beside
from tests.support import FIXTURES, ROOT

KILL9 = "fixtures/cpu_kill9_rank1"
TWO_NODES = "fixtures/cpu_2nodes_node1_killed"
CONSOLE = f"{KILL9}/msrun_console.txt"


def _stderr(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(args)
    return capsys.readouterr().err


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_a_log_dir_alone_names_the_console_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    err = _stderr(["triage", f"{KILL9}/msrun_log"], capsys)
    assert err.count("msrun_console.txt") >= 1 and err.count("is not read") == 1
    assert f"msrun's console {CONSOLE} is beside the logs given and is not read" in err
    assert f"give the run directory ({KILL9}) or --console {CONSOLE}" in err


def test_the_view_without_a_terminal_says_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    err = _stderr([f"{KILL9}/msrun_log"], capsys)  # `msrunwatch DIR` into a pipe: triage
    assert err.count("is not read") == 1


def test_quiet_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert "console" not in _stderr(["triage", f"{KILL9}/msrun_log", "-q"], capsys)


@pytest.mark.parametrize(
    "args",
    [[KILL9], [f"{KILL9}/msrun_log", "--console", CONSOLE]],
    ids=["run-dir", "--console"],
)
def test_verbose_says_which_console_was_read(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _stderr(["triage", *args, "-v"], capsys)
    assert f"msrunwatch: console: {CONSOLE} read" in err
    assert "is not read" not in err


def test_verbose_says_when_none_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FIXTURES / "cpu_kill9_rank1" / "msrun_log", tmp_path / "msrun_log")
    monkeypatch.chdir(tmp_path)
    err = _stderr(["triage", "msrun_log", "-v"], capsys)
    assert "msrunwatch: console: none read" in err and "is not read" not in err


def test_a_nodes_log_dir_finds_its_nodes_console_two_levels_up() -> None:
    run = "fixtures/cpu_2nodes_node1_killed"
    assert console_beside(f"{run}/node0/msrun_log") == Path(f"{run}/node0_console.txt")
    assert console_beside(run) is None  # the run dir reads its console itself
    assert console_beside(f"{KILL9}/msrun_log/worker_0.log") is None  # a file: no guess


def test_the_live_view_says_it_before_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """The terminal view (say_beside, called before it draws): once, and not with --console."""
    import argparse

    from msrunwatch.commands.consolehint import say_beside

    say_beside(argparse.Namespace(console=None, quiet=False), [f"{KILL9}/msrun_log"])
    assert capsys.readouterr().err.count("is not read") == 1
    say_beside(argparse.Namespace(console=[CONSOLE], quiet=False), [f"{KILL9}/msrun_log"])
    assert capsys.readouterr().err == ""


def test_a_second_nodes_log_dir_is_told_its_own_nodes_console(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Re-trial A17: node 1's logs alone named node 0's console, whose ranks, read with
    them, joined node 1's table. The console that started node 1's workers is named."""
    err = _stderr(["triage", f"{TWO_NODES}/node1/msrun_log"], capsys)
    assert f"--console {TWO_NODES}/node1_console.txt" in err
    assert "node0_console" not in err
    assert console_beside(f"{TWO_NODES}/node1") == Path(f"{TWO_NODES}/node1_console.txt")


def _console(path: Path, *log_files: str) -> None:
    starts = "".join(
        f"Start worker process with rank id:{i}, log file:{name}. Environment variable "
        f"[RANK_ID={i}] is exported. Execute command: python train.py\n"
        for i, name in enumerate(log_files)
    )
    path.write_text(starts + "Distributed job is spawned.\n")


def _node_logs(root: Path, *names: str) -> Path:
    logs = root / "node1" / "msrun_log"
    logs.mkdir(parents=True)
    for name in names:
        shutil.copy(FIXTURES / "cpu_kill9_rank1" / "msrun_log" / "worker_0.log", logs / name)
    return logs


def test_only_another_nodes_console_beside_is_not_offered(tmp_path: Path) -> None:
    logs = _node_logs(tmp_path, "worker_2.log", "worker_3.log")
    _console(tmp_path / "node0_console.txt", "node0/msrun_log/worker_0.log")
    assert consoles_beside(str(logs)).mine is None
    assert consoles_beside(str(logs)).untold == ()


def test_consoles_that_cannot_be_told_apart_are_named_and_none_is_offered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two consoles that both started a `worker_2.log` elsewhere (two runs in one place):
    the note names both and offers neither as the node's."""
    logs = _node_logs(tmp_path, "worker_2.log")
    for name in ("a_console.txt", "b_console.txt"):
        _console(tmp_path / name, "/elsewhere/msrun_log/worker_2.log")
    monkeypatch.chdir(tmp_path)
    err = _stderr(["triage", str(logs.relative_to(tmp_path))], capsys)
    assert "msrun's consoles a_console.txt, b_console.txt are beside the logs given" in err
    assert "do not say which" in err and "--console a_console" not in err
