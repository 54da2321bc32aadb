"""Log text cannot forge output: no raw escapes on a terminal or in annotations, no HTML
or line breaks in Markdown, and what could not be read shows in every format."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.hostile.support import GLOG, cli, log_dir, strict_json

FORGED = (
    "RuntimeError: \x1b]0;owned\x07\x1b[2J\x1b[31mred\x9b1m <img src=x onerror=alert(1)>"
    " [click](https://evil.example) ![px](https://evil.example/p.png) | cell"
    "\r# Forged heading\u202eevil\x08"
)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")
"""What must never reach a terminal or a CI log from a log line (line feeds are the
renderers' own)."""


@pytest.fixture
def forged(tmp_path: Path) -> Path:
    return log_dir(tmp_path, "Traceback (most recent call last):", FORGED)


@pytest.mark.parametrize(
    "args", [["triage", "--color", "always"], ["check"], ["check", "--format", "github"]]
)
def test_no_control_character_reaches_the_terminal(
    args: list[str], forged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, args[0], str(forged), *args[1:])
    assert code == 1
    assert "\\x1b]0;owned\\x07" in out  # the text is shown, its controls visible...
    if "always" in args:
        out = re.sub("\x1b\\[[0-9;]*m", "", out)  # ...and the only escapes are our colours
    assert RAW.search(out) is None


@pytest.mark.parametrize(
    "args", [["triage", "--format", "markdown"], ["check", "--format", "github"]]
)
def test_markdown_carries_no_html_links_or_forged_lines(
    args: list[str],
    forged: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = cli(capsys, args[0], str(forged), *args[1:])
    assert code == 1
    text = out if args[0] == "triage" else summary.read_text(encoding="utf-8")
    assert "<img" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert re.search(r"(?<!\\)\]\(https://evil", text) is None  # no link, no image
    assert not any(line.startswith("# Forged") for line in text.splitlines())
    assert RAW.search(text) is None


def test_sanitisers_keep_ordinary_text_as_it_is() -> None:
    from msrunwatch.core.sanitize import markdown, markdown_code, terminal

    line = "Out of memory: 0_Default/BroadcastTo-op0 could not allocate 68719476736 B\tok"
    assert terminal(line) == line
    assert markdown("worker_1.log: rank 3 (4 failed)") == "worker_1.log: rank 3 (4 failed)"
    assert markdown_code("a`b") == "``a`b``"
    assert terminal("a\nb", newlines=True) == "a\nb"
    assert terminal("a\nb") == "a\\x0ab"


# -- what could not be read is in every format ----------------------------------------


@pytest.fixture
def partly_unreadable(tmp_path: Path) -> Path:
    directory = log_dir(tmp_path, "Traceback (most recent call last):", "ValueError: bad")
    os.mkfifo(directory / "worker_1.log")
    return directory


def test_sarif_is_unsuccessful_with_a_notification(
    partly_unreadable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = cli(capsys, "check", str(partly_unreadable), "--format", "sarif")
    invocation = json.loads(out)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert "worker_1.log" in note["message"]["text"] and "FIFO" in note["message"]["text"]


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "gitlab", "json"])
def test_every_check_format_says_what_was_not_read(
    fmt: str, partly_unreadable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = cli(capsys, "check", str(partly_unreadable), "--format", fmt)
    assert "worker_1.log" in out and "FIFO" in out
    if fmt == "junit":
        cases = ET.fromstring(out).iter("testcase")
        assert any(
            c.get("name") == "every-input-read" and c.find("failure") is not None for c in cases
        )
    if fmt == "gitlab":
        assert any(i["check_name"] == "msrunwatch-input-not-read" for i in json.loads(out))


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_every_triage_format_says_what_was_not_read(
    fmt: str, partly_unreadable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = cli(capsys, "triage", str(partly_unreadable), "--format", fmt)
    assert "worker_1.log" in out and "FIFO" in out


def test_headless_events_stay_one_line_each_whatever_line_breaks_a_log_holds(
    tmp_path: Path,
) -> None:
    """NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR passed raw into the JSON Lines stream, so
    a reader splitting on Unicode line breaks cut an event in two (found by the property
    test)."""
    directory = log_dir(tmp_path, GLOG + "boom \x85 one \u2028 two \u2029 three")
    command = [sys.executable, "-m", "msrunwatch", "watch", str(directory), "--headless"]
    command += ["--exit-when-done"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    events = [strict_json(line) for line in done.stdout.splitlines()]
    assert events[-1]["event"] == "done"
    assert any("boom \x85 one \u2028 two \u2029 three" in json.dumps(e, ensure_ascii=False)
               for e in events if e["event"] == "finding")  # fmt: skip
