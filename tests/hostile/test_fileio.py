"""core/fileio.py in process: only regular files are opened, reads stop at their cap, and a
file is written whole or not at all. Each case is what a hostile path makes of a reader:
a FIFO that would block, a device that never ends, a file larger than promised."""

from __future__ import annotations

import os
import pickle
import socket
import stat
from pathlib import Path

import pytest

from msrunwatch.core.fileio import (
    FileTooLarge,
    NotRegularFile,
    kind_of,
    open_regular,
    read_capped,
    read_head,
    write_whole,
)


def test_every_kind_of_path_that_is_not_a_file_is_named(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "sock"))
        kinds = {
            name: kind_of(os.stat(path).st_mode)
            for name, path in [
                ("dir", tmp_path),
                ("fifo", fifo),
                ("sock", tmp_path / "sock"),
                ("zero", Path("/dev/zero")),
            ]
        }
    assert kinds == {
        "dir": "a directory",
        "fifo": "a FIFO",
        "sock": "a socket",
        "zero": "a character device",
    }
    assert kind_of(stat.S_IFREG | 0o644) is None


@pytest.mark.parametrize("name", ["fifo", "zero link", "directory"])
def test_what_is_not_a_regular_file_is_never_opened(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    if name == "fifo":
        os.mkfifo(path)  # opened, it would block until a writer came: forever
    elif name == "zero link":
        path.symlink_to("/dev/zero")  # read, it would never end
    else:
        path.mkdir()
    with pytest.raises(NotRegularFile) as raised:
        read_head(path, 10)
    assert raised.value.filename == str(path) and "not a regular file" in str(raised.value)


def test_a_file_over_its_cap_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge, match="larger than 100 bytes"):
        read_capped(path, 100)
    assert read_capped(path, 101) == b"x" * 101
    assert read_head(path, 4) == b"xxxx"


def test_the_errors_cross_to_the_parent_process_as_raised(tmp_path: Path) -> None:
    """A reader process raises these; the pool pickles them back to the parent."""
    for error in (NotRegularFile(tmp_path / "f", "a FIFO"), FileTooLarge(tmp_path / "f", 7)):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)


def test_a_descriptor_is_of_the_file_itself(tmp_path: Path) -> None:
    path = tmp_path / "worker_0.log"
    path.write_bytes(b"line\n")
    fd = open_regular(path)
    try:
        assert os.read(fd, 100) == b"line\n"
    finally:
        os.close(fd)


def test_writing_replaces_the_file_whole_and_keeps_a_link(tmp_path: Path) -> None:
    real = tmp_path / "report.json"
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real.name)
    write_whole(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "report.json"]


def test_writing_to_something_that_is_not_a_file_writes_through(tmp_path: Path) -> None:
    write_whole(Path("/dev/null"), b"data")  # /dev/stdout and FIFOs alike: no temporary


def test_a_failed_write_leaves_neither_file_nor_temporary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"

    def refuse(*args: object) -> None:  # as a full disk or a signal half-way would
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", refuse)
        with pytest.raises(OSError, match="No space"):
            write_whole(report, b"partial")
    assert list(tmp_path.iterdir()) == []
