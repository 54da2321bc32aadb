"""`msrunwatch check`: rules over logs and configs, in CI formats, with --fail-on."""

from __future__ import annotations

import argparse
import os
from typing import Any

from msrunwatch.commands.common import launch_options, rule_options, settings_of, write
from msrunwatch.core.exit_codes import ExitCode


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
    from msrunwatch.drivers.settings import rule_set

    settings = settings_of(args)
    rules = rule_set(settings)
    launch = Launch(
        args.devices,
        args.msrun,
        tuple(args.console or ()),
        args.framework_version or settings.framework_version,
    )
    report = check_targets(args.targets, rules, launch)
    write(render(report, rules, args.format), args.output)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.format == "github" and summary:
        from msrunwatch.report import github

        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(github.summary(report, rules))
    return ExitCode.FINDINGS if _fails(report, settings.fail_on) else ExitCode.OK


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "check",
        help="lint logs or training configs for CI (SARIF, JUnit, GitHub, GitLab)",
        description="Run the rules over log directories and config files; exit 1 when a finding "
        "reaches --fail-on.",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET", help="log directory, log or config file")
    p.add_argument(
        "--format", choices=("text", "json", "sarif", "junit", "github", "gitlab"), default="text"
    )
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default=None,
        help="lowest severity that fails the check (default: error)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    p.add_argument("--console", action="append", metavar="FILE", help="msrun's console output")
    launch_options(p)
    rule_options(p)
    p.set_defaults(handler=cmd_check)
