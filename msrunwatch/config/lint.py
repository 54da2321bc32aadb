"""The config linter: config-scope rules over parsed training configs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msrunwatch.report.types import Report
from msrunwatch.rules.model import Rule

if TYPE_CHECKING:
    from msrunwatch.rulecheck import Case


class ConfigUnsupported(Exception):
    """Config linting is not available for this input."""


def lint_with_logs(
    configs: Sequence[str], logs: Sequence[str], rules: Sequence[Rule], args: argparse.Namespace
) -> Report:
    """Lint configs (and triage logs with them)."""
    raise ConfigUnsupported("config linting is not implemented yet")


def case_runner(directory: Path, case: Case, rules: Sequence[Rule]) -> Report:
    """Run a config case."""
    raise ConfigUnsupported("config linting is not implemented yet")
