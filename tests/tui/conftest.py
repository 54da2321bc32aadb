"""TUI tests run from the repository root, so fixture paths read as a user types them."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Iterator

import pytest

from tests.tui.tui_scenarios import ROOT


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture(autouse=True)
def _global_event_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    """A plain (not async) test gets the current event loop a new process has.

    Before Python 3.10 an asyncio lock binds to the current loop when it is made, and every
    Textual widget holds one: an app made outside a running loop, as `msrunwatch watch`
    makes it, needs a current loop, which Textual's `App.run` then runs on. A fresh process
    has one; a test run after pytest-asyncio's may not (asyncio.run leaves none set), and
    making the app would fail there with "There is no current event loop"."""
    if sys.version_info >= (3, 10) or inspect.iscoroutinefunction(request.function):
        yield
        return
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        asyncio.set_event_loop(None)
        loop.close()
