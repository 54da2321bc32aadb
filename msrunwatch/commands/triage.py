"""`msrunwatch triage`: the verdict on a run from its logs."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import TYPE_CHECKING, Any

from msrunwatch.commands import stdin
from msrunwatch.commands.common import (
    DIRECTORY,
    EXIT_CODES,
    add_command,
    existing,
    paths,
    progress_printer,
    rule_options,
    rules_of,
    use_color,
    verbose,
    write,
)
from msrunwatch.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from msrunwatch.drivers.options import PostMortem
    from msrunwatch.judge.model import Report


def cmd_triage(args: argparse.Namespace) -> int:
    """Read a finished (or running) run's logs and print the verdict."""
    paths(args.dirs, "log directory"), paths(args.console, "--console")
    existing([*args.dirs, *(args.console or ()), *(args.config or ())])
    with stdin.spooled(args.dirs) as targets:
        started = time.monotonic()
        report = stdin.relabel(_triage(args, targets), targets)
    if args.verbose:
        from msrunwatch.report.fmt import size

        took = time.monotonic() - started
        verbose(args, f"read {report.files} files, {size(report.bytes)} in {took:.2f}s")
    if args.dirs != ["-"]:
        from msrunwatch.commands import consolehint

        consolehint.say(args, args.dirs, report.consoles)
    write(render(report, args), args.output)
    return ExitCode.FINDINGS if report.has_errors else ExitCode.OK


def _triage(args: argparse.Namespace, targets: list[str]) -> Report:
    from msrunwatch.drivers.cluster import expected_hosts
    from msrunwatch.drivers.triage import triage

    rules = rules_of(args)
    post = post_mortem(args)
    if args.config:
        from msrunwatch.drivers.configs import read_all, triage_with_config

        configs = read_all(args.config, args.msrun)
        consoles = args.console or ()
        return triage_with_config(targets, rules, configs, consoles, args.devices, post)
    progress = None if args.quiet else progress_printer(sys.stderr)
    tolerance = getattr(args, "clock_tolerance", 1.0)  # `watch` without a terminal comes here too
    hosts = expected_hosts(getattr(args, "expect_hosts", None))
    return triage(
        targets,
        rules,
        args.console or (),
        progress,
        clock_tolerance=tolerance,
        expected_hosts=hosts,
        post=post,
    )


def post_mortem(args: argparse.Namespace) -> PostMortem:
    """How the clock is read (--now, --finished, --stall-after). `watch` without a terminal
    has no --now or --finished: it reads the clock as `triage` does by default, so that its
    report is triage's (a run still being written is quiet for less than --stall-after and
    reads as running in both)."""
    from msrunwatch.drivers.options import PostMortem

    now = getattr(args, "now", None)
    last = now == LAST_LINE
    return PostMortem(
        now=None if now is None or last else now,
        last_line=last,
        finished=getattr(args, "finished", False),
        stall_after_s=args.stall_after,
    )


LAST_LINE = "last-line"


def clock_time(text: str) -> float | str:
    """--now: a time as the logs print theirs (2026-11-21T05:20:00, or with a space), or
    last-line."""
    from msrunwatch.read.timestamps import parse_iso

    if text == LAST_LINE:
        return text
    value = parse_iso(text)
    if value is None or not re.fullmatch(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?", text):
        raise argparse.ArgumentTypeError(f"not a time like 2026-11-21T05:20:00: {text!r}")
    return value


def render(report: Report, args: argparse.Namespace) -> str:
    """The report in --format (colour only for text on a terminal, or when asked)."""
    if args.format == "json":
        from msrunwatch.report import jsonout

        return jsonout.render(report)
    if args.format == "markdown":
        from msrunwatch.report import markdown

        return markdown.render(report, show_all=args.all_ranks)
    from msrunwatch.report import text  # each format imported when asked: a cold start

    color = args.output in (None, "-") and use_color(args.color, sys.stdout)
    return text.render(report, color=color, show_all=args.all_ranks)


FORMATS = "text: the verdict, a table of ranks and the findings; json: the report's contract "
FORMATS += "(see the README); markdown: the same for a bug report or a CI job summary "
FORMATS += "(SARIF, JUnit, GitHub and GitLab annotations: `msrunwatch check DIR --format ...`)"


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = add_command(
        sub,
        "triage",
        "say which rank failed first and why, from a run's logs",
        "Read msrun logs (a --log_dir, several node directories, glog files, one file, or - "
        "for standard input) and report the root cause, each rank's status, memory, compile "
        "time and progress, and the findings grouped across ranks.",
        (
            "msrunwatch triage msrun_log/",
            "msrunwatch triage node0/msrun_log node1/msrun_log --console msrun_console.txt",
            "msrunwatch triage msrun_log/ --format json -o report.json",
            "msrunwatch triage msrun_log/ --config train.yaml    # memory against the estimate",
            "kubectl logs trainer-0 | msrunwatch triage -",
            "msrunwatch triage facts/        # facts of every node (msrunwatch facts)",
        ),
        EXIT_CODES,
    )
    target = p.add_argument(
        "dirs", nargs="+", metavar="DIR", help="msrun log directory, log file, or - (stdin)"
    )
    target.complete = DIRECTORY  # type: ignore[attr-defined]
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", help=FORMATS)
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (- stdout)")
    p.add_argument(
        "--console",
        action="append",
        metavar="FILE",
        help="msrun's saved console output (exit codes, signals); repeatable",
    )
    p.add_argument(
        "--all-ranks", action="store_true", help="list every rank (above 40, alike ones fold)"
    )
    p.add_argument(
        "--config",
        action="append",
        metavar="FILE",
        help="the run's training config (MindFormers YAML or launch script): pipeline "
        "stages, memory budget, and each rank's peak beside the estimate",
    )
    p.add_argument("--devices", type=int, metavar="N", help="card count, with --config")
    p.add_argument(
        "--clock-tolerance",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="facts from several nodes: how far two nodes' clocks may differ where the logs "
        "cannot measure it (default 1); faults closer than that on two nodes are a tie",
    )
    p.add_argument(
        "--expect-hosts",
        metavar="FILE",
        help="facts from several nodes: the job's hosts, one per line (scontrol show "
        "hostnames); each that sent no facts is named, even where no scheduler's table lists it",
    )
    p.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line, with --config")
    post_mortem_options(p)
    rule_options(p)
    p.set_defaults(handler=cmd_triage)


def post_mortem_options(p: argparse.ArgumentParser) -> None:
    """--now, --finished and --stall-after: how a run's end is judged after it (triage and
    check)."""
    p.add_argument(
        "--now",
        type=clock_time,
        metavar="TIME",
        help="judge the logs as at this time, on their own clock (2026-11-21T05:20:00), for "
        "tests and replays; last-line: as a snapshot taken at their newest line (default: "
        "this host's clock)",
    )
    p.add_argument(
        "--finished",
        action="store_true",
        help="the run is over: a rank whose log stops without an end marker was stopped",
    )
    p.add_argument(
        "--stall-after",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="a run whose files were not written for longer than this is not running "
        "(default 120; where a copy reset the files' times, their newest log line must be "
        "older than this plus 24 hours, for time zones)",
    )
