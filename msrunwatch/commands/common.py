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
RULE_IDS = "_msrunwatch_rule_ids"
"""The shell function that lists rule ids (defined in the completion script's preamble)."""
RULE_ID = {"bash": RULE_IDS, "zsh": f"{{{RULE_IDS}}}", "tcsh": "R"}
"""Shell completion of a rule id; `R` becomes the list of ids in the tcsh script."""
RULE_LIST = "_msrunwatch_rule_list"
"""The shell function that lists rule ids and categories after what a comma ends."""
RULE_NAMES = {"bash": RULE_LIST, "zsh": f"{{{RULE_LIST}}}", "tcsh": "L"}
"""Shell completion of `--select`/`--ignore`: comma-separated rule ids and categories; `L`
becomes the list of them in the tcsh script (which completes the first only)."""
RULE_LEVEL = "_msrunwatch_rule_level"
"""The shell function that completes `--severity ID=LEVEL`: a rule id or category and `=`,
then, after the `=`, a severity."""
LEVELS = ("error", "warning", "info")
"""What `--severity ID=LEVEL` takes after the `=` (rules.vocab.Severity's values; not
imported, as this module builds parsers)."""
RULE_LEVELS = {"bash": RULE_LEVEL, "zsh": f"{{{RULE_LEVEL}}}", "tcsh": "S"}
"""Shell completion of `--severity`; `S` becomes the rule ids and categories in the tcsh
script (which completes the name only)."""
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


def verbose(args: argparse.Namespace, text: str | Callable[[], str]) -> None:
    """A line on stderr only with -v; a callable is called only then (what it says can
    cost more than the rest of a small run)."""
    if getattr(args, "verbose", False) and not getattr(args, "quiet", False):
        said = text if isinstance(text, str) else text()
        print(f"msrunwatch: {terminal(said)}", file=sys.stderr, flush=True)


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
            f"\rmsrunwatch: read {done}/{files} files, {read >> 20}/{total >> 20} MiB",
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


STDOUT_PIECE = 2048
"""Characters written to stdout at a time (at most 8 KiB, its buffer): CPython's buffered
writer drops the rest of one larger write without an error when the pipe's reader leaves
during it, so `triage --format json | head` ended as if the whole report was read."""


def write(text: str, output: str | None) -> None:
    """Print, or write to --output (never a traceback on a bad path). A file is written
    whole or not at all (core.fileio.write_whole): a SIGTERM or a full disk leaves no
    cut-off report behind."""
    if output is None or output == "-":
        for start in range(0, len(text), STDOUT_PIECE):
            sys.stdout.write(text[start : start + STDOUT_PIECE])
        return
    from msrunwatch.core.fileio import write_whole

    try:
        write_whole(Path(output), text.encode("utf-8", "surrogateescape"))
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
    """The settings file (found or given) with the command-line options on top; -v says
    which file it was."""
    from msrunwatch.drivers import settings

    base = settings.read_file(Path(args.settings)) if args.settings else settings.find(Path.cwd())
    verbose(args, lambda: f"settings: {settings.describe(base)}")
    return settings.merge(
        base,
        args.rules or (),
        args.select or (),
        args.ignore or (),
        args.severity or (),
        getattr(args, "fail_on", None),
    )


def rules_of(args: argparse.Namespace, chosen: Settings | None = None) -> list[Rule]:
    """The rules the command runs (under `chosen` settings, else the command's); -v says
    how many, from where, and what the settings changed."""
    from msrunwatch.drivers.settings import describe_rules, rule_set
    from msrunwatch.rules.rulecache import keep_out

    keep_out(inputs(args))
    given = settings_of(args) if chosen is None else chosen
    rules = rule_set(given)
    verbose(args, lambda: f"rules: {describe_rules(rules, given)}")
    return rules


def inputs(args: argparse.Namespace) -> list[str]:
    """The paths a command reads or watches (never written to, the rule cache included)."""
    given = [*(getattr(args, "targets", None) or ()), *(getattr(args, "dirs", None) or ())]
    return [p for p in [*given, *(getattr(args, "console", None) or ())] if p and p != "-"]


def existing(values: Sequence[str], what: str = "path") -> None:
    """Refuse a path that does not exist, with the nearest name beside it (`msrun_lgo`:
    did you mean `msrun_log`?); `-` (standard input) is left to the reader."""
    for value in values:
        if value != "-" and not os.path.lexists(value):
            raise UsageError(f"{value}: no such file or directory{near_hint(value)}")


def near_hint(value: str) -> str:
    """`; did you mean 'msrun_log'?` when the parent directory holds a name close to the
    missing one's, else nothing."""
    near = near_name(value)
    return f"; did you mean {near!r}?" if near else ""


def near_name(value: str) -> str | None:
    """An existing path whose name is close to a missing one's (a typo), or None."""
    import difflib

    path = Path(value)
    parent = path.parent
    try:
        names = [p.name for p in parent.iterdir()] if parent.is_dir() else []
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.8)
    return str(parent / close[0]) if close else None


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
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="sets",
        help="a setting over the config's (run_mode=finetune, parallel_config.model_parallel=4, "
        "--seq-length=8192), as the launch passes it",
    )
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
    select = group.add_argument(
        "--select",
        action="append",
        metavar="IDS",
        help="only these rule ids or categories (comma-separated)",
    )
    ignore = group.add_argument(
        "--ignore",
        action="append",
        metavar="IDS",
        help="skip these rule ids or categories (comma-separated)",
    )
    select.complete = ignore.complete = RULE_NAMES  # type: ignore[attr-defined]
    severity = group.add_argument(
        "--severity",
        action="append",
        metavar="ID=LEVEL",
        help="override a rule's (or category's) severity: what fails and the counts, "
        "not the root cause",
    )
    severity.complete = RULE_LEVELS  # type: ignore[attr-defined]
    group.add_argument(
        "--settings",
        metavar="FILE",
        help="settings file (default: msrunwatch.yaml or [tool.msrunwatch] in "
        "pyproject.toml, from the working directory up)",
    )
