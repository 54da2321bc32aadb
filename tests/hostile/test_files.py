"""Files as they are: FIFOs, devices, sockets, symlink loops and escapes, unreadable files
and directories. Nothing blocks, nothing is read forever, nothing unreadable passes as
healthy, and when nothing could be read the exit code is 2."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest

from tests.hostile.support import cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"


def copy_run(tmp_path: Path) -> Path:
    """A copy of a real failed run (rank 1 failed first with an OOM)."""
    directory = tmp_path / "msrun_log"
    directory.mkdir()
    for path in OOM.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    return directory


def warnings_of(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, list[str]]:
    code, out, err = cli(capsys, "triage", str(directory), "--format", "json")
    assert "Traceback" not in err
    return code, strict_json(out)["warnings"]


def test_a_fifo_in_the_log_tree_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_run(tmp_path)
    os.mkfifo(directory / "worker_7.log")
    os.mkfifo(directory / "stray")
    code, warnings = warnings_of(capsys, directory)
    assert code == 1
    assert sum("FIFO" in w for w in warnings) == 2


def test_a_socket_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_run(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(directory / "worker_3.log"))
        code, warnings = warnings_of(capsys, directory)
    finally:
        sock.close()
    assert code == 1
    assert any("worker_3.log" in w and "socket" in w for w in warnings)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_log_that_is_a_symlink_to_a_device_is_never_read(
    device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_run(tmp_path)
    (directory / "worker_5.log").symlink_to(device)
    code, warnings = warnings_of(capsys, directory)
    assert code == 1
    assert any("worker_5.log" in w for w in warnings)


def test_symlink_loops_and_escapes_are_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_run(tmp_path)
    (directory / "worker_8.log").symlink_to("worker_9.log")
    (directory / "worker_9.log").symlink_to("worker_8.log")
    (directory / "up").symlink_to("..")
    outside = tmp_path / "elsewhere.log"
    outside.write_bytes((OOM / "worker_0.log").read_bytes())
    (directory / "worker_4.log").symlink_to(outside)
    code, warnings = warnings_of(capsys, directory)
    assert code == 1
    text = "\n".join(warnings)
    assert "worker_8.log: a symlink loop" in text
    assert "up: a symlink to a directory" in text
    assert "worker_4.log: a symlink to" in text and "outside the log directory" in text


def test_a_symlink_inside_the_log_directory_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_run(tmp_path)
    (directory / "worker_1.log").rename(directory / "real_1.txt")
    (directory / "worker_1.log").symlink_to("real_1.txt")
    code, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    assert code == 1
    assert strict_json(out)["root_cause"]["ranks"] == [1]


@pytest.mark.parametrize("command", ["triage", "check"])
def test_nothing_readable_is_exit_2_with_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "msrun_log"
    directory.mkdir()
    os.mkfifo(directory / "worker_0.log")
    code, out, err = cli(capsys, command, str(directory))
    assert code == 2
    assert err.count("\n") == 1 and "FIFO" in err and out == ""


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_device_given_as_the_target_is_exit_2(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "triage", target)
    assert code == 2
    assert "character device" in err


def test_an_empty_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(copy_run(tmp_path))  # `triage ""` used to triage the working directory
    for command in ("triage", "check", "watch"):
        code, out, err = cli(capsys, command, "")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "empty" in err


# -- unreadable files and directories (simulated: the tests may run as root) ---------------


def deny(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make opening or listing the named paths fail with EACCES, as mode 000 would."""
    real_open, real_scandir = os.open, os.scandir

    def denied(path: object) -> bool:
        return Path(str(path)).name in names

    def fake_open(path: object, *args: object, **kwargs: object) -> int:
        if denied(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    def fake_scandir(path: object = ".") -> object:
        if denied(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)


def test_every_log_unreadable_is_exit_2_not_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = copy_run(tmp_path)
    deny(monkeypatch, *(p.name for p in directory.iterdir()))
    code, out, err = cli(capsys, "check", str(directory), "--format", "sarif")
    assert code == 2
    assert "Permission denied" in err and out == ""


def test_an_unreadable_rank_directory_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = copy_run(tmp_path)
    (directory / "rank_2").mkdir()
    deny(monkeypatch, "rank_2")
    code, out, _ = cli(capsys, "check", str(directory), "--format", "sarif")
    assert code == 1
    invocation = strict_json(out)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "rank_2" in invocation["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files at mode 000")
def test_mode_000_for_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = copy_run(tmp_path)
    for path in directory.iterdir():
        path.chmod(0)
    code, _, err = cli(capsys, "check", str(directory))
    assert code == 2 and "Permission denied" in err


def test_a_vanishing_directory_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = copy_run(tmp_path)
    (directory / "rank_5").mkdir()
    real_scandir = os.scandir

    def vanish(path: object = ".") -> object:
        if Path(str(path)).name == "rank_5":
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", vanish)
    code, warnings = warnings_of(capsys, directory)
    assert code == 1
    assert any("rank_5" in w and "vanished" in w for w in warnings)


def test_one_file_unreadable_among_many_is_a_warning_not_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = copy_run(tmp_path)
    deny(monkeypatch, "worker_0.log")
    code, warnings = warnings_of(capsys, directory)
    assert code == 1
    assert any("worker_0.log" in w and "Permission denied" in w for w in warnings)
