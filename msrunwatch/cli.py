"""Command line: triage, check, rules; every subcommand is a function returning an exit code.

Heavy modules are imported inside the subcommand that needs them, so `check` and
`rules check` start fast in CI and never import the TUI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from msrunwatch import __version__
from msrunwatch.config.lint import ConfigUnsupported
from msrunwatch.discover import DiscoveryError
from msrunwatch.exit_codes import ExitCode
from msrunwatch.rules.loader import RuleError
from msrunwatch.settings import Settings, SettingsError

PROGRESS_BYTES = 256 << 20
"""Show reading progress on a terminal when the input is larger than this."""


class UsageError(Exception):
    """Bad input the user can fix; printed as one line, exit code 2."""


def _progress_printer(stream: Any) -> Callable[[int, int, int, int], None] | None:
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


def _color(choice: str, stream: Any) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _write(text: str, output: str | None) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None


def _settings(args: argparse.Namespace) -> Settings:
    from msrunwatch import settings

    base = settings.read_file(Path(args.settings)) if args.settings else settings.find(Path.cwd())
    return settings.merge(
        base,
        args.rules or (),
        args.select or (),
        args.ignore or (),
        args.severity or (),
        getattr(args, "fail_on", None),
    )


def _rules(args: argparse.Namespace) -> list[Any]:
    from msrunwatch.settings import rule_set

    return rule_set(_settings(args))


def cmd_triage(args: argparse.Namespace) -> int:
    """Read a finished (or running) run's logs and print the verdict."""
    from msrunwatch.report import jsonout, markdown, text
    from msrunwatch.triage import triage

    rules = _rules(args)
    if args.config:
        from msrunwatch.config.lint import read_all
        from msrunwatch.config.observed import triage_with_config

        configs = read_all(args.config, args.msrun)
        report = triage_with_config(args.dirs, rules, configs, args.console or (), args.devices)
    else:
        report = triage(args.dirs, rules, args.console or (), _progress_printer(sys.stderr))
    if args.format == "json":
        out = jsonout.render(report)
    elif args.format == "markdown":
        out = markdown.render(report, show_all=args.all_ranks)
    else:
        color = args.output is None and _color(args.color, sys.stdout)
        out = text.render(report, color=color, show_all=args.all_ranks)
    _write(out, args.output)
    return ExitCode.FINDINGS if report.has_errors else ExitCode.OK


def _fails(report: Any, fail_on: str) -> bool:
    from msrunwatch.model import Severity

    if fail_on == "never":
        return False
    floor = Severity(fail_on).rank
    return any(f.severity.rank >= floor for f in report.findings)


def cmd_check(args: argparse.Namespace) -> int:
    """Lint logs (and configs) for CI: findings in CI formats, exit 1 at --fail-on."""
    from msrunwatch.check import check_targets, render
    from msrunwatch.settings import rule_set

    settings = _settings(args)
    rules = rule_set(settings)
    report = check_targets(args.targets, rules, args)
    _write(render(report, rules, args.format), args.output)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.format == "github" and summary:
        from msrunwatch.report import github

        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(github.summary(report, rules))
    return ExitCode.FINDINGS if _fails(report, settings.fail_on) else ExitCode.OK


def cmd_estimate(args: argparse.Namespace) -> int:
    """Estimate each pipeline stage's device memory from training configs."""
    import json

    from msrunwatch.config.derive import with_world
    from msrunwatch.config.lint import read_all
    from msrunwatch.config.memory import estimate
    from msrunwatch.report import estimate as render

    estimates = [estimate(with_world(c, args.devices)) for c in read_all(args.configs, args.msrun)]
    if args.format == "json":
        out = json.dumps([render.to_dict(e) for e in estimates], indent=2) + "\n"
    else:
        out = "\n".join(render.render_text(e) for e in estimates)
    _write(out, args.output)
    over = any(s.verdict == "over" for e in estimates for s in e.stages)
    return ExitCode.FINDINGS if over else ExitCode.OK


def cmd_rules_list(args: argparse.Namespace) -> int:
    """Print id, category, severity and title of every rule."""
    rules = sorted(_rules(args), key=lambda r: (r.scope.value != "line", r.category, r.id))
    width = max((len(r.id) for r in rules), default=10)
    lines = [f"{'ID'.ljust(width)}  {'SCOPE':6}{'CATEGORY':24}{'SEVERITY':9}TITLE"]
    lines += [
        f"{r.id.ljust(width)}  {r.scope.value:6}{r.category:24}{r.severity.value:9}{r.title}"
        for r in rules
    ]
    _write("\n".join(lines) + "\n", None)
    return ExitCode.OK


def cmd_rules_check(args: argparse.Namespace) -> int:
    """Validate rule files and run their cases; --strict also wants both kinds of case."""
    from msrunwatch import rulecheck
    from msrunwatch.rules.loader import builtin_rules_dir, check_files, load_rules

    paths = [Path(p) for p in args.paths] or [builtin_rules_dir()]
    checked, errors = check_files(paths)
    base = {r.id: r for r in load_rules(None)}
    everything = list({**base, **{r.id: r for r in checked}}.values())
    cases, case_errors = rulecheck.all_cases(checked)
    errors += case_errors
    for error in errors:
        print(error, file=sys.stderr)
    results = [rulecheck.run_case(c, everything) for c in cases]
    failed = [r for r in results if not r.ok]
    for result in failed:
        print(f"{result.case.path}:{result.case.line}: FAIL {result.case.id}")
        for problem in result.problems:
            print(f"    {problem}")
    strict = rulecheck.strict_problems(checked, cases) if args.strict else []
    for problem in strict:
        print(problem)
    print(
        f"{len(checked)} rules, {len(cases)} cases: {len(results) - len(failed)} passed, "
        f"{len(failed)} failed"
        + (f", {len(strict)} strict problems" if args.strict else "")
        + (f", {len(errors)} invalid files" if errors else "")
    )
    if errors:
        return ExitCode.USAGE
    return ExitCode.FINDINGS if failed or strict else ExitCode.OK


def cmd_rules_vars(args: argparse.Namespace) -> int:
    """Print the variables each scope's conditions can use."""
    from msrunwatch.rules import variables

    out = []
    for scope, table in variables.SCOPES.items():
        if not table:
            continue
        out.append(f"{scope}:")
        out += [f"  {name:30} {doc}" for name, doc in table.items()]
    _write("\n".join(out) + "\n", None)
    return ExitCode.OK


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a run live: the terminal UI, or JSON events and metrics with --headless."""
    from msrunwatch.live import observer
    from msrunwatch.live.run import LiveRun

    for target in args.dirs:
        if not Path(target).exists():
            raise UsageError(f"{target}: no such file or directory")
    live = LiveRun(args.dirs, _rules(args), args.console or (), stall_after_s=args.stall_after)
    watcher = observer.start(args.dirs, live.dirty, poll=args.poll)
    try:
        if args.headless:
            from msrunwatch.live.headless import Headless

            return int(Headless(live, args).run())
        from msrunwatch.tui.app import run_tui  # type: ignore[import-not-found,unused-ignore]

        return int(run_tui(live))
    finally:
        watcher.stop()
        live.close()


def _rule_options(parser: argparse.ArgumentParser) -> None:
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


def _add_triage(sub: Any) -> None:
    p = sub.add_parser(
        "triage",
        help="say which rank failed first and why, from a run's logs",
        description="Read msrun logs (a --log_dir, several node directories, glog files or one "
        "file) and report the root cause, each rank's status, memory, compile time and progress.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="msrun log directory or log file")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    p.add_argument(
        "--console",
        action="append",
        metavar="FILE",
        help="msrun's saved console output (exit codes, signals); repeatable",
    )
    p.add_argument("--all-ranks", action="store_true", help="list every rank in the table")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument(
        "--config",
        action="append",
        metavar="FILE",
        help="the run's training config (MindFormers YAML or launch script): pipeline "
        "stages, memory budget, and each rank's peak beside the estimate",
    )
    p.add_argument("--devices", type=int, metavar="N", help="card count, with --config")
    p.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line, with --config")
    _rule_options(p)
    p.set_defaults(handler=cmd_triage)


def _add_check(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="lint logs or training configs for CI (SARIF, JUnit, GitHub, GitLab)",
        description="Run the rules over log directories and config files; exit 1 when a finding "
        "reaches --fail-on.",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET", help="log directory, log or config file")
    p.add_argument(
        "--format", choices=("text", "json", "sarif", "junit", "github", "gitlab"), default="text"
    )
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default=None,
        help="lowest severity that fails the check (default: error)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    p.add_argument("--console", action="append", metavar="FILE", help="msrun's console output")
    p.add_argument(
        "--devices",
        "--worker-num",
        type=int,
        metavar="N",
        dest="devices",
        help="card count, when the config does not say",
    )
    p.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line of the job")
    _rule_options(p)
    p.set_defaults(handler=cmd_check)


def _add_watch(sub: Any) -> None:
    p = sub.add_parser(
        "watch",
        help="follow a run live (also: `msrunwatch DIR`); --headless for clusters",
        description="Follow msrun logs as they grow: a live view of every rank, or with "
        "--headless JSON events and Prometheus metrics. Never writes into the log directory.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="msrun log directory or log file")
    p.add_argument("--console", action="append", metavar="FILE", help="msrun's console output")
    p.add_argument(
        "--poll",
        action="store_true",
        help="poll for changes (NFS, Lustre, GPFS: where inotify misses other hosts)",
    )
    p.add_argument(
        "--stall-after",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="a rank silent this long (and for 10 of its steps) while others write "
        "is stalled (default 120)",
    )
    p.add_argument("--headless", action="store_true", help="no terminal UI: JSON lines events")
    p.add_argument("--events", metavar="FILE", help="headless: write events here (default stdout)")
    p.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="headless: serve Prometheus metrics on this port",
    )
    p.add_argument(
        "--metrics-addr",
        default="0.0.0.0",
        metavar="ADDR",
        help="headless: address for the metrics server (default 0.0.0.0)",
    )
    p.add_argument(
        "--on-finding",
        metavar="CMD",
        help="headless: run CMD (via the shell) for each new error finding, with its JSON on stdin",
    )
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="headless: exit with triage's exit code once every rank ended",
    )
    _rule_options(p)
    p.set_defaults(handler=cmd_watch)


def _add_estimate(sub: Any) -> None:
    p = sub.add_parser(
        "estimate",
        help="estimate each pipeline stage's device memory from a training config",
        description="Model states, activations (recompute, TP/SP, flash attention, GQA, SwiGLU), "
        "in-flight micro-batches and the last stage's logits, per pipeline stage, against the "
        "usable device memory; every assumption is printed. Exit 1 when a stage will not fit.",
    )
    p.add_argument("configs", nargs="+", metavar="CONFIG", help="MindFormers YAML or launch script")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--devices",
        "--worker-num",
        type=int,
        metavar="N",
        dest="devices",
        help="card count, when the config does not say",
    )
    p.add_argument("--msrun", metavar="CMDLINE", help="the msrun command line of the job")
    p.add_argument("--output", "-o", metavar="FILE", help="write the estimate here")
    p.set_defaults(handler=cmd_estimate)


def _add_rules(sub: Any) -> None:
    p = sub.add_parser("rules", help="list, explain and test rules")
    rules_sub = p.add_subparsers(dest="rules_command", metavar="COMMAND")
    listing = rules_sub.add_parser("list", help="id, category, severity and title of every rule")
    _rule_options(listing)
    listing.set_defaults(handler=cmd_rules_list)
    check = rules_sub.add_parser("check", help="validate rule files and run their cases")
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="rule files or directories (default: the built-in rules)",
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="also fail a rule without a firing case or a non-firing case",
    )
    check.set_defaults(handler=cmd_rules_check)
    variables = rules_sub.add_parser("vars", help="the variables rule conditions can use")
    variables.set_defaults(handler=cmd_rules_vars)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="msrunwatch",
        description="Triage, lint and watch MindSpore msrun logs.",
    )
    parser.add_argument("--version", action="version", version=f"msrunwatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_triage(sub)
    _add_watch(sub)
    _add_check(sub)
    _add_estimate(sub)
    _add_rules(sub)
    return parser


COMMANDS = ("triage", "watch", "check", "rules", "estimate", "-h", "--help", "--version")


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
    except (UsageError, DiscoveryError, RuleError, SettingsError, ConfigUnsupported) as exc:
        print(f"msrunwatch: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("msrunwatch: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
