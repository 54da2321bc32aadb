"""LossMonitor lines no rule can fire on, told apart on their bytes: most of them.

Every LossMonitor line (`epoch: 1 step: 3, loss is 0.38`) is read by the rules, since a
NaN loss is a finding, and only the last few of a block are parsed for progress (see
FileScanner._progress_starts). A line whose loss is a number written in digits
(patterns.LOSS_SHAPE, nothing else on the line) and that holds none of the literals or
gates of the rules that can match such a line (LineMatcher.text_needs_within) fires no
rule: reading it only ends the record before it. One match on its bytes tells it, and
the scanner then neither decodes it nor runs the matcher on it. A `nan` or `inf` loss is
not a number written in digits: those lines are read as before.
"""

from __future__ import annotations

import re

from msrunwatch.read import patterns as P
from msrunwatch.read.quiet import PerMatcher, literal_parts
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.programs import compiled


def _build(matcher: LineMatcher) -> re.Pattern[bytes] | None:
    """`\\n` and a LossMonitor line no rule can fire on, matched at the newline before it;
    None when that cannot be told (a rule whose needs are not known)."""
    needs = matcher.text_needs_within(P.LOSS_ALPHABET)
    if needs is None:
        return None
    parts = literal_parts(*needs)
    if parts is None:
        return None
    guard = b"(?![^\n]*(?:" + b"|".join(parts) + b"))" if parts else b""
    return compiled(b"\n" + guard + P.LOSS_SHAPE + rb"(?=\r?\n)")


loss_only = PerMatcher(_build)
"""The pattern of a matcher's rules (see _build)."""
