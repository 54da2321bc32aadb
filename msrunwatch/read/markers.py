"""The literal markers triage looks for, for the grep baseline in bench/.

`grep -F -f markers` over a log directory does what msrun's post-mortem and most users
do by hand; bench/ times msrunwatch against it on the same files.
"""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.read import patterns as P
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.prefilter import required_literals

FAULT_MARKERS = ("[ERROR]", "[CRITICAL]", "Traceback (most recent call last)")
"""What a person greps for faults besides the rules' own literals."""


def extraction_markers() -> list[str]:
    """What the extraction reads besides the rules (compile, memory, progress, identity):
    the literals of the structural shapes, as their pre-checks use them."""
    found = {literal for _, shape in P.shapes() for literal in shape.needs}
    return sorted(found)


def grep_markers(rules: Sequence[Rule]) -> list[str]:
    """Every fixed string whose presence makes a line interesting to triage."""
    markers = {*FAULT_MARKERS, *extraction_markers()}
    for rule in rules:
        if rule.scope is not Scope.LINE or rule.pattern is None:
            continue
        found = required_literals(rule.pattern)
        if found is not None:
            markers.update(found[0])
    return sorted(markers)
