"""Escape sequences in file names and user rules never reach a terminal raw (issue 21,
defect 11): before, the `msrunwatch: error:` line printed a path as given, and `rules check`,
`rules show` and `rules list` printed a rule's id, title, message and case names as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.support import RAW_CONTROL, cli

FORGED = "\x1b]0;owned\x07\x1b[2J\x1b[31m\u202eevil\x9b1m"
"""A retitle (OSC), a screen clear and a colour (CSI), a right-to-left override, a C1 CSI."""


def clean(text: str) -> None:
    assert RAW_CONTROL.search(text) is None, f"a raw control character in {text!r}"


@pytest.mark.parametrize("command", ["triage", "check", "watch"])
def test_an_error_naming_a_forged_path_shows_its_escapes(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / f"run{FORGED}")
    waits = ["--headless", "--wait", "0", "-q"] if command == "watch" else []  # it waits
    code, out, err = cli(capsys, command, missing, *waits)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "\\x1b]0;owned\\x07" in err
    clean(err)


def forged_rule(directory: Path) -> Path:
    """A user rule whose title, message, doc and hint carry escapes, with a case that fails
    (its message shows in the failure)."""
    directory.mkdir()
    (directory / "my-rule.yaml").write_text(
        "id: my-rule\n"
        'title: "title \\e]0;owned\\a \\u202e"\n'
        "match: needle\n"
        'message: "message \\e[2J"\n'
        "category: oom\n"
        "severity: error\n"
        'doc: "doc \\e[31m red"\n'
        'hint: "hint \\x9b1m"\n',
        encoding="utf-8",
    )
    (directory / "my-rule.cases.yaml").write_text(
        'rule: my-rule\ncases:\n  quiet:\n    log: "needle \\e]0;x\\a"\n    expect: []\n',
        encoding="utf-8",
    )
    return directory


def test_rules_check_shows_a_forged_rule_id_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "rules"
    directory.mkdir()
    (directory / "x.yaml").write_text(
        'id: "bad\\e[31mid"\nmatch: foo\nmessage: m\ncategory: oom\nseverity: error\n',
        encoding="utf-8",
    )
    code, out, err = cli(capsys, "rules", "check", str(directory))
    assert code == 2
    assert "bad\\x1b[31mid" in err
    clean(out + err)


@pytest.mark.parametrize(
    "args",
    [
        ["rules", "check", "{dir}"],
        ["rules", "check", "{dir}", "--strict"],
        ["rules", "show", "my-rule", "--rules", "{dir}"],
        ["rules", "list", "--rules", "{dir}"],
        ["rules", "list", "--rules", "{dir}", "--format", "markdown"],
    ],
)
def test_a_user_rule_text_never_reaches_the_terminal_raw(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = forged_rule(tmp_path / "rules")
    code, out, err = cli(capsys, *(a.format(dir=directory) for a in args))
    assert code in (0, 1), err
    assert "\\x1b" in out  # shown, as visible escapes
    clean(out + err)
