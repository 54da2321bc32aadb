"""What several test modules share: the repository's paths and small helpers (fixtures
themselves live in conftest.py, which nothing imports)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from msrunwatch.read.facts import FileFacts

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

ScanText = Callable[..., FileFacts]
"""The `scan_text` fixture: bytes or text scanned as one file (optionally in chunks)."""
