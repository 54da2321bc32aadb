"""Quiet lines (read.quiet): passed over in bulk, yet every fact is what reading them gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.quiet import QuietLines, quiet_lines
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules.matcher import LineMatcher
from tests.support import ScanText

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FAULT = b"Traceback (most recent call last):\nValueError: boom\n"
GLOG = b"[WARNING] ME(7,7f,python):2026-01-01-00:00:%02d.000.000 [a.cc:1] F] step ok\n"


def scan_all_read(
    matcher: LineMatcher, data: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> FileFacts:
    """The same scan with no line taken as quiet: every candidate line is read."""
    with monkeypatch.context() as patch:
        patch.setattr(QuietLines, "quiet", lambda self, line: False)
        patch.setattr(QuietLines, "none_in", lambda self, buf, start, stop: False)
        scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
        for i in range(0, len(data), chunk):
            scanner.feed(data[i : i + chunk])
        scanner.close()
        return scanner.facts()


def test_the_built_in_rules_leave_lines_quiet(matcher: LineMatcher) -> None:
    quiet = quiet_lines(matcher)
    assert quiet.pattern is not None
    assert quiet.quiet(b"42")
    assert quiet.quiet(b"")
    assert quiet.quiet(b"Number of children     : 1")
    assert not quiet.quiet(b"ValueError: boom")  # python-exception's class-name suffix
    assert not quiet.quiet(b"Traceback (most recent call last):")
    assert not quiet.quiet(b"[WARNING] ME(1,2,python):2026-01-01-00:00:00.000.000 [a:1] x")
    assert not quiet.quiet("données".encode())
    assert not quiet.quiet(b"Device MOC memory size: 65536M")
    assert not quiet.quiet(b"epoch: 1 step: 2, loss is 0.5")


def test_a_fault_after_a_million_quiet_lines_is_at_its_line(scan_text: ScanText) -> None:
    facts = scan_text(b"42\n" * 1_000_000 + FAULT, chunk=1 << 20)
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 1_000_002)]
    assert facts.lines == 1_000_002


def test_quiet_lines_inside_a_traceback_are_read(scan_text: ScanText) -> None:
    """A traceback's frames are quiet lines: read, they name the user's frame; the
    traceback crosses many blocks."""
    frames = b"".join(
        b'  File "/home/u/train.py", line %d, in main\n    x()\n' % i for i in range(9)
    )
    data = b"7\n" * 1000 + b"Traceback (most recent call last):\n" + frames + b"ValueError: boom\n"
    facts = scan_text(data, chunk=64)
    [hit] = facts.hits
    assert (hit.rule, hit.line) == ("python-exception", 1020)
    assert "train.py:8 in main" in hit.message


def test_a_bare_exception_takes_its_body_from_a_quiet_line(scan_text: ScanText) -> None:
    data = (
        b"1\n" * 10 + b"Traceback (most recent call last):\n  x\nRuntimeError:\n\nsomething broke\n"
    )
    facts = scan_text(data, chunk=7)
    assert [h.message for h in facts.hits] == ["RuntimeError: something broke"]


@pytest.mark.parametrize("chunk", [1 << 20, 4096, 61])
def test_quiet_lines_change_nothing(
    matcher: LineMatcher, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Every fixture's worker logs, and a mix of records, quiet lines, gaps (INFO lines) and
    GLOG lines: the facts with quiet lines passed over are those of reading every line."""
    logs = sorted(FIXTURES.glob("*/msrun_log/worker_*.log"))[:40]
    assert logs
    mix = b"".join(
        [
            b"print 1\n",
            FAULT,
            b"print 2\n[INFO] ME(7,7f,python):2026-01-01-00:00:00.000.000 [a.cc:1] F] x\n",
            b"print 3\nRuntimeError:\n",
            b"print 4\n" * 3,
            GLOG % 1,
            b"Traceback (most recent call last):\n  File 'a.py', line 1\n",
            b"quiet\n" * 5,
            b"KeyError: 'k'\nquiet\n",
            GLOG % 2,
        ]
    )
    for data in [mix, *(log.read_bytes() for log in logs)]:
        scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
        for i in range(0, len(data), chunk):
            scanner.feed(data[i : i + chunk])
        scanner.close()
        assert scanner.facts() == scan_all_read(matcher, data, chunk, monkeypatch)


def flood(seed: int) -> bytes:
    """Print floods (repeated and all-different lines, over many slices of a run) with a
    traceback, a bare exception, progress, a memory block and GLOG lines inside them."""
    repeated = b"".join(b"%d\n" % (i % 100) for i in range(120_000))
    different = b"".join(b"value rate %d of %d\n" % (i * seed, i) for i in range(30_000))
    return b"".join(
        [
            repeated,
            b"Traceback (most recent call last):\n",
            b'  File "/home/u/train.py", line 3, in main\n' * 3,
            repeated[:5000],
            b"ValueError: boom\n",
            different,
            b"epoch: 1 step: 2, loss is 0.5\n",
            repeated,
            b"Traceback (most recent call last):\n  x\nRuntimeError:\n" + repeated[:3000],
            GLOG % 3,
            b"Device MOC memory size: 65536M\n" + different[:4000],
            b"MindSpore Used memory size: 1024M\n",
            b"[INFO] ME(7,7f,python):2026-01-01-00:00:09.000.000 [a.cc:1] F] x\n",
            different,
            b"KeyError: 'k'\n",
            repeated,
        ]
    )


@pytest.mark.parametrize("chunk", [8 << 20, 100_000, 4093])
def test_print_floods_change_nothing(
    matcher: LineMatcher, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    data = flood(7)
    scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
    for i in range(0, len(data), chunk):
        scanner.feed(data[i : i + chunk])
    scanner.close()
    facts = scanner.facts()
    assert facts == scan_all_read(matcher, data, chunk, monkeypatch)
    assert facts.lines == data.count(b"\n")
    assert {h.rule for h in facts.hits} == {"python-exception"}
    [key_error] = [h for h in facts.hits if "KeyError" in h.message]
    assert key_error.line == data[: data.index(b"KeyError")].count(b"\n") + 1


def test_a_fault_deep_in_a_flood_of_different_prints_is_at_its_line(scan_text: ScanText) -> None:
    prints = b"".join(b"sample %d\n" % i for i in range(200_000))
    facts = scan_text(prints + b"ValueError: late\n" + prints)
    assert [(h.line, h.message) for h in facts.hits] == [(200_001, "ValueError: late")]
    assert facts.lines == 400_001
