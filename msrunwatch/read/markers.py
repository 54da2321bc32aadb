"""The literal markers triage looks for, for the grep baseline in bench/.

`grep -F -f markers` over a log directory does what msrun's post-mortem and most users
do by hand; bench/ times msrunwatch against it on the same files.
"""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.prefilter import required_literals

EXTRACTION_MARKERS = (
    "[ERROR]",
    "[CRITICAL]",
    "Traceback (most recent call last)",
    "[PROF]",
    "Start compiling, phase",
    "Finish compiling",
    "memory size:",
    "peak memory usage",
    "memory base address",
    "rank id: ",
    "RANK_ID: ",
    "loss is",
    "per step time",
    "Epoch:[",
    "iteration ",
    "registered successfully",
    "has unregistered",
    "exit with exception",
    "deinitialize success",
)
"""What the extraction reads besides the rules: compile, memory, progress, identity."""


def grep_markers(rules: Sequence[Rule]) -> list[str]:
    """Every fixed string whose presence makes a line interesting to triage."""
    markers = set(EXTRACTION_MARKERS)
    for rule in rules:
        if rule.scope is not Scope.LINE or rule.match is None:
            continue
        found = required_literals(rule.match.pattern)
        if found is not None:
            markers.update(found[0])
    return sorted(markers)
