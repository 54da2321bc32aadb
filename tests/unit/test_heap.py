"""core.heap: large blocks come from the heap once told so (glibc), and nothing breaks
where it cannot be told."""

from __future__ import annotations

import ctypes
import platform
import resource
import subprocess
import sys

import pytest

from msrunwatch.core import heap

BLOCKS = """
import resource, sys
from msrunwatch.core.heap import reuse_blocks_below
told = reuse_blocks_below(16 << 20) if sys.argv[1] == "told" else None
with open(sys.argv[2], "rb", buffering=0) as fh:
    carry = b""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):  # as triage reads: a block, then the carry joined to it
        fh.seek(0)
        block = fh.read(8 << 20)
        joined = b"\\n" + carry + block
        carry = joined[-100:]
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(how: str, data: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", BLOCKS, how, data], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def _huge_pages_always() -> bool:
    """With transparent huge pages always on, a fresh mapping faults in 2 MiB at a time:
    the counts below would not tell the two apart."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            return "[always]" in fh.read()
    except OSError:
        return False


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
@pytest.mark.skipif(_huge_pages_always(), reason="page faults are counted in huge pages")
def test_blocks_are_reused_instead_of_faulted_in_again(tmp_path):
    data = tmp_path / "block"
    data.write_bytes(b"x" * (8 << 20))
    pages = (8 << 20) // resource.getpagesize()
    # untold, every block and every join is a fresh mapping: its pages fault in each time
    assert _faults("untold", str(data)) > 20 * pages
    # told, the memory of the few blocks alive at once (two blocks, two joins) is faulted
    # in once and used again by the twenty that follow
    assert _faults("told", str(data)) < 5 * pages


def test_nothing_is_done_without_mallopt(monkeypatch):
    class NoMallopt:
        def __init__(self, name: object) -> None:
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    assert heap.reuse_blocks_below(16 << 20) is False
