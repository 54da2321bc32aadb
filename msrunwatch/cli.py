"""Command line: `msrunwatch triage`, and the other drivers as they land."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from msrunwatch import __version__
from msrunwatch.discover import DiscoveryError
from msrunwatch.exit_codes import ExitCode
from msrunwatch.rules.loader import RuleError, load_rules

PROGRESS_BYTES = 256 << 20
"""Show reading progress on a terminal when the input is larger than this."""


class UsageError(Exception):
    """Bad input the user can fix; printed as one line, exit code 2."""


def _progress_printer(stream: object) -> object:
    def show(done: int, files: int, read: int, total: int) -> None:
        if total < PROGRESS_BYTES:
            return
        end = "\n" if done == files else ""
        print(
            f"\rmsrunwatch: read {done}/{files} files, {read >> 20}/{total >> 20} MB",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    return show if getattr(stream, "isatty", lambda: False)() else None


def _color(choice: str, stream: object) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None


def _rules(args: argparse.Namespace) -> list:  # type: ignore[type-arg]
    extra = [Path(p) for p in getattr(args, "rules", None) or []]
    return load_rules(None) + (load_rules(extra) if extra else [])


def cmd_triage(args: argparse.Namespace) -> int:
    """Read a finished (or running) run's logs and print the verdict."""
    from msrunwatch.report import jsonout, markdown, text
    from msrunwatch.triage import triage

    rules = _rules(args)
    report = triage(args.dirs, rules, args.console or (), _progress_printer(sys.stderr))  # type: ignore[arg-type]
    if args.format == "json":
        out = jsonout.render(report)
    elif args.format == "markdown":
        out = markdown.render(report, show_all=args.all_ranks)
    else:
        color = args.output is None and _color(args.color, sys.stdout)
        out = text.render(report, color=color, show_all=args.all_ranks)
    _write(out, args.output)
    return ExitCode.FINDINGS if report.has_errors else ExitCode.OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="msrunwatch",
        description="Triage, lint and watch MindSpore msrun logs.",
    )
    parser.add_argument("--version", action="version", version=f"msrunwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    triage = sub.add_parser(
        "triage",
        help="say which rank failed first and why, from a run's logs",
        description="Read msrun logs (a --log_dir, several node directories, glog files or one "
        "file) and report the root cause, each rank's status, memory, compile time and progress.",
    )
    triage.add_argument("dirs", nargs="+", metavar="DIR", help="msrun log directory or log file")
    triage.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    triage.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    triage.add_argument(
        "--console",
        action="append",
        metavar="FILE",
        help="msrun's saved console output (exit codes, signals); repeatable",
    )
    triage.add_argument(
        "--rules",
        action="append",
        metavar="DIR",
        help="extra rule files or directories (override built-ins by id)",
    )
    triage.add_argument("--all-ranks", action="store_true", help="list every rank in the table")
    triage.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    triage.set_defaults(handler=cmd_triage)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_usage(sys.stderr)
        return ExitCode.USAGE
    try:
        return int(args.handler(args))
    except (UsageError, DiscoveryError, RuleError) as exc:
        print(f"msrunwatch: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("msrunwatch: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
