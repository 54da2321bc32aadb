"""A command line that names its command is parsed by that command's subparser alone (a
cold start builds one subparser, not seven): the fast path must read every command line as
the whole parser does, with the same namespace, help text, errors and exit codes."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

from msrunwatch.cli import main
from msrunwatch.commands.parser import COMMANDS, build, one_command, parse, route
from tests.integration.test_readme import COMMANDS as README_LINES

OWN_PARSER = [c for c in COMMANDS if c not in ("help", "completion")]
"""The commands whose lines take the one-subparser path."""

HAND_WRITTEN = [
    *([c, "--help"] for c in OWN_PARSER),
    *([c, "--formt", "json"] for c in OWN_PARSER),  # an unknown option, with a "did you mean"
    ["check", "--format", "jsn", "x"],  # an invalid choice, with a "did you mean"
    ["check", "--fail-on"],  # an option missing its value
    ["rules"],  # a command whose subcommand is missing
    ["rules", "lst"],
    ["triage"],
    ["msrun_log", "--stall-after", "30"],  # a directory alone is `watch`
]


def parsed(only: str | None, argv: list[str]) -> tuple[Any, str, str]:
    """What parsing the routed line gives: the namespace's fields (or the exit code), stdout
    and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: Any = vars(parse(build(only), argv))
        except SystemExit as done:
            result = ("exit", done.code)
    return result, out.getvalue(), err.getvalue()


LINES = [argv for _, argv in README_LINES if argv] + HAND_WRITTEN


@pytest.mark.parametrize("argv", LINES, ids=[" ".join(a)[:60] for a in LINES])
def test_one_subparser_parses_as_the_whole_parser(argv: list[str]) -> None:
    routed = route(argv)
    only = one_command(routed)
    assert parsed(only, routed) == parsed(None, routed)


def test_the_lines_sampled_take_the_fast_path_for_every_command() -> None:
    """The comparison above is not vacuous: each command's own parser is exercised."""
    taken = {one_command(route(argv)) for argv in LINES}
    assert set(OWN_PARSER) <= taken


def test_the_one_subparser_holds_that_command_alone() -> None:
    names = {a.dest for a in build("check")._actions}
    assert "command" in names
    sub = next(a for a in build("check")._actions if a.dest == "command")
    assert list(sub.choices or ()) == ["check"]
    whole = next(a for a in build()._actions if a.dest == "command")
    assert set(whole.choices or ()) == set(COMMANDS)


@pytest.mark.parametrize("argv", [["--help"], ["help"], ["help", "check"], []])
def test_the_top_level_help_still_lists_every_command(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as done:
        code = done.code  # type: ignore[assignment]
    assert code == 0
    out = capsys.readouterr().out
    listed = (
        ("msrunwatch check", "--fail-on") if argv == ["help", "check"] else ("triage", "completion")
    )
    assert all(word in out for word in listed)


def test_a_typo_of_a_command_still_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chekc"]) == 2
    assert "did you mean 'check'" in capsys.readouterr().err
