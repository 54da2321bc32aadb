"""Fixtures of the rule tests: the rule cache turned on in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.rules import rulecache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in a temporary XDG_CACHE_HOME; returns the directory entries go to."""
    monkeypatch.delenv(rulecache.OFF, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(rulecache, "_kept_out", [])
    return tmp_path / "xdg" / "msrunwatch"
