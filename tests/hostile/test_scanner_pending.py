"""Issue 10's scanner defects, owned by the issue 13 rework of read/scan.py and
read/extract.py: these tests exist now and are expected to fail until that lands (strict, so
the fix turns them into failures to remove the marker)."""

from __future__ import annotations

import pytest

from tests.support import ScanText

PENDING = pytest.mark.xfail(strict=True, reason="scanner: owned by issue 13 work")
FAULT = b"Traceback (most recent call last):\nValueError: boom\n"


@PENDING
@pytest.mark.parametrize(
    ("long", "chunk"), [(9 << 20, 8 << 20), (2 << 20, 65536)], ids=["triage", "watch"]
)
def test_line_numbers_stay_right_after_a_line_over_1_mib(
    scan_text: ScanText, long: int, chunk: int
) -> None:
    """triage reads 8 MiB blocks, the live engine what was appended: both count the same."""
    facts = scan_text(b"x" * long + b"\n" + FAULT, chunk=chunk)
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 3)]
    assert facts.lines == 3


@PENDING
def test_a_file_with_cr_only_line_ends_has_its_lines(scan_text: ScanText) -> None:
    facts = scan_text(b"first\rsecond\r" + FAULT.replace(b"\n", b"\r"))
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 4)]


@PENDING
def test_gb18030_text_is_decoded_not_replaced(scan_text: ScanText) -> None:
    line = "ValueError: 内存不足".encode("gb18030") + b"\n"
    facts = scan_text(FAULT.splitlines(keepends=True)[0] + line)
    assert [h.message for h in facts.hits] == ["ValueError: 内存不足"]
