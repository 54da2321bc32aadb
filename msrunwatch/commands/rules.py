"""`msrunwatch rules list|show|check|vars`: read, explain, validate and test rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from msrunwatch.commands.common import rule_options, rules_of, write
from msrunwatch.core.errors import UsageError
from msrunwatch.core.exit_codes import ExitCode


def cmd_rules_list(args: argparse.Namespace) -> int:
    """Print id, scope, category, severity and title of every rule (or the Markdown index)."""
    from msrunwatch.report import ruledoc
    from msrunwatch.rules.loader import builtin_rules_dir

    rules = [r for r in rules_of(args) if not args.scope or r.scope.value in args.scope]
    if args.format == "markdown":
        write(ruledoc.markdown_index(rules, builtin_rules_dir().resolve()), args.output)
    else:
        write(ruledoc.table(rules), args.output)
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
    write(ruledoc.page(rule, cases), None)
    return ExitCode.OK


def cmd_rules_check(args: argparse.Namespace) -> int:
    """Validate rule files and run their cases; --strict also wants both kinds of case."""
    from msrunwatch.drivers import rulecases as rulecheck
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
    warnings = rulecheck.strict_warnings(checked) if args.strict else []
    for problem in [*strict, *warnings]:
        print(problem)
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


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser("rules", help="list, explain and test rules")
    rules_sub = p.add_subparsers(dest="rules_command", metavar="COMMAND")
    listing = rules_sub.add_parser(
        "list", help="id, scope, category, severity and title of every rule"
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
    listing.add_argument("--output", "-o", metavar="FILE", help="write it here")
    rule_options(listing)
    listing.set_defaults(handler=cmd_rules_list)
    show = rules_sub.add_parser("show", help="one rule's doc, hint, references and cases")
    show.add_argument("id", metavar="ID", help="rule id (or a former id)")
    rule_options(show)
    show.set_defaults(handler=cmd_rules_show)
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
