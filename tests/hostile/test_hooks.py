"""--on-finding runs its command for every error finding, whatever the message holds: a NUL
or more than 128 KiB used to stop the command from starting, without a word."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Finding
from msrunwatch.live.headless.hooks import Hook
from msrunwatch.report import jsonout
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES


@pytest.fixture
def finding(rules: list[Rule]) -> Finding:
    report = triage([str(FIXTURES / "cpu_dp2_oom_alloc_failed")], rules)
    return report.findings[0]


def run_hook(command: str, finding: Finding) -> str:
    """Run the hook once for the finding; returns what it warned."""
    err = io.StringIO()
    hook = Hook(command, err, timeout_s=30)
    hook.submit(finding, {"event": "finding", **jsonout.finding(finding)})
    hook.close(wait=True)
    return err.getvalue()


@pytest.mark.parametrize(
    "message",
    ["before\0after", "x" * (200 * 1024), "é" * 70_000, "\x1b]0;owned\x07 and \r"],
    ids=["nul", "200-KiB", "multibyte", "escapes"],
)
def test_the_command_runs_whatever_the_message_holds(
    message: str, finding: Finding, tmp_path: Path
) -> None:
    odd = replace(finding, message=message)
    env_out, stdin_out = tmp_path / "env", tmp_path / "stdin"
    command = f"printf %s \"$MSRUNWATCH_MESSAGE\" > '{env_out}'; cat > '{stdin_out}'"
    assert run_hook(command, odd) == ""
    value = env_out.read_bytes()
    assert b"\0" not in value and len(value) <= 8192
    assert b"\x1b" not in value and b"\x07" not in value
    assert json.loads(stdin_out.read_text(encoding="utf-8"))["message"] == message  # in full


def test_a_command_that_cannot_start_is_a_warning(
    finding: Finding, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("embedded null byte")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    warned = run_hook("true", finding)
    assert warned.startswith(f"msrunwatch: warning: --on-finding for {finding.rule}: cannot start")


def test_the_message_reads_as_the_text_views_and_the_raw_one_is_kept(
    finding: Finding, tmp_path: Path
) -> None:
    """The README's chat example posts MSRUNWATCH_MESSAGE: it says `64.0 GiB` as `triage`
    does, not the byte count; MSRUNWATCH_MESSAGE_RAW and the event keep what the rule wrote."""
    human, raw = tmp_path / "human", tmp_path / "raw"
    command = (
        f"printf %s \"$MSRUNWATCH_MESSAGE\" > '{human}'; "
        f"printf %s \"$MSRUNWATCH_MESSAGE_RAW\" > '{raw}'"
    )
    assert run_hook(command, finding) == ""
    assert finding.message.endswith("could not allocate 68719476736 B")
    assert human.read_text(encoding="utf-8") == finding.message.replace("68719476736 B", "64.0 GiB")
    assert raw.read_text(encoding="utf-8") == finding.message
