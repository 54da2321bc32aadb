"""A log's normal end is void when the program then dies of an uncaught exception (issue 18).

"Training finished" is often followed by evaluation, a last checkpoint or an export; a
program that dies there did not end normally (fixtures/cpu_fault_after_finished_*, real
2.10.0 runs). A traceback Python prints for an exception the program goes on after (a
destructor, an exit hook, another thread, a logging handler) leaves the
end as it was: that is teardown noise (judge.sightings.Teardown).
"""

from __future__ import annotations

import pytest

from tests.support import ScanText

FINISHED = "[train] rank=1 finished\n"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/job/scripts/train.py", line 223, in <module>\n'
    '    ms.save_checkpoint(net, "/ckpt/final.ckpt")\n'
    "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/final.tmp'\n"
)
SURVIVED = [
    "Exception ignored in: <function Saver.__del__ at 0x7f3a2c1b0e50>",
    "Exception ignored in atexit callback: <function flush at 0x7f3a2c1b0e50>",
    "Error in atexit._run_exitfuncs:",
    "Exception in thread Thread-3 (prefetch):",
    "--- Logging error ---",
]


@pytest.mark.parametrize("chunk", [None, 7])
def test_an_uncaught_exception_after_the_end_voids_it(scan_text: ScanText, chunk: int) -> None:
    facts = scan_text(FINISHED + TRACEBACK, chunk=chunk)
    assert facts.finished_line is None
    assert facts.last_fault is not None and facts.last_fault[0] == 5


@pytest.mark.parametrize("header", SURVIVED)
@pytest.mark.parametrize("chunk", [None, 7])
def test_a_traceback_the_program_survives_keeps_the_end(
    scan_text: ScanText, header: str, chunk: int
) -> None:
    facts = scan_text(FINISHED + header + "\n" + TRACEBACK, chunk=chunk)
    assert facts.finished_line == 1


def test_a_chained_traceback_belongs_to_the_report_before_it(scan_text: ScanText) -> None:
    chained = "\nDuring handling of the above exception, another exception occurred:\n\n"
    survived = FINISHED + SURVIVED[0] + "\n" + TRACEBACK + chained + TRACEBACK
    assert scan_text(survived).finished_line == 1
    assert scan_text(FINISHED + TRACEBACK + chained + TRACEBACK).finished_line is None


def test_a_survived_traceback_does_not_excuse_a_later_uncaught_one(scan_text: ScanText) -> None:
    text = FINISHED + SURVIVED[0] + "\n" + TRACEBACK + "[train] cleanup\n" + TRACEBACK
    assert scan_text(text).finished_line is None


def test_an_exception_before_the_end_leaves_the_end(scan_text: ScanText) -> None:
    facts = scan_text(TRACEBACK + "[train] retried\n" + FINISHED)
    assert facts.finished_line == 6
