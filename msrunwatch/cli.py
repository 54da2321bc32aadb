"""Command line: `msrunwatch COMMAND ...`; each subcommand returns an exit code.

Every start pays for what this module imports, so it imports almost nothing: `--version`
is answered before argparse is imported, the parser (msrunwatch.commands.parser) imports
only the command that was named, and each command imports its drivers when it runs. So
`check` and `rules check` start fast in CI and never import the TUI. The methods of the
dataclasses those modules make are compiled once and kept (rules.methodcode).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from msrunwatch import __version__
from msrunwatch.core.errors import UsageError

__all__ = ["UsageError", "main"]

VERSION_FLAGS = ("-V", "--version")
VERSION = f"msrunwatch {__version__}"
"""What `msrunwatch --version` prints, here and in the parser's version action alike."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. A bare `msrunwatch` prints the help.
    Called as the program (no argv: the console script, `python -m msrunwatch`), it ends
    the process itself once the command is done (`end_now`)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if len(args_in) == 1 and args_in[0] in VERSION_FLAGS:
        print(VERSION)  # as the parser would, without importing it
        code = 0
    else:
        code = _run(args_in)
    if argv is None:
        end_now(code)
    return code


def end_now(code: int) -> None:
    """Exit with code at once, skipping the interpreter's teardown: freeing every module
    and object one by one, which nobody sees, was 38 M instructions (6%) of a cold `check`.
    What the teardown does that can be seen is done first, in its order: the atexit
    functions (the rule cache writes its memos there) and the flush of stdout and stderr.
    Returns, for the usual exit, when something else might still need the teardown: a
    thread still running, output that cannot be flushed (the interpreter then reports it
    as it always has), or Python's development mode (its warnings at teardown)."""
    import atexit
    import os

    threading = sys.modules.get("threading")
    if sys.flags.dev_mode or (threading is not None and threading.active_count() > 1):
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _run(args_in: list[str]) -> int:
    """Parse and run a command, turning every way it can end into its exit code."""
    from msrunwatch.rules import methodcode

    methodcode.remember()  # before the command's modules make their dataclasses
    from msrunwatch.commands.parser import build, one_command, parse, route
    from msrunwatch.core.errors import MsrunwatchError
    from msrunwatch.core.exit_codes import ExitCode
    from msrunwatch.core.fileio import silence_stdout
    from msrunwatch.core.sanitize import terminal
    from msrunwatch.core.stopping import Terminated, sigterm_raises

    if not args_in:
        build().print_help()
        return ExitCode.OK
    try:
        routed = route(args_in)
        parser = build(one_command(routed))
        args = parse(parser, routed)
        args.root_parser = parser
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.parse_args([*args_in, "--help"])
            return ExitCode.USAGE
        if args.command == "watch":  # the live loops stop on SIGTERM their own way
            return _flushed(int(handler(args)))
        with sigterm_raises():
            return _flushed(int(handler(args)))
    except MsrunwatchError as exc:
        print(f"msrunwatch: error: {terminal(str(exc))}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("msrunwatch: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Terminated:
        print("msrunwatch: terminated", file=sys.stderr)
        return ExitCode.TERMINATED
    except BrokenPipeError:  # the reader went away (`| head`): quietly, but never 0
        silence_stdout()
        return ExitCode.OUTPUT_CLOSED
    except Exception as exc:  # a bug: one line and exit 2, never exit 1 ("faults found")
        import os

        if os.environ.get("MSRUNWATCH_DEBUG"):
            raise
        print(f"msrunwatch: internal error: {one_line(exc)} (a bug: please report it; "
              "MSRUNWATCH_DEBUG=1 shows the traceback)", file=sys.stderr)  # fmt: skip
        return ExitCode.USAGE


def _flushed(code: int) -> int:
    """The code, once what is buffered for stdout is written: a reader that went away is
    seen here (exit 141), not by the interpreter's last flush (an ignored BrokenPipeError
    on stderr and exit 120)."""
    sys.stdout.flush()
    return code


def one_line(exc: BaseException) -> str:
    """An exception as one short line of visible characters."""
    from msrunwatch.core.sanitize import terminal

    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return terminal(text[:300])
