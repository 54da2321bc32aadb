"""Command line: `msrunwatch COMMAND ...`; each subcommand returns an exit code.

Heavy modules are imported inside the subcommand that needs them, so `check` and
`rules check` start fast in CI and never import the TUI.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from msrunwatch import __version__
from msrunwatch.commands import check, estimate, rules, triage, watch
from msrunwatch.core.errors import MsrunwatchError, UsageError
from msrunwatch.core.exit_codes import ExitCode

__all__ = ["COMMANDS", "UsageError", "main"]

COMMANDS = ("triage", "watch", "check", "rules", "estimate", "-h", "--help", "--version")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="msrunwatch",
        description="Triage, lint and watch MindSpore msrun logs.",
    )
    parser.add_argument("--version", action="version", version=f"msrunwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in (triage, watch, check, estimate, rules):
        command.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. `msrunwatch DIR` means `watch DIR`."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS:
        argv = ["watch", *argv]
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_usage(sys.stderr)
        return ExitCode.USAGE
    try:
        return int(handler(args))
    except MsrunwatchError as exc:
        print(f"msrunwatch: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("msrunwatch: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
