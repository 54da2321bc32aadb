"""Configs read for a command: alone (lint), or beside the run's logs (triage knowing the
config's stages, budget and memory estimate)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from msrunwatch.core.errors import MsrunwatchError
from msrunwatch.drivers.configdir import expand, not_linted, read_each
from msrunwatch.drivers.options import Launch, PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.config.context import context_for
from msrunwatch.judge.config.derive import derive, world_of
from msrunwatch.judge.config.lint import config_report, lint
from msrunwatch.judge.config.versions import parse
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Finding, Report
from msrunwatch.read.config import read_config, read_msrun
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.overrides import parse_sets, with_sets
from msrunwatch.read.discover import discover_target
from msrunwatch.read.facts import FileRole
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity

WORLD_VS_RUN = "config-world-differs-from-run"


def read_all(
    paths: Sequence[str], msrun: str | None = None, sets: Sequence[str] = ()
) -> list[TrainingConfig]:
    """Read configs (and an msrun command line, which fills in the launch settings; and the
    --set items, over both)."""
    configs = [read_config(p) for p in paths]
    if msrun:
        launch = read_msrun(msrun)
        configs = [c.merged(launch) for c in configs] or [launch]
    given = parse_sets(sets)
    return [with_sets(c, given) for c in configs]


def run_world(logs: Sequence[str]) -> int | None:
    """The ranks the run's logs show (worker logs with a rank in their name), if any."""
    ranks = set()
    for target in logs:
        try:
            found = discover_target(target)
        except MsrunwatchError:
            continue
        ranks |= {f.rank_from_name for f in found if f.role is FileRole.WORKER}
    ranks.discard(None)
    return len(ranks) or None


def triage_with_config(
    logs: Sequence[str],
    rules: Sequence[Rule],
    configs: Sequence[TrainingConfig],
    consoles: Sequence[str] = (),
    world: int | None = None,
    post: PostMortem | None = None,
) -> Report:
    """Triage logs knowing the config: stages, budget, and estimate vs observed peaks. When
    the config is for another card count than the run shows, say so and set no estimate
    beside the ranks (it would be for another job). `post`: as drivers.triage.triage."""
    config, observed = configs[0], run_world(logs)
    stated = world_of(config, None)
    if observed is not None and stated is not None and observed != stated and world is None:
        limit = derive(config, observed).get("max_device_memory_mb")
        report = triage(logs, rules, consoles, ctx=Context(limit_mb=limit), post=post)
        mismatch = [r for r in rules if r.id == WORLD_VS_RUN]
        found = lint([config], mismatch, observed, run_world=observed)
        return replace(report, findings=_merged(report.findings, found))
    return triage(logs, rules, consoles, ctx=context_for(config, world or observed), post=post)


def lint_configs(paths: Sequence[str], rules: Sequence[Rule], launch: Launch) -> Report:
    """Lint configs alone (a directory: every config under it)."""
    files, skipped = expand(paths)
    configs, unread = read_each(files, launch.msrun, strict=len(files) == len(paths))
    given = parse_sets(launch.sets)
    configs = [with_sets(c, given) for c in configs]
    versions = parse(launch.framework_version)
    findings = lint(configs, rules, launch.devices, versions)
    findings += not_linted(skipped + unread, rules, paths)
    return config_report(paths, findings)


def lint_with_logs(
    configs: Sequence[str], logs: Sequence[str], rules: Sequence[Rule], launch: Launch
) -> Report:
    """Lint configs; with logs too, triage them in the light of the config, taking the card
    count from the logs when the command line gives none."""
    if not logs:
        return lint_configs(configs, rules, launch)
    parsed = read_all(configs, launch.msrun, launch.sets)
    observed = run_world(logs)
    devices = launch.devices or observed
    versions = parse(launch.framework_version)
    findings = lint(parsed, rules, devices, versions, run_world=observed)
    report = triage_with_config(logs, rules, parsed, launch.consoles, launch.devices, launch.post)
    merged = _merged(report.findings, findings)
    outcome = (
        "failed"
        if report.outcome == "failed" or any(f.severity is Severity.ERROR for f in findings)
        else report.outcome
    )
    return replace(report, findings=merged, outcome=outcome, log_dirs=(*report.log_dirs, *configs))


def _merged(first: Sequence[Finding], more: Sequence[Finding]) -> tuple[Finding, ...]:
    """Both sets of findings, most severe first, each once."""
    seen = {f.fingerprint for f in first}
    extra = [f for f in more if f.fingerprint not in seen]
    return tuple(sorted([*first, *extra], key=lambda f: -f.severity.rank))


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
