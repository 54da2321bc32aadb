"""`msrunwatch rules list|show|check|vars`: list, read, validate and test rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from msrunwatch.commands.common import (
    DIRECTORY,
    RULE_ID,
    add_command,
    rule_options,
    rules_of,
    verbose,
    write,
)
from msrunwatch.core.errors import UsageError
from msrunwatch.core.exit_codes import ExitCode


def cmd_rules_list(args: argparse.Namespace) -> int:
    """Print id, scope, category, severity and title of every rule (or the Markdown index)."""
    from msrunwatch.report import ruledoc
    from msrunwatch.rules.loader import builtin_rules_dir

    rules = [r for r in rules_of(args) if not args.scope or r.scope.value in args.scope]
    if args.format == "markdown":
        write(shown(ruledoc.markdown_index(rules, builtin_rules_dir().resolve())), args.output)
    else:
        write(shown(ruledoc.table(rules)), args.output)
    return ExitCode.OK


def cmd_rules_show(args: argparse.Namespace) -> int:
    """Print one rule's doc, hint, references and cases (by id or former id)."""
    from msrunwatch.drivers.rulecases import cases_file, load_cases
    from msrunwatch.report import ruledoc

    rules = rules_of(args)
    rule = next((r for r in rules if args.id in (r.id, *r.aliases)), None)
    if rule is None:
        import difflib

        close = difflib.get_close_matches(args.id, [r.id for r in rules], n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise UsageError(f"no rule {args.id!r}{hint}")
    path = cases_file(rule)
    cases = [(c.name, c.fires) for c in load_cases(path)] if path.exists() else []
    write(shown(ruledoc.page(rule, cases)), None)
    return ExitCode.OK


def cmd_rules_check(args: argparse.Namespace) -> int:
    """Validate rule files and run their cases; --strict also wants both kinds of case."""
    from msrunwatch.drivers import rulecases as rulecheck
    from msrunwatch.rules.loader import builtin_rules_dir, check_files, load_rules

    paths = [Path(p) for p in args.paths] or [builtin_rules_dir()]
    checked, errors = check_files(paths)
    base = {r.id: r for r in load_rules(None)}
    everything = list({**base, **{r.id: r for r in checked}}.values())
    verbose(
        args,
        f"settings: none read; rules: {len(checked)} checked from "
        f"{', '.join(str(p) for p in paths)}, their cases run with the {len(base)} built-in",
    )
    cases, case_errors = rulecheck.all_cases(checked)
    errors += case_errors
    for error in errors:
        print(shown(str(error)), file=sys.stderr)
    results = [rulecheck.run_case(c, everything) for c in cases]
    failed = [r for r in results if not r.ok]
    for result in failed:
        print(shown(f"{result.case.path}:{result.case.line}: FAIL {result.case.id}"))
        for problem in result.problems:
            print(shown(f"    {problem}"))
    strict = rulecheck.strict_problems(checked, cases) if args.strict else []
    warnings = rulecheck.strict_warnings(checked) if args.strict else []
    for problem in [*strict, *warnings]:
        print(shown(problem))
    print(
        f"{len(checked)} rules, {len(cases)} cases: {len(results) - len(failed)} passed, "
        f"{len(failed)} failed"
        + (f", {len(strict)} strict problems" if args.strict else "")
        + (f", {len(warnings)} warnings" if warnings else "")
        + (f", {len(errors)} invalid files" if errors else "")
    )
    if errors:
        return ExitCode.USAGE
    return ExitCode.FINDINGS if failed or strict else ExitCode.OK


def shown(text: str) -> str:
    """User rules and cases are hostile text: their controls shown as escapes, lines kept."""
    from msrunwatch.core.sanitize import terminal

    return terminal(text, newlines=True)


def cmd_rules_vars(args: argparse.Namespace) -> int:
    """Print the variables each scope's conditions can use."""
    from msrunwatch.rules import variables

    out = []
    for scope, table in variables.SCOPES.items():
        if not table:
            continue
        out.append(f"{scope}:")
        out += [f"  {name:30} {doc}" for name, doc in table.items()]
    write("\n".join(out) + "\n", None)
    return ExitCode.OK


RULE_EXITS = "exit codes:\n  0  done\n  2  bad usage, or an unknown or invalid rule"


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = add_command(
        sub,
        "rules",
        "list, show and test rules",
        "The rules msrunwatch runs: list them, read one, validate and test rule files.",
        (
            "msrunwatch rules list --scope line",
            "msrunwatch rules show oom-memory-not-enough",
            "msrunwatch rules check my-rules/ --strict",
            "msrunwatch rules vars",
        ),
        RULE_EXITS,
    )
    rules_sub = p.add_subparsers(dest="rules_command", metavar="COMMAND")
    _add_list(rules_sub)
    _add_show(rules_sub)
    _add_check(rules_sub)
    variables = add_command(
        rules_sub,
        "vars",
        "the variables rule conditions can use",
        "The variables each scope's `when:` conditions can use, with what each one means.",
        ("msrunwatch rules vars",),
        RULE_EXITS,
    )
    variables.set_defaults(handler=cmd_rules_vars)


def _add_list(rules_sub: Any) -> None:
    listing = add_command(
        rules_sub,
        "list",
        "id, scope, category, severity and title of every rule",
        "Every rule the settings select, one line each (or the Markdown index of docs/rules.md).",
        ("msrunwatch rules list", "msrunwatch rules list --scope rank --scope run"),
        RULE_EXITS,
    )
    listing.add_argument(
        "--scope",
        action="append",
        choices=("line", "rank", "run", "config"),
        help="only rules of this scope (repeatable)",
    )
    listing.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text: an aligned table; markdown: the index in docs/rules.md",
    )
    listing.add_argument("--output", "-o", metavar="FILE", help="write it here (- stdout)")
    rule_options(listing)
    listing.set_defaults(handler=cmd_rules_list)


def _add_show(rules_sub: Any) -> None:
    show = add_command(
        rules_sub,
        "show",
        "one rule's doc, hint, references and cases",
        "One rule in full: what it matches, why it matters, what to do, where the message "
        "comes from upstream, and its test cases.",
        ("msrunwatch rules show oom-memory-not-enough", "msrunwatch rules show cann-ei0006"),
        RULE_EXITS,
    )
    rule_id = show.add_argument("id", metavar="ID", help="rule id (or a former id)")
    rule_id.complete = RULE_ID  # type: ignore[attr-defined]
    rule_options(show)
    show.set_defaults(handler=cmd_rules_show)


def _add_check(rules_sub: Any) -> None:
    check = add_command(
        rules_sub,
        "check",
        "validate rule files and run their cases",
        "Validate rule files against the schema and run each rule's cases through the same "
        "pipeline as triage.",
        ("msrunwatch rules check rules/ --strict", "msrunwatch rules check my-rules/"),
        "exit codes:\n  0  every rule valid, every case passed\n  1  a case failed (or, "
        "with --strict, a rule lacks a firing or a non-firing case)\n  2  an invalid rule file",
    )
    paths = check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="rule files or directories (default: the built-in rules)",
    )
    paths.complete = DIRECTORY  # type: ignore[attr-defined]
    check.add_argument(
        "--strict",
        action="store_true",
        help="also fail a rule without a firing case or a non-firing case",
    )
    check.set_defaults(handler=cmd_rules_check)
