"""The README cannot drift: what it shows a command print, the command prints.

Blocks after `<!-- readme:output -->` are terminal sessions: a `$ msrunwatch ...` line,
then what it prints. A line `...` stands for any number of lines, and a line ending in
`...` for any line that starts with what comes before (the ruff docs' approach: every
example is run). Blocks after `<!-- readme:commands -->` hold command lines without
output (they watch a live run, or need a cluster): each msrunwatch command in them must
parse. The screenshot is drawn by docs/screenshot.py and must be what it draws now.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from msrunwatch.commands.parser import build, route
from tests.support import ROOT

README = ROOT / "README.md"
OPERATORS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "2>", "("}


def blocks(marker: str) -> list[tuple[int, list[str]]]:
    """(line number, lines) of every fenced block right after `marker`."""
    lines = README.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.strip() != marker:
            continue
        start = i + 2
        assert lines[i + 1].startswith("```"), f"README.md:{i + 1}: {marker} needs a block"
        end = next(j for j in range(start, len(lines)) if lines[j].startswith("```"))
        out.append((start + 1, lines[start:end]))
    return out


def sessions() -> list[tuple[str, str, list[str]]]:
    """(where, command, expected lines) of every shown command."""
    out = []
    for number, lines in blocks("<!-- readme:output -->"):
        for k, line in enumerate(lines):
            if line.startswith("$ "):
                rest = lines[k + 1 :]
                end = next((j for j, x in enumerate(rest) if x.startswith("$ ")), len(rest))
                out.append((f"README.md:{number + k}", line[2:], rest[:end]))
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    """Expected lines against actual ones, `...` lines as wildcards (see the docstring)."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    if not actual:
        return False
    if head.endswith("...") and head.strip() != "...":
        ok = actual[0].rstrip().startswith(head[:-3].rstrip())
    else:
        ok = actual[0].rstrip() == head.rstrip()
    return ok and matches(rest, actual[1:])


def run(command: str) -> str:
    words = shlex.split(command)
    assert words[0] == "msrunwatch", command
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "msrunwatch", *words[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return done.stdout


SESSIONS = sessions()


def test_the_readme_shows_output_of_real_commands() -> None:
    assert len(SESSIONS) >= 5


@pytest.mark.parametrize(("where", "command", "expected"), SESSIONS, ids=[s[0] for s in SESSIONS])
def test_a_shown_command_prints_what_the_readme_says(
    where: str, command: str, expected: list[str]
) -> None:
    actual = run(command).splitlines()
    assert matches(expected, actual), f"{where}: `{command}` printed:\n" + "\n".join(actual)


def commands() -> list[tuple[str, list[str]]]:
    """(where, argv) of every msrunwatch command in the command-only blocks."""
    out = []
    for number, lines in blocks("<!-- readme:commands -->"):
        text = "\n".join(lines).replace("\\\n", " ")
        for k, line in enumerate(text.splitlines()):
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            lexer.commenters = "#"
            words = list(lexer)
            for start, word in enumerate(words):
                first = start == 0 or words[start - 1] in OPERATORS
                if first and Path(word).name == "msrunwatch":
                    end = next(
                        (j for j in range(start, len(words)) if words[j] in OPERATORS), len(words)
                    )
                    out.append((f"README.md:{number}+{k}:{start}", words[start + 1 : end]))
    return out


COMMANDS = commands()


def test_the_readme_has_command_blocks() -> None:
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize(("where", "argv"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_shown_command_line_parses(where: str, argv: list[str]) -> None:
    try:
        args = build().parse_args(route(argv))
    except SystemExit as done:  # --help, -V: printed, and fine
        assert done.code == 0, f"{where}: {argv} does not parse"
        return
    assert getattr(args, "handler", None) is not None, f"{where}: {argv} names no command"


def test_wildcards() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "..."], ["a"])
    assert matches(["ab..."], ["abc"]) and not matches(["ab..."], ["xbc"])
    assert not matches(["a", "d"], ["a", "b", "d"])


def test_the_screenshot_is_what_the_view_draws_now() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import screenshot  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    assert "docs/tui-oom-hccl.svg" in README.read_text(encoding="utf-8")
    assert screenshot.main(["--check"]) == 0, "python docs/screenshot.py, then review the SVG"


def test_lint_needs_the_dev_extra_and_says_so() -> None:
    (_, lint), *_ = blocks("<!-- ci:lint -->") or [(0, [""])]
    assert '".[dev]"' in " ".join(lint)
    assert re.search(r"ruff check.*mypy.*lint-imports", " ".join(lint))


def test_every_block_that_runs_msrunwatch_is_checked() -> None:
    """A new example cannot slip in unmarked: each block naming a msrunwatch command is
    run (readme:output), parsed (readme:commands) or run by CI (ci:...)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    unmarked = []
    inside, marked, start = False, False, 0
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if not inside:
                inside, start = True, i
                before = lines[i - 1].strip() if i else ""
                # cluster:recipe blocks are run by tests/integration/test_cluster_recipes.py
                marked = before.startswith(("<!-- readme:", "<!-- ci:", "<!-- cluster:recipe"))
            else:
                inside = False
            continue
        if inside and not marked and re.match(r"^\$? ?(\S*/)?msrunwatch \w", line):
            unmarked.append(f"README.md:{start + 1}")
    assert not unmarked, f"unmarked examples: {sorted(set(unmarked))}"
