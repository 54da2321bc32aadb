"""Fixtures the fast-path tests share (tests/integration/fastpaths.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.fastpaths import BATCHES, batch_case


@pytest.fixture(scope="session")
def batches(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, int | None]]:
    """Every rule's case logs injected into small fixtures, in BATCHES inputs, built once
    (test_fast_paths.py compares their readings, the mutation tests break them)."""
    into = tmp_path_factory.mktemp("batches")
    return [batch_case(batch, into) for batch in range(BATCHES)]
