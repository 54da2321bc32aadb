"""What every subcommand shares: options for rules and settings, output, usage errors.

The command modules are imported to build the parser, so they import only what argparse
needs; each handler imports the drivers it runs (`msrunwatch --version` loads nothing)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msrunwatch.core.errors import UsageError
from msrunwatch.core.sanitize import terminal

if TYPE_CHECKING:
    from msrunwatch.drivers.settings import Settings
    from msrunwatch.rules.model import Rule

FILE = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}
"""Shell completion of a file argument (shtab's `FILE`, without importing shtab)."""
DIRECTORY = {"bash": "_shtab_compgen_dirs", "zsh": "_files -/", "tcsh": "d"}
"""Shell completion of a directory argument, or a file (logs may be given one by one)."""
EXIT_CODES = """exit codes:
  0  the run looks healthy (or is still running without faults)
  1  faults found
  2  bad usage, unreadable input or invalid rules (a one-line error on stderr)"""
"""What `--help` says about the return code; commands with another meaning of 1 say so."""


def add_command(
    sub: Any, name: str, summary: str, description: str, examples: Sequence[str], exits: str
) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with examples and its exit codes."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples) + "\n\n" + exits
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    output_options(parser)
    return parser


def output_options(parser: argparse.ArgumentParser) -> None:
    """-q, -v and --color: the same on every command."""
    group = parser.add_argument_group("output")
    group.add_argument(
        "-q", "--quiet", action="store_true", help="no notes, warnings or progress on stderr"
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also say what was read, and how fast (stderr)",
    )
    group.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour: auto (on a terminal; NO_COLOR turns it off, FORCE_COLOR on), always, never",
    )


def note(args: argparse.Namespace, text: str) -> None:
    """A one-line note on stderr, unless -q."""
    if not getattr(args, "quiet", False):
        print(f"msrunwatch: {terminal(text)}", file=sys.stderr, flush=True)


def verbose(args: argparse.Namespace, text: str) -> None:
    """A line on stderr only with -v."""
    if getattr(args, "verbose", False) and not getattr(args, "quiet", False):
        print(f"msrunwatch: {terminal(text)}", file=sys.stderr, flush=True)


PROGRESS_BYTES = 256 << 20
"""Show reading progress on a terminal when the input is larger than this."""


def progress_printer(stream: Any) -> Callable[[int, int, int, int], None] | None:
    """A reading-progress line on a terminal, for inputs of hundreds of MB."""
    if not getattr(stream, "isatty", lambda: False)():
        return None

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

    return show


def use_color(choice: str, stream: Any) -> bool:
    """--color auto|always|never; with auto, NO_COLOR (non-empty) turns colour off and
    FORCE_COLOR (non-empty, not 0) turns it on for a pipe (https://no-color.org)."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def write(text: str, output: str | None) -> None:
    """Print, or write to --output (never a traceback on a bad path)."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None


def paths(values: list[str] | None, what: str = "path") -> list[str]:
    """Paths from the command line, refusing an empty one: `triage ""` would otherwise read
    the working directory (an unset shell variable is the usual cause)."""
    for value in values or ():
        if not value.strip():
            raise UsageError(f"an empty {what} was given (an unset variable?)")
    return list(values or ())


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings file (found or given) with the command-line options on top."""
    from msrunwatch.drivers import settings

    base = settings.read_file(Path(args.settings)) if args.settings else settings.find(Path.cwd())
    return settings.merge(
        base,
        args.rules or (),
        args.select or (),
        args.ignore or (),
        args.severity or (),
        getattr(args, "fail_on", None),
    )


def rules_of(args: argparse.Namespace) -> list[Rule]:
    """The rules the command runs."""
    from msrunwatch.drivers.settings import rule_set

    return rule_set(settings_of(args))


def launch_options(parser: argparse.ArgumentParser) -> None:
    """--devices and --msrun: the launch a config is checked or estimated for."""
    parser.add_argument(
        "--devices",
        "--worker-num",
        type=int,
        metavar="N",
        dest="devices",
        help="card count, when the config does not say",
    )
    parser.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line of the job")
    parser.add_argument(
        "--framework-version",
        metavar="NAME=VER[,...]",
        help="the framework versions that run the job (mindformers=1.6.0, mindspeed-llm=2.2.0, "
        "megatron=0.12.1): version-dependent checks are errors only when they are known",
    )


def rule_options(parser: argparse.ArgumentParser) -> None:
    """--rules, --select, --ignore, --severity, --settings."""
    group = parser.add_argument_group("rules")
    group.add_argument(
        "--rules",
        action="append",
        metavar="PATH",
        help="extra rule files or directories; a rule with a built-in id replaces it",
    )
    group.add_argument(
        "--select",
        action="append",
        metavar="IDS",
        help="only these rule ids or categories (comma-separated)",
    )
    group.add_argument(
        "--ignore",
        action="append",
        metavar="IDS",
        help="skip these rule ids or categories (comma-separated)",
    )
    group.add_argument(
        "--severity",
        action="append",
        metavar="ID=LEVEL",
        help="override a rule's (or category's) severity",
    )
    group.add_argument(
        "--settings",
        metavar="FILE",
        help="settings file (default: msrunwatch.yaml or [tool.msrunwatch] in "
        "pyproject.toml, from the working directory up)",
    )
