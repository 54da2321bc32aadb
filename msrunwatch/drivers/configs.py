"""Configs read for a command: alone (lint), or beside the run's logs (triage knowing the
config's stages, budget and memory estimate)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from msrunwatch.drivers.options import Launch
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.config.context import context_for
from msrunwatch.judge.config.lint import config_report, lint
from msrunwatch.judge.config.versions import parse
from msrunwatch.judge.model import Report
from msrunwatch.read.config import read_config, read_msrun
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity


def read_all(paths: Sequence[str], msrun: str | None = None) -> list[TrainingConfig]:
    """Read configs (and an msrun command line, which fills in the launch settings)."""
    configs = [read_config(p) for p in paths]
    if msrun:
        launch = read_msrun(msrun)
        configs = [c.merged(launch) for c in configs] or [launch]
    return configs


def triage_with_config(
    logs: Sequence[str],
    rules: Sequence[Rule],
    configs: Sequence[TrainingConfig],
    consoles: Sequence[str] = (),
    world: int | None = None,
) -> Report:
    """Triage logs knowing the config: stages, budget, and estimate vs observed peaks."""
    return triage(logs, rules, consoles, ctx=context_for(configs[0], world))


def lint_configs(paths: Sequence[str], rules: Sequence[Rule], launch: Launch) -> Report:
    """Lint configs alone."""
    configs = read_all(paths, launch.msrun)
    return config_report(
        paths, lint(configs, rules, launch.devices, parse(launch.framework_version))
    )


def lint_with_logs(
    configs: Sequence[str], logs: Sequence[str], rules: Sequence[Rule], launch: Launch
) -> Report:
    """Lint configs; with logs too, triage them in the light of the config."""
    if not logs:
        return lint_configs(configs, rules, launch)
    parsed = read_all(configs, launch.msrun)
    findings = lint(parsed, rules, launch.devices, parse(launch.framework_version))
    report = triage_with_config(logs, rules, parsed, launch.consoles, launch.devices)
    merged = tuple(sorted([*report.findings, *findings], key=lambda f: -f.severity.rank))
    outcome = (
        "failed"
        if report.outcome == "failed" or any(f.severity is Severity.ERROR for f in findings)
        else report.outcome
    )
    return replace(report, findings=merged, outcome=outcome, log_dirs=(*report.log_dirs, *configs))


def with_file_names(report: Report) -> Report:
    """Findings that name config files by base name (rule cases compare them that way)."""
    return replace(
        report,
        findings=tuple(
            replace(
                f,
                occurrences=tuple(
                    replace(o, file=Path(o.file).name if o.file else None) for o in f.occurrences
                ),
            )
            for f in report.findings
        ),
    )
