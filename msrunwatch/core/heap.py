"""Keep freed memory for reuse while large logs are read.

Triage reads a log 8 MiB at a time and joins each block to the end of the one before:
two allocations of about 8 MiB per block. glibc serves an allocation that large with a
fresh mmap, whose pages the kernel faults in and zeroes one at a time, and unmaps it when
it is freed; its dynamic threshold rises only to the size of a block freed, and the next
block of that size is still served by mmap. On 1 GiB that was 0.2 to 0.6 s of CPU in the
kernel, up to a tenth of the triage. With the mmap threshold above the block size, the
blocks come from the heap, which keeps freed memory for the next one (peak RSS: a few MiB
more per process).
"""

from __future__ import annotations

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""mallopt(3) parameters, as glibc's malloc.h numbers them."""


def reuse_blocks_below(size: int) -> bool:
    """Serve allocations smaller than `size` from the heap and keep up to twice that
    free before returning memory to the system. Only glibc's mallopt can be told this:
    False where there is none (other C libraries, other systems), and nothing changes."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, size)) and bool(mallopt(M_TRIM_THRESHOLD, 2 * size))
