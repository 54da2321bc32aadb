"""Names as bytes (issue 21, defect 2): a file or directory name that is not UTF-8, as a
Chinese-locale cluster writes them in GBK, is read like any other and shown escaped
(`\\xd7\\xf7`) in every output, which stays valid UTF-8 (and valid JSON, SARIF, GitLab
JSON, JUnit XML). Before, `check --format sarif|gitlab` was an internal error, the JSON
report and the events were not UTF-8, and `watch --headless --events` died at start."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.hostile.support import run_cli, shown, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
JOB = "作业".encode("gbk")
"""A directory name in GBK (`作业`, job): not UTF-8."""
MEMORY = "内存".encode("gbk")
JOB_SHOWN = JOB.decode("utf-8", "backslashreplace")
"""How the name is shown: each byte that is not UTF-8 as \\xNN (`\\xd7\\xf7ҵ`: its last
two bytes happen to be UTF-8)."""
MEMORY_SHOWN = MEMORY.decode("utf-8", "backslashreplace")


@pytest.fixture
def gbk_run(tmp_path: Path) -> str:
    """A copy of a real failed run (rank 1 failed first with an OOM) under a GBK-named
    directory, rank 1's log under a GBK name: the path as the command line gets it."""
    directory = os.path.join(os.fsencode(tmp_path), JOB, b"msrun_log")
    os.makedirs(directory)
    for path in OOM.iterdir():
        name = os.fsencode(path.name)
        if path.name == "worker_1.log":
            name = MEMORY + b"_1.log"
        shutil.copyfile(path, os.path.join(directory, name))
    return os.fsdecode(directory)


FORMATS = [
    ("triage", "text"),
    ("triage", "json"),
    ("triage", "markdown"),
    ("check", "text"),
    ("check", "json"),
    ("check", "sarif"),
    ("check", "junit"),
    ("check", "github"),
    ("check", "gitlab"),
]


@pytest.mark.parametrize(("command", "fmt"), FORMATS)
def test_every_format_shows_a_gbk_name_escaped_in_valid_utf8(
    command: str, fmt: str, gbk_run: str
) -> None:
    done = run_cli(command, gbk_run, "--format", fmt)
    assert done.returncode == 1, done.stderr  # rank 1's OOM was read: faults found
    out = shown(done.stdout)
    shown(done.stderr)
    if fmt in ("json", "sarif", "gitlab"):
        out = "\n".join(strings(strict_json(out)))
    if fmt == "sarif":
        assert "%D7%F7" in out  # the URI encodes the name's own bytes
    if fmt == "junit":
        ET.fromstring(out.split("\n", 1)[1])
    if fmt == "json":
        cause = strict_json(done.stdout)["root_cause"]
        assert cause["ranks"] == [1]
        assert cause["file"] == f"{MEMORY_SHOWN}_1.log"
    assert JOB_SHOWN in out


def strings(value: object) -> list[str]:
    """Every string a JSON document holds, keys included, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_the_headless_watcher_writes_valid_events_for_a_gbk_directory(
    gbk_run: str, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    done = run_cli("watch", gbk_run, "--headless", "--exit-when-done", "--events", str(events))
    assert done.returncode == 1, done.stderr
    shown(done.stderr)
    records = [strict_json(line) for line in shown(events.read_bytes()).splitlines()]
    assert records[0]["event"] == "start" and JOB_SHOWN in records[0]["targets"][0]
    assert records[-1]["event"] == "done" and records[-1]["outcome"] == "failed"
    causes = [r for r in records if r["event"] == "root_cause"]
    assert causes and causes[-1]["file"] == f"{MEMORY_SHOWN}_1.log"


def test_events_on_stdout_and_the_hook_get_valid_utf8(gbk_run: str, tmp_path: Path) -> None:
    hooked = tmp_path / "hook"
    hooked.mkdir()
    command = f'cat > "$(mktemp -p {hooked})"'
    done = run_cli("watch", gbk_run, "--headless", "--exit-when-done", "--on-finding", command)
    assert done.returncode == 1, done.stderr
    for line in shown(done.stdout).splitlines():
        strict_json(line)
    given = [strict_json(shown(path.read_bytes())) for path in hooked.iterdir()]
    assert any(event["file"] == f"{MEMORY_SHOWN}_1.log" for event in given)


def test_an_error_naming_a_gbk_path_is_valid_utf8(tmp_path: Path) -> None:
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), JOB))
    done = run_cli("triage", missing)
    assert done.returncode == 2
    err = shown(done.stderr)
    assert err.count("\n") == 1 and JOB_SHOWN in err


def test_facts_of_a_gbk_named_log_are_utf8_and_triage(gbk_run: str, tmp_path: Path) -> None:
    facts = tmp_path / "node.facts.jsonl"
    done = run_cli("facts", gbk_run, "-o", str(facts), "--host", "node0")
    assert done.returncode == 0, done.stderr
    for line in shown(facts.read_bytes()).splitlines():
        strict_json(line)
    done = run_cli("triage", str(facts), "--format", "json")
    assert done.returncode == 1, done.stderr
    cause = strict_json(shown(done.stdout))["root_cause"]
    assert cause["ranks"] == [1] and cause["file"] == f"{MEMORY_SHOWN}_1.log"
