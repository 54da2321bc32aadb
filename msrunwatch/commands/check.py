"""`msrunwatch check`: rules over logs and configs, in CI formats, with --fail-on."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from msrunwatch.commands import stdin
from msrunwatch.commands.common import (
    FILE,
    add_command,
    existing,
    launch_options,
    paths,
    rule_options,
    rules_of,
    settings_of,
    use_color,
    verbose,
    write,
)
from msrunwatch.commands.triage import post_mortem, post_mortem_options
from msrunwatch.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from msrunwatch.rules.model import Rule


def _fails(report: Any, fail_on: str) -> bool:
    from msrunwatch.rules.vocab import Severity

    if fail_on == "never":
        return False
    floor = Severity(fail_on).rank
    return any(f.severity.rank >= floor for f in report.findings)


def cmd_check(args: argparse.Namespace) -> int:
    """Lint logs (and configs) for CI: findings in CI formats, exit 1 at --fail-on."""
    from msrunwatch.drivers.check import check_targets, render
    from msrunwatch.drivers.options import Launch

    paths(args.targets, "target"), paths(args.console, "--console")
    existing([*args.targets, *(args.console or ())])
    settings = settings_of(args)
    rules = rules_of(args, settings)
    launch = Launch(
        args.devices,
        args.msrun,
        tuple(args.console or ()),
        args.framework_version or settings.framework_version,
        tuple(args.sets),
        post_mortem(args),
    )
    with stdin.spooled(args.targets) as targets:
        report = stdin.relabel(check_targets(targets, rules, launch), targets)
        rules, why = applied(rules, targets)
    verbose(args, f"rules: {len(rules)} applied ({why})")
    out = render(report, rules, args.format)
    if args.format == "text" and args.output in (None, "-") and use_color(args.color, sys.stdout):
        out = colour_lines(out)
    write(out, args.output)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.format == "github" and summary:
        from msrunwatch.report import github

        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(github.summary(report, rules))
    return ExitCode.FINDINGS if _fails(report, settings.fail_on) else ExitCode.OK


def applied(rules: Sequence[Rule], targets: Sequence[str]) -> tuple[list[Rule], str]:
    """The rules the check applied, as its reports count and list them (JUnit's testcases,
    the summary's rule count), and why: the config rules only when a config was checked
    (the trial found 78 config rules as green JUnit tests of a job that checked only logs),
    the log rules only when a log was (`check CONFIG` said `252 rules` of 85 config ones)."""
    from msrunwatch.drivers.check import is_config, is_config_dir
    from msrunwatch.rules.model import Scope

    configs = sum(1 for t in targets if is_config(t) or is_config_dir(t))
    config_rules = [r for r in rules if r.scope is Scope.CONFIG]
    log_rules = [r for r in rules if r.scope is not Scope.CONFIG]
    if not configs:
        why = f"no config among the targets: the {len(config_rules)} config rules apply to configs"
        return log_rules, why
    if configs == len(targets):
        why = f"no log among the targets: the {len(log_rules)} log rules apply to logs"
        return config_rules, why
    return list(rules), f"{len(log_rules)} log rules, {len(config_rules)} config rules"


def colour_lines(text: str) -> str:
    """The text format's severities in colour (`path:line: error rule: ...`)."""
    from msrunwatch.report.fmt import SEVERITY_COLOR, Style

    style = Style(True)
    for severity, color in SEVERITY_COLOR.items():
        text = text.replace(f": {severity} ", f": {style(severity, color)} ")
    return text


FORMATS = (
    "text: one `path:line: severity rule: message` line per finding; json: the triage report; "
    "sarif: SARIF 2.1.0 (GitHub code scanning); junit: JUnit XML (Jenkins, GitLab); "
    "github: workflow annotations (and a job summary); gitlab: Code Quality JSON"
)


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = add_command(
        sub,
        "check",
        "lint logs or training configs for CI (SARIF, JUnit, GitHub, GitLab)",
        "Run the rules over log directories and config files (MindFormers YAML, MindSpeed-LLM "
        "launch scripts); exit 1 when a finding reaches --fail-on.",
        (
            "msrunwatch check msrun_log/ --format sarif -o msrunwatch.sarif",
            "msrunwatch check msrun_log/ --format github",
            "msrunwatch check train.yaml --devices 8",
            "msrunwatch check pretrain_qwen.sh --msrun 'msrun --worker_num=8 ...'",
        ),
        "exit codes:\n  0  no finding at or above --fail-on\n"
        "  1  a finding at or above --fail-on (error by default)\n"
        "  2  bad usage, unreadable input or invalid rules",
    )
    target = p.add_argument(
        "targets", nargs="+", metavar="TARGET", help="log directory, log or config file, - (stdin)"
    )
    target.complete = FILE  # type: ignore[attr-defined]
    p.add_argument(
        "--format",
        choices=("text", "json", "sarif", "junit", "github", "gitlab"),
        default="text",
        help=FORMATS,
    )
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default=None,
        help="lowest severity that fails the check (default: error)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (- stdout)")
    p.add_argument(
        "--console", action="append", metavar="FILE", help="msrun's saved console output"
    )
    launch_options(p)
    post_mortem_options(p)
    rule_options(p)
    p.set_defaults(handler=cmd_check)
