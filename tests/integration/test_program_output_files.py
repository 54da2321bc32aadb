"""What `-o FILE` writes is whole when the program ends itself (cli.end_now: os._exit, with no
interpreter teardown left to close a file the command forgot): triage's JSON, check's SARIF and
a node's facts, each written by the real program and read back. JSON and SARIF are the bytes
the same command writes in-process, and parse; the facts end with their `end` record, whose
counts are the lines and bytes before it.

The check can fail: the same program with its writers leaving the file open and unflushed
(what os._exit then loses) leaves files it refuses, cut after the first buffer or empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES, program, python

RUN = FIXTURES / "synth_hccl_ei0006_after_oom_8p"
"""The run directory, msrun's console with its logs: nothing to say on stderr (given its
msrun_log alone, triage says once that the console beside it is not read)."""
LOGS = RUN / "msrun_log"
REPORTS = {  # name: (the command, without -o; its exit code on RUN, a failed run)
    "triage.json": (["triage", str(RUN), "--format", "json"], 1),
    "check.sarif": (["check", str(RUN), "--format", "sarif"], 1),
}

UNFLUSHED = """
import sys
from msrunwatch.core import fileio
from msrunwatch.drivers import facts

left_open = []

def write_whole(path, data):
    fh = open(path, "wb")
    for start in range(0, len(data), 1024):  # in pieces: one larger than the buffer is not kept
        fh.write(data[start : start + 1024])
    left_open.append(fh)

def atomic_write(path, lines):
    fh = open(path, "w", encoding="utf-8")
    for line in lines:
        fh.write(line + "\\n")
    left_open.append(fh)
    return 0, 0

fileio.write_whole, facts.atomic_write = write_whole, atomic_write
from msrunwatch.cli import main
sys.argv[0] = "msrunwatch"
main()
"""
"""The program with its file writers broken as a forgotten close would break them."""


def report_is_whole(written: Path, args: list[str], tmp_path: Path) -> bool:
    """The bytes the command writes in-process (its file closed by the test's own exit from
    main), and a JSON document."""
    in_process = tmp_path / f"in-process.{written.name}"
    main([*args, "-o", str(in_process)])
    data = written.read_bytes()
    if data != in_process.read_bytes():
        return False
    json.loads(data)
    return True


def facts_are_whole(written: Path) -> bool:
    """Every line a JSON record, the last the `end` record that counts the ones before it."""
    data = written.read_bytes()
    if not data.endswith(b"\n"):
        return False
    lines = data.splitlines(keepends=True)
    try:
        records = [json.loads(line) for line in lines]
    except json.JSONDecodeError:
        return False
    end = records[-1]
    return (
        end["kind"] == "end"
        and end["records"] == len(records) - 1
        and end["bytes"] == sum(map(len, lines[:-1]))
    )


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_a_report_written_with_o_is_whole(name: str, tmp_path: Path) -> None:
    args, code = REPORTS[name]
    written = tmp_path / name
    done = program(*args, "-o", written)
    assert (done.returncode, done.stdout, done.stderr) == (code, "", "")
    assert report_is_whole(written, args, tmp_path)


def test_facts_written_with_o_are_whole(tmp_path: Path) -> None:
    written = tmp_path / "node1.facts.jsonl"
    done = program("facts", LOGS, "--host", "node1", "-o", written)
    assert done.returncode == 0, done.stderr
    assert facts_are_whole(written)
    assert json.loads(written.read_bytes().splitlines()[-1])["files"] == len(list(LOGS.iterdir()))


def test_a_file_left_unflushed_at_the_end_fails_these_checks(tmp_path: Path) -> None:
    for name, (args, code) in REPORTS.items():
        written = tmp_path / name
        assert python("-c", UNFLUSHED, *args, "-o", written).returncode == code
        assert not report_is_whole(written, args, tmp_path)
    facts = tmp_path / "node1.facts.jsonl"
    done = python("-c", UNFLUSHED, "facts", LOGS, "--host", "node1", "-o", facts)
    assert done.returncode == 0, done.stderr
    assert not facts_are_whole(facts)
