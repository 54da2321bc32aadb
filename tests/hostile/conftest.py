"""A hang guard: these tests feed FIFOs and devices, which blocked forever before issue 10;
a regression must fail the test, not stall the suite."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from tests.support import HANG_S  # far above what any of these tests needs: only a hang reaches it


class Hung(Exception):
    """Not an OSError (TimeoutError is one): code that swallows OSError cannot hide it."""


def _hung(signum: int, frame: FrameType | None) -> None:
    raise Hung("no answer in the hang guard's time: something blocked")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "hang_after(seconds): a longer hang guard, for a test that reads a lot"
    )


@pytest.fixture(autouse=True)
def hang_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("hang_after")
    seconds = float(marker.args[0]) if marker else HANG_S
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)  # and again each second, if caught
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
