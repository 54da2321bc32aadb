"""What the rule-cache tests share: every rule case's report under a given rule set, as
plain data, and a rule set loaded twice through a cache in a temporary directory (the
second load a hit: it parses no YAML)."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.drivers import rulecases
from msrunwatch.rules import rulecache
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Rule
from tests.integration.fastpaths import plain

_CASE_DIR = re.compile(re.escape(tempfile.gettempdir()) + r"/msrunwatch-case-[^/\"|]*")
"""The case's directory, also as a fingerprint shows it (digits masked)."""


def report_of(case: rulecases.Case, rules: Sequence[Rule]) -> str:
    """The case's whole report (not only what the case checks), as JSON; the case's
    temporary directory is written `<case>` so that two runs compare."""
    got: list[tuple[str, Any]] = []

    def runner(directory: Path, case: rulecases.Case, rules: Sequence[Rule]) -> Any:
        report = rulecases._default_runner(case)(directory, case, rules)
        got.append((str(directory), report))
        return report

    result = rulecases.run_case(case, rules, runner)
    if not got:
        return json.dumps({"problems": list(result.problems)})
    directory, report = got[0]
    text = json.dumps(plain(report), sort_keys=True, default=str)
    return _CASE_DIR.sub("<case>", text.replace(directory, "<case>"))


def differing(
    cases: Sequence[rulecases.Case], fresh: Sequence[Rule], cached: Sequence[Rule]
) -> list[str]:
    """Ids of the cases whose report differs between the two rule sets."""
    return [c.id for c in cases if report_of(c, fresh) != report_of(c, cached)]


def first_differing(
    cases: Sequence[rulecases.Case], fresh: Sequence[Rule], cached: Sequence[Rule]
) -> str | None:
    """The first case whose report differs between the two rule sets (None: none does):
    where one difference is the finding, the cases after it need not be run."""
    return next((c.id for c in cases if report_of(c, fresh) != report_of(c, cached)), None)


def through_cache(
    cache_home: Path, paths: list[Path] | None, between: Callable[[], None] = lambda: None
) -> list[Rule]:
    """Load once with the cache on (it writes the entry), call `between` (an edit), load
    again; returns the second load."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(rulecache.OFF, raising=False)
        patch.setenv("XDG_CACHE_HOME", str(cache_home))
        patch.setattr(rulecache, "_kept_out", [])
        load_rules(paths)
        between()
        return load_rules(paths)


def hit_only(cache_home: Path, paths: list[Path] | None) -> list[Rule]:
    """A load that must come from the cache: parsing YAML is an error."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cache hit parsed YAML")

    with pytest.MonkeyPatch.context() as patch:
        return through_cache(cache_home, paths, lambda: patch.setattr(rulecache, "_parse", refuse))
