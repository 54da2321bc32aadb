"""The command line's parser: which command a line names, and "did you mean" for typos.

`msrunwatch DIR` means `msrunwatch watch DIR`; a word that is neither a command nor a path
but close to a command is a typo, and says so instead of waiting for a directory of that
name. A command's module is imported only when its subparser is built, and a line that
names its command builds that one alone: a cold `check` does not import `watch`'s or
`estimate`'s modules, nor build their options.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from msrunwatch import __version__
from msrunwatch.core.errors import UsageError

COMMANDS = ("triage", "watch", "check", "facts", "rules", "estimate", "completion", "help")
TOP_OPTIONS = ("-h", "--help", "-V", "--version")
SUBPARSERS = ("watch", "triage", "check", "facts", "estimate", "rules", "completion")
"""The modules of msrunwatch.commands that add a subparser, in the order --help lists them."""
EPILOG = """examples:
  msrunwatch msrun_log/                       follow a run live (same as `watch`)
  msrunwatch triage msrun_log/                which rank failed first, and why
  msrunwatch check msrun_log/ --format sarif  findings for CI
  msrunwatch check train.yaml --devices 8     lint a training config before launch
  msrunwatch rules show oom-memory-not-enough one rule's doc, hint and cases
  msrunwatch help triage                      a command's options

exit codes:
  0  the run looks healthy (or is still running without faults)
  1  faults found (check: a finding at --fail-on; estimate: a stage will not fit)
  2  bad usage, unreadable input or invalid rules (a one-line error on stderr)
  130, 143  stopped by Ctrl+C, SIGTERM (129: the live view's terminal hung up)
  141  standard output closed before all was written (`| head`)"""


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a mistyped choice (`rules lst`, `--format jsn`), no
    option taken by a prefix of its name (`--form` is no `--format`: a prefix that names
    one option today may name two tomorrow), and a mistyped option named before a missing
    argument (`msrunwatch --formt`: the option, not the DIR it left out)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._given: Sequence[str] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given = list(args) if args is not None else []
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("the following arguments are required"):
            unknown = unknown_options(self._given, self)
            if unknown:
                super().error(unrecognized(unknown, self))
        choice = message.partition("invalid choice: '")[2].partition("'")[0]
        options = message.partition("(choose from ")[2].rstrip(")").replace("'", "").split(", ")
        close = close_matches(choice, options, n=1) if choice else []
        if close:
            super().error(f"{message}; did you mean {close[0]!r}?")
        super().error(message + (choice_elsewhere(message, choice, self) if choice else ""))


def unknown_options(given: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """The words before `--` that look like options of none of the parser's: not a known
    option (`--x=v`: its name), nor a cluster of known short flags (`-qv`), nor a negative
    number."""
    known = {s for action in parser._actions for s in action.option_strings}
    found = []
    for word in given:
        if word == "--":
            break
        if not word.startswith("-") or word == "-" or word.partition("=")[0] in known:
            continue
        if word[:2] in known and not word.startswith("--"):
            continue
        if word[1:].replace(".", "", 1).isdigit():
            continue
        found.append(word)
    return found


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse; an unknown option is an error from the subcommand that was given (its usage
    line, not the top level's), with the nearest option it has (`--formt`: `--format`)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner = _command_parser(parser, args)
        owner.error(unrecognized(extras, owner))
    return args


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The parser of the (sub)command the arguments chose: `rules list`'s for `rules list`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _command_parser(chosen, args)
    return parser


def unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """`unrecognized arguments: --formt json; did you mean '--format'?`"""
    message = f"unrecognized arguments: {' '.join(extras)}"
    option = next((e.partition("=")[0] for e in extras if e.startswith("-")), None)
    if option is None:
        return message
    known = [s for action in parser._actions for s in action.option_strings]
    close = close_matches(option, known, n=1, cutoff=0.75)
    if close:
        return f"{message}; did you mean {close[0]!r}?"
    return message + elsewhere(option, parser)


def elsewhere(option: str, parser: argparse.ArgumentParser) -> str:
    """`; did you mean '--format' (an option of triage, check, not of watch)?` when the
    nearest option is another command's (`msrunwatch --formt` is `watch --formt`)."""
    here = parser.prog.rpartition(" ")[2]
    owners: dict[str, list[str]] = {}
    for action in build()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                for known in (s for a in command._actions for s in a.option_strings):
                    if name != here:
                        owners.setdefault(known, []).append(name)
    close = close_matches(option, list(owners), n=1, cutoff=0.75)
    if not close:
        return ""
    return (
        f"; did you mean {close[0]!r} (an option of {', '.join(owners[close[0]])}, not of {here})?"
    )


def choice_elsewhere(message: str, choice: str, parser: argparse.ArgumentParser) -> str:
    """`; sarif output is from 'msrunwatch check' ...` when another command takes this value
    for the same option: `check` reads the same logs and writes the CI formats, which a
    triage user asks for by habit."""
    option = message.partition("argument ")[2].partition(":")[0].rpartition("/")[2]
    here = parser.prog.rpartition(" ")[2]
    for action in build()._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, command in action.choices.items():
            takes = (a for a in command._actions if option in a.option_strings and a.choices)
            if name != here and any(choice in (a.choices or ()) for a in takes):
                run = f"msrunwatch {name} DIR {option} {choice}"
                return f"; {choice} output is from `msrunwatch {name}` ({run})"
    return ""


def build(only: str | None = None) -> Parser:
    """The command line's parser; with `only`, the one command's subparser alone.

    A command's subparser, its usage, help and errors do not depend on its siblings, so a
    run that names its command builds that one: building all seven was ~30 M instructions
    of a cold `check` (argparse's actions, help strings and their formatting)."""
    parser = Parser(
        prog="msrunwatch",
        description="Triage, lint and watch MindSpore msrun logs: the rank that failed first "
        "and why, not the hundred that timed out after it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"msrunwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBPARSERS:
        if only is None or name == only:
            importlib.import_module(f"msrunwatch.commands.{name}").add(sub)
    if only is None:
        sub.add_parser("help", help="help on a command: `msrunwatch help triage`")
    return parser


def one_command(argv: Sequence[str]) -> str | None:
    """The command a routed command line names, when its parser alone will do: not for
    top-level options (the whole help) nor `completion` (which describes every command)."""
    first = argv[0] if argv else ""
    return first if first in COMMANDS and first not in ("help", "completion") else None


def route(argv: list[str]) -> list[str]:
    """`DIR ...` or `--option DIR` is `watch`; `help X` is `X --help`; a typo is an error."""
    first = argv[0]
    if first == "help":
        return [*argv[1:], "--help"]
    if first in COMMANDS or first in TOP_OPTIONS:
        return argv
    if not first.startswith("-") and not Path(first).exists():
        close = close_matches(first, COMMANDS, n=1, cutoff=0.6)
        if close:
            raise UsageError(f"unknown command {first!r}; did you mean {close[0]!r}?")
    return ["watch", *argv]


def close_matches(word: str, options: Sequence[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """difflib's close matches (imported only when a word was mistyped)."""
    import difflib

    return difflib.get_close_matches(word, options, n=n, cutoff=cutoff)
