"""A typo costs one line to fix: mistyped options, paths and settings get the nearest right
one, from the subcommand that was meant; -v says which settings and rules were used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES, ROOT

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed"


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and stderr of a command line that argparse may end with SystemExit."""
    try:
        code = main(argv)
    except SystemExit as done:
        code = int(done.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "usage", "meant"),
    [
        (["triage", str(OOM), "--formt", "json"], "usage: msrunwatch triage", "--format"),
        (["check", str(OOM), "--fail_on", "warning"], "usage: msrunwatch check", "--fail-on"),
        ([str(OOM), "--stal-after", "3"], "usage: msrunwatch watch", "--stall-after"),
        (["rules", "list", "--scoep", "run"], "usage: msrunwatch rules list", "--scope"),
    ],
)
def test_a_mistyped_option_gets_the_subcommands_usage_and_the_nearest_option(
    argv: list[str], usage: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = error_of(argv, capsys)
    assert code == 2
    assert err.startswith(usage), err
    assert err.rstrip().endswith(f"did you mean {meant!r}?"), err


@pytest.mark.parametrize(
    ("argv", "usage", "said"),
    [
        (["--formt"], "usage: msrunwatch watch", "--formt; did you mean '--format' (an option "),
        (["--verbos"], "usage: msrunwatch watch", "--verbos; did you mean '--verbose'?"),
        (["check", "--formt"], "usage: msrunwatch check", "--formt; did you mean '--format'?"),
        (["watch", "-x"], "usage: msrunwatch watch", "unrecognized arguments: -x\n"),
    ],
)
def test_a_mistyped_option_is_named_before_a_missing_directory(
    argv: list[str], usage: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`msrunwatch --formt` is `watch --formt` without its DIR: the typo is what was wrong,
    and the nearest option may be another command's (`--format` is triage's, not watch's)."""
    code, err = error_of(argv, capsys)
    assert code == 2 and err.startswith(usage), err
    assert "required" not in err and said in err, err
    assert ("not of watch)?" in err) == (argv == ["--formt"])


@pytest.mark.parametrize(
    "argv",
    [
        ["triage", "--form", "json", str(OOM)],
        ["check", str(OOM), "--fail", "warning"],
        ["rules", "list", "--sco", "run"],
        ["--form", "json"],
    ],
)
def test_no_option_is_taken_by_a_prefix_of_its_name(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse takes `--form` for `--format` unless told not to; a prefix that names one
    option today may name two tomorrow, and a script that relies on it then breaks."""
    code, err = error_of(argv, capsys)
    assert code == 2
    assert f"unrecognized arguments: {next(a for a in argv if a.startswith('--'))}" in err, err


def test_short_flags_together_negative_numbers_and_values_are_no_typos(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What the missing-argument check must not take for a mistyped option."""
    from msrunwatch.commands.parser import build, unknown_options

    triage = build("triage")._subparsers._group_actions[0].choices["triage"]  # type: ignore[union-attr]
    given = ["-qv", "--format=json", "-1.5", "-", "x", "--", "--not-an-option"]
    assert unknown_options(given, triage) == []
    assert unknown_options(["-qz", "--formt=json", "-q"], triage) == ["--formt=json"]
    code, err = error_of(["triage", "-qv"], capsys)
    assert code == 2 and "the following arguments are required: DIR" in err, err


def test_an_option_like_no_other_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = error_of(["rules", "list", "--bogus"], capsys)
    assert code == 2 and err.rstrip().endswith("unrecognized arguments: --bogus")


@pytest.mark.parametrize("command", ["triage", "check"])
def test_a_mistyped_path_names_the_near_one(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = str(OOM)[:-1]
    assert main([command, typo]) == 2
    assert capsys.readouterr().err == (
        f"msrunwatch: error: {typo}: no such file or directory; did you mean {str(OOM)!r}?\n"
    )


def test_watch_refuses_a_near_name_unless_waiting_is_asked_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A job script starts the watcher before msrun creates its directory; a typo beside an
    existing run is no such directory: it is answered at once, and waited for only on
    request."""
    typo = str(OOM)[:-1]
    assert main(["watch", typo, "--headless"]) == 2
    err = capsys.readouterr().err
    assert f"did you mean {str(OOM)!r}? (--wait to wait for {typo} to appear)" in err
    assert main(["watch", typo, "--headless", "--wait", "0.2"]) == 2
    assert "did not appear within 0.2s" in capsys.readouterr().err


def test_verbose_names_the_settings_file_and_the_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(OOM), "-v"]) == 1
    out, err = capsys.readouterr()
    assert "msrunwatch: settings: none (no msrunwatch.yaml" in err
    assert "msrunwatch: rules: " in err and " built-in from " in err
    # the summary's rule count is the one -v says was applied (a new user saw 164 and 242)
    counted = out.rsplit("(", 1)[1].split()[0]
    assert f"msrunwatch: rules: {counted} applied (no config among the targets" in err
    (tmp_path / "pyproject.toml").write_text('[tool.msrunwatch]\nignore = ["oom"]\n')
    for argv in (["check", str(OOM)], ["triage", str(OOM)], ["rules", "list"]):
        main([*argv, "-v"])
        err = capsys.readouterr().err
        assert f"msrunwatch: settings: {tmp_path / 'pyproject.toml'} [tool.msrunwatch]\n" in err
        assert "; ignore oom" in err, argv
    main(["completion", "bash", "-v"])
    assert "categories complete (no settings file is read)" in capsys.readouterr().err
    main(["estimate", str(FIXTURES / "configs" / "seed001_qwen25_7b_tp2_pp2.sh"), "-v"])
    assert "settings: none read, rules: none run" in capsys.readouterr().err
    main(["rules", "check", str(ROOT / "rules" / "log" / "cluster"), "-v"])
    assert "settings: none read; rules: " in capsys.readouterr().err


def test_verbose_says_a_rules_directory_of_the_settings_holds_no_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misplaced rules directory (empty) does not pass silently."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ci" / "rules").mkdir(parents=True)
    (tmp_path / "msrunwatch.yaml").write_text("rules: [ci/rules]\n")
    assert main(["check", str(OOM), "-v"]) == 1
    err = capsys.readouterr().err
    assert f", 0 from {tmp_path / 'ci' / 'rules'})" in err


def test_settings_errors_name_the_file_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / "msrunwatch.yaml"
    settings.write_text("rules: [ci/rules]\n")
    assert main(["check", str(OOM)]) == 2
    assert capsys.readouterr().err == (
        f"msrunwatch: error: {settings}: rules: ci/rules: no such file or directory "
        "(paths are relative to the settings file)\n"
    )
    settings.write_text("ignore: [peer-disconected]\n")
    assert main(["check", str(OOM)]) == 2
    assert capsys.readouterr().err == (
        f"msrunwatch: error: {settings}: ignore: unknown rule id or category "
        "'peer-disconected'; did you mean 'peer-disconnected'?\n"
    )
    settings.unlink()
    assert main(["check", str(OOM), "--severity", "oom-x=warning"]) == 2
    assert "error: --severity: unknown rule id or category 'oom-x'" in capsys.readouterr().err


def test_an_empty_standard_input_is_named_stdin(capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import sys

    for command in ("triage", "check"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
            assert main([command, "-"]) == 2
        err = capsys.readouterr().err
        assert err == "msrunwatch: error: <stdin>: not an msrun or MindSpore log\n", err


def test_a_ci_format_asked_of_triage_names_the_command_that_writes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`triage --format sarif` (trial #34): SARIF is `check`'s, which reads the same logs;
    the error says so in its one line, exit code 2 as for any bad usage, and the command it
    names writes SARIF of this run."""
    code, err = error_of(["triage", str(OOM / "msrun_log"), "--format", "sarif"], capsys)
    last = err.rstrip().splitlines()[-1]
    assert code == 2 and err.startswith("usage: msrunwatch triage"), err
    assert last.endswith(
        "; sarif output is from `msrunwatch check` (msrunwatch check DIR --format sarif)"
    ), last
    code, err = error_of(["triage", str(OOM / "msrun_log"), "--format", "xml"], capsys)
    assert code == 2 and "msrunwatch check" not in err, err  # nobody writes xml
    assert main(["check", str(OOM / "msrun_log"), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"], sarif
