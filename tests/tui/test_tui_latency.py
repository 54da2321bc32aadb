"""A key press is answered within 100 ms at 1,024 ranks updating 4 times a second.

A regression guard with room for a busy machine (the measured figures, about 10 ms median
and 35-50 ms at the 95th percentile on 2 vCPUs, are in tui_latency.py's output); a DataTable
(130 ms median, ../shared/reference/textual-scale.md) would fail it.
"""

from __future__ import annotations

import sys

import pytest
from tui_latency import measure


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_keys_answer_fast_at_1024_ranks_updating_4_times_a_second() -> None:
    for _attempt in range(2):  # a second try when another process had the CPUs
        result = measure(ranks=1024, keys=60, hz=4, changed=300, idle_s=1.0)
        if result["p50_ms"] < 100 and result["p95_ms"] < 250:
            break
    assert result["painted"] == result["keys"], "every key moved the cursor on screen"
    assert result["p50_ms"] < 100, result
    assert result["p95_ms"] < 250, result
