"""TUI tests run from the repository root, so fixture paths read as a user types them."""

from __future__ import annotations

import pytest

from tests.tui.tui_scenarios import ROOT


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
