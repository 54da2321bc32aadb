"""The config linter: config-scope rules over parsed training configs, alone or with logs.

Each finding points at the config line that holds the value to change (the rule's `at`
names the settings), so SARIF and GitHub annotations land on the YAML key or the script
line. Given logs too, the config's pipeline stages and memory budget inform the triage,
and each rank's observed peak is compared with the estimate for its stage.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msrunwatch.judge.config.derive import derive
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.read.config.model import Source, TrainingConfig
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import fingerprint, render
from msrunwatch.rules.vocab import Severity

if TYPE_CHECKING:
    from msrunwatch.drivers.rulecases import Case


class ConfigUnsupported(Exception):
    """A config file that cannot be read as a training config (exit code 2)."""


def _place(config: TrainingConfig, rule: Rule, env: dict[str, Any]) -> Source | None:
    """The first `at` setting the config wrote; a `*_names` variable stands for its names."""
    for name in rule.at:
        value = env.get(name)
        names = value if name.endswith("_names") and isinstance(value, list) else [name]
        for candidate in names:
            source = config.where(candidate)
            if source is not None:
                return source
    return None


def _finding(config: TrainingConfig, rule: Rule, env: dict[str, Any]) -> Finding:
    source = _place(config, rule, env)
    message = render(rule.message, env)
    occ = Occurrence(
        rank=None,
        log_dir=None,
        file=source.file if source else config.path,
        line=source.line if source else None,
        time=None,
        time_exact=True,
        text=source.text if source else "",
        message=message,
    )
    role = "root-cause" if rule.severity is Severity.ERROR else "symptom"
    hint = render(rule.hint, env) if rule.hint else ""
    return Finding(
        rule.id,
        rule.title,
        rule.category,
        rule.severity,
        role,
        message,
        (),
        (occ,),
        1,
        hint,
        fingerprint(rule.id, f"{config.path}|{message}"),
    )


def lint(
    configs: Sequence[TrainingConfig], rules: Sequence[Rule], devices: int | None = None
) -> list[Finding]:
    """Every config-scope rule over every config."""
    chosen = [r for r in rules if r.scope is Scope.CONFIG and r.when is not None]
    found: list[Finding] = []
    for config in configs:
        env = derive(config, devices)
        found.extend(_finding(config, r, env) for r in chosen if r.when and r.when.truth(env))
    return sorted(
        found,
        key=lambda f: (
            -f.severity.rank,
            f.first.file or "" if f.first else "",
            (f.first.line or 0) if f.first else 0,
        ),
    )


def read_all(paths: Sequence[str], msrun: str | None = None) -> list[TrainingConfig]:
    """Read configs (and an msrun command line, which fills in the launch settings)."""
    from msrunwatch.read.config import ConfigError, read_config, read_msrun

    try:
        configs = [read_config(p) for p in paths]
        if msrun:
            launch = read_msrun(msrun)
            configs = [c.merged(launch) for c in configs] or [launch]
    except ConfigError as exc:
        raise ConfigUnsupported(str(exc)) from None
    return configs


def config_report(paths: Sequence[str], findings: Sequence[Finding]) -> Report:
    """A report for configs alone: no ranks, the findings, failed when an error was found."""
    failed = any(f.severity is Severity.ERROR for f in findings)
    return Report(
        log_dirs=tuple(paths),
        outcome="failed" if failed else "ok",
        root_cause=None,
        ranks=(),
        findings=tuple(findings),
        files=len(paths),
        bytes=sum(Path(p).stat().st_size for p in paths if Path(p).is_file()),
    )


def lint_with_logs(
    configs: Sequence[str], logs: Sequence[str], rules: Sequence[Rule], args: argparse.Namespace
) -> Report:
    """Lint configs; with logs too, triage them in the light of the config."""
    parsed = read_all(configs, getattr(args, "msrun", None))
    findings = lint(parsed, rules, getattr(args, "devices", None))
    if not logs:
        return config_report(configs, findings)
    from msrunwatch.judge.config.observed import triage_with_config

    report = triage_with_config(
        logs, rules, parsed, getattr(args, "console", None) or (), getattr(args, "devices", None)
    )
    merged = tuple(sorted([*report.findings, *findings], key=lambda f: -f.severity.rank))
    outcome = (
        "failed"
        if report.outcome == "failed" or any(f.severity is Severity.ERROR for f in findings)
        else report.outcome
    )
    return replace(report, findings=merged, outcome=outcome, log_dirs=(*report.log_dirs, *configs))


def case_runner(directory: Path, case: Case, rules: Sequence[Rule]) -> Report:
    """Run a rule case whose input is a config (with optional --devices / --msrun args)."""
    name = case.data.get("config_name", "config.yaml")
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--devices", type=int)
    parser.add_argument("--msrun")
    args = parser.parse_args(case.data.get("args", []))
    path = str(directory / name)
    findings = lint(read_all([path], args.msrun), rules, args.devices)
    relative = [
        replace(
            f,
            occurrences=tuple(
                replace(o, file=Path(o.file).name if o.file else None) for o in f.occurrences
            ),
        )
        for f in findings
    ]
    return config_report([path], relative)
