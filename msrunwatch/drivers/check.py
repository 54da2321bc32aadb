"""`msrunwatch check`: the rules over log directories and config files, in CI formats."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from msrunwatch.core.errors import MsrunwatchError
from msrunwatch.core.fileio import read_head
from msrunwatch.drivers.options import Launch
from msrunwatch.judge.model import Report
from msrunwatch.read.discover import has_log, sniff
from msrunwatch.rules.model import Rule

CONFIG_SUFFIXES = (".yaml", ".yml", ".sh", ".bash", ".json", ".toml")


def is_config(target: str) -> bool:
    """A file with a config suffix whose first bytes are not a MindSpore log."""
    path = Path(target)
    if path.suffix.lower() not in CONFIG_SUFFIXES:
        return False
    try:
        return sniff(read_head(path, 65536)) is None
    except OSError:
        return False  # not a regular file, or unreadable: the log reader says why


def is_config_dir(target: str) -> bool:
    """A directory with config files and no msrun logs: `check DIR` lints every config."""
    path = Path(target)
    if not path.is_dir():
        return False
    try:
        if has_log(target):
            return False
    except MsrunwatchError:
        pass
    from msrunwatch.drivers.configdir import config_files

    return bool(config_files(path))


def check_targets(targets: Sequence[str], rules: Sequence[Rule], launch: Launch) -> Report:
    """One report over every target: logs are triaged, configs (and directories of configs)
    linted."""
    configs = [t for t in targets if is_config(t) or is_config_dir(t)]
    logs = [t for t in targets if t not in configs]
    if configs:
        from msrunwatch.drivers.configs import lint_with_logs

        return lint_with_logs(configs, logs, rules, launch)
    from msrunwatch.drivers.triage import triage

    return triage(logs, rules, launch.consoles, post=launch.post)


RENDERERS = {
    "text": "lint",
    "json": "jsonout",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
    "gitlab": "gitlab",
}
"""check's formats, by the report module that renders each (imported only when asked)."""


def render(report: Report, rules: Sequence[Rule], fmt: str) -> str:
    """The report in one of check's formats."""
    module = importlib.import_module(f"msrunwatch.report.{RENDERERS[fmt]}")
    if fmt == "json":
        return str(module.render(report))
    return str(module.render(report, rules))
