"""The README's key tables list every key the help screen lists (a new user looked for the
key that shows the log alone in the README, and it was only on the help screen)."""

from __future__ import annotations

import re

from msrunwatch.tui.screens.help import KEYS
from tests.support import ROOT


def _readme_keys() -> set[str]:
    """Every backticked key in the README's `| key | what it does |` tables."""
    keys: set[str] = set()
    inside = False
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| key | what it does |"):
            inside = True
        elif inside and line.startswith("|"):
            keys.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
        else:
            inside = False
    return keys


def test_every_single_letter_key_of_the_help_screen_is_in_the_readme() -> None:
    listed = _readme_keys()
    letters = {
        k for _, rows in KEYS for keys, _ in rows for k in re.split(r"[ ,]+", keys) if len(k) == 1
    }
    assert letters and letters - listed == set()
