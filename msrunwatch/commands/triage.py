"""`msrunwatch triage`: the verdict on a run from its logs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from msrunwatch.commands.common import (
    paths,
    progress_printer,
    rule_options,
    rules_of,
    use_color,
    write,
)
from msrunwatch.core.exit_codes import ExitCode


def cmd_triage(args: argparse.Namespace) -> int:
    """Read a finished (or running) run's logs and print the verdict."""
    from msrunwatch.drivers.triage import triage
    from msrunwatch.report import jsonout, markdown, text

    dirs, consoles = paths(args.dirs, "log directory"), paths(args.console, "--console")
    rules = rules_of(args)
    if args.config:
        from msrunwatch.drivers.configs import read_all, triage_with_config

        configs = read_all(args.config, args.msrun)
        report = triage_with_config(dirs, rules, configs, consoles, args.devices)
    else:
        report = triage(dirs, rules, consoles, progress_printer(sys.stderr))
    if args.format == "json":
        out = jsonout.render(report)
    elif args.format == "markdown":
        out = markdown.render(report, show_all=args.all_ranks)
    else:
        color = args.output is None and use_color(args.color, sys.stdout)
        out = text.render(report, color=color, show_all=args.all_ranks)
    write(out, args.output)
    return ExitCode.FINDINGS if report.has_errors else ExitCode.OK


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "triage",
        help="say which rank failed first and why, from a run's logs",
        description="Read msrun logs (a --log_dir, several node directories, glog files or one "
        "file) and report the root cause, each rank's status, memory, compile time and progress.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="msrun log directory or log file")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    p.add_argument(
        "--console",
        action="append",
        metavar="FILE",
        help="msrun's saved console output (exit codes, signals); repeatable",
    )
    p.add_argument("--all-ranks", action="store_true", help="list every rank in the table")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument(
        "--config",
        action="append",
        metavar="FILE",
        help="the run's training config (MindFormers YAML or launch script): pipeline "
        "stages, memory budget, and each rank's peak beside the estimate",
    )
    p.add_argument("--devices", type=int, metavar="N", help="card count, with --config")
    p.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line, with --config")
    rule_options(p)
    p.set_defaults(handler=cmd_triage)
