"""`msrunwatch rules list|check|vars`: read, validate and test rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from msrunwatch.commands.common import rule_options, rules_of, write
from msrunwatch.core.exit_codes import ExitCode


def cmd_rules_list(args: argparse.Namespace) -> int:
    """Print id, category, severity and title of every rule."""
    rules = sorted(rules_of(args), key=lambda r: (r.scope.value != "line", r.category, r.id))
    width = max((len(r.id) for r in rules), default=10)
    lines = [f"{'ID'.ljust(width)}  {'SCOPE':6}{'CATEGORY':24}{'SEVERITY':9}TITLE"]
    lines += [
        f"{r.id.ljust(width)}  {r.scope.value:6}{r.category:24}{r.severity.value:9}{r.title}"
        for r in rules
    ]
    write("\n".join(lines) + "\n", None)
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
    write("\n".join(out) + "\n", None)
    return ExitCode.OK


def add(sub: Any) -> None:
    """Register the subcommand."""
    p = sub.add_parser("rules", help="list, explain and test rules")
    rules_sub = p.add_subparsers(dest="rules_command", metavar="COMMAND")
    listing = rules_sub.add_parser("list", help="id, category, severity and title of every rule")
    rule_options(listing)
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
