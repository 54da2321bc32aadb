"""The config linter: config-scope rules over parsed training configs, alone or with logs.

Each finding points at the config line that holds the value to change (the rule's `at`
names the settings), so SARIF and GitHub annotations land on the YAML key or the script
line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msrunwatch.judge.config.derive import derive, world_of
from msrunwatch.judge.config.versions import Versions
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.read.config.model import Source, TrainingConfig
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import fingerprint, render
from msrunwatch.rules.vocab import Severity

CARD_COUNT_UNKNOWN = "config-card-count-unknown"


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
    # An error refuses the job: it is the cause. Otherwise the rule says (advice is its own
    # `cause`, context a `note`); a config finding is never a symptom of another rank's fault.
    role = "root-cause" if rule.severity is Severity.ERROR else rule.role.value
    hint = render(rule.hint, env) if rule.hint else ""
    key = fingerprint(rule.id, f"{config.path}|{message}")
    return Finding.of(rule, role, message, (), (occ,), 1, key, hint=hint)


def lint(
    configs: Sequence[TrainingConfig],
    rules: Sequence[Rule],
    devices: int | None = None,
    versions: Versions | None = None,
    run_world: int | None = None,
) -> list[Finding]:
    """Every config-scope rule over every config."""
    chosen = [r for r in rules if r.scope is Scope.CONFIG and r.when is not None]
    found: list[Finding] = []
    for config in configs:
        env = derive(config, devices, versions)
        env["run_world"] = run_world
        env["stated_world"] = world_of(config, None)
        env["skipped_for_world"] = []
        env["skipped_for_world"] = skipped_for_world(config, chosen, env, versions)
        found.extend(_finding(config, r, env) for r in chosen if r.when and r.when.truth(env))
    return sorted(
        found,
        key=lambda f: (
            -f.severity.rank,
            f.first.file or "" if f.first else "",
            (f.first.line or 0) if f.first else 0,
        ),
    )


def skipped_for_world(
    config: TrainingConfig,
    rules: Sequence[Rule],
    env: dict[str, Any],
    versions: Versions | None,
) -> list[str]:
    """Without a card count: the checks that a card count would let fire on this config.

    Found by asking, not by listing: the config is derived again for a few card counts (the
    one its degrees fit, one that does not, twice as many) and every rule that fires for one
    of them but not without a count is named.
    """
    if env.get("world") is not None:
        return []
    quiet = {r.id for r in rules if r.when is not None and r.when.truth(env)}
    size = env.get("model_size") or 1
    fired: set[str] = set()
    for probe in sorted({size, size + 1, 2 * size, 8}):
        probed = derive(config, probe, versions)
        probed.update(run_world=None, stated_world=None, skipped_for_world=[])
        fired |= {r.id for r in rules if r.when is not None and r.when.truth(probed)}
    return sorted(fired - quiet - {CARD_COUNT_UNKNOWN})


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
