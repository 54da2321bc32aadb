"""Rule test cases: `<id>.cases.yaml` beside each rule, run through the triage pipeline.

`msrunwatch rules check` and pytest (tests/test_rule_cases.py) both call `run_case`, so a
rule author and CI see the same result. A case writes its log files into a temporary
directory and triages it exactly as a user would, then compares this rule's findings
with the expectations.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from msrunwatch.core.errors import RuleError, YamlError
from msrunwatch.core.yamlload import Positions, load
from msrunwatch.drivers.configs import (
    lint_configs,
    read_all,
    triage_with_config,
    with_file_names,
)
from msrunwatch.drivers.options import Launch
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.config.context import context_for
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Finding, Report
from msrunwatch.read.timestamps import parse_iso
from msrunwatch.rules.loader import CASES_SUFFIX, MAX_CASES_BYTES, read_text
from msrunwatch.rules.model import Rule
from msrunwatch.rules.patterncheck import pattern_warnings
from msrunwatch.schemas import files

Runner = Callable[[Path, "Case", Sequence[Rule]], Report]
"""Triage for a case directory; config cases get a runner from the config linter."""


@dataclass(frozen=True)
class Case:
    """One named case of one rule."""

    rule: str
    name: str
    path: Path
    line: int
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.name}"

    @property
    def fires(self) -> bool:
        """Does the case expect the rule to fire?"""
        return bool(self.data["expect"])


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case; problems say what differed, readably."""

    case: Case
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(files.read("cases.schema.json"))
    return schema


def cases_file(rule: Rule) -> Path:
    """Where a rule's cases live."""
    return Path(rule.path).with_name(rule.id + CASES_SUFFIX)


def _validate(path: Path, data: Any, pos: Positions) -> None:
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: pos.of(tuple(e.absolute_path)))
    if errors:
        error = errors[0]
        where = tuple(error.absolute_path)
        message = error.message
        if error.validator == "additionalProperties":
            message = message.replace("Additional properties are not allowed", "unknown key")
        if error.validator == "anyOf":
            message = "a case needs log, logs or config"
        if error.validator == "not":
            message = "a case has log or logs, not both"
        line, col = pos.of(where)
        raise RuleError(path, message, line, col)


def load_cases(path: Path) -> list[Case]:
    """Parse and validate a cases file."""
    text = read_text(path, MAX_CASES_BYTES)
    try:
        data, pos = load(text)
    except YamlError as exc:
        raise RuleError(path, f"invalid YAML: {exc}", exc.line, exc.col) from None
    _validate(path, data, pos)
    expected = path.name[: -len(CASES_SUFFIX)]
    if data["rule"] != expected:
        line, col = pos.of(("rule",))
        raise RuleError(path, f"rule must be {expected!r}, the file's name", line, col)
    return [
        Case(data["rule"], name, path, pos.of(("cases", name), key=True)[0], case)
        for name, case in data["cases"].items()
    ]


CONFIG_DIR = "config"
"""Where a case's config is written, apart from its logs (so it is not read as a log)."""


def _write_case(case: Case, directory: Path) -> None:
    files = dict(case.data.get("logs") or {})
    if "log" in case.data:
        files = {"worker_0.log": case.data["log"]}
    if "config" in case.data:
        files[f"{CONFIG_DIR}/{_config_name(case)}"] = case.data["config"]
    for name, text in files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _config_name(case: Case) -> str:
    name: str = case.data.get("config_name", "config.yaml")
    return name


def _launch(case: Case) -> Launch:
    """The case's --devices / --msrun, parsed as the commands parse them."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--devices", type=int)
    parser.add_argument("--msrun")
    parser.add_argument("--framework-version")
    args = parser.parse_args(case.data.get("args", []))
    return Launch(devices=args.devices, msrun=args.msrun, framework_version=args.framework_version)


def _config_runner(directory: Path, case: Case, rules: Sequence[Rule]) -> Report:
    """A config alone: the config-scope rules."""
    path = str(directory / CONFIG_DIR / _config_name(case))
    return with_file_names(lint_configs([path], rules, _launch(case)))


def _triage_runner(directory: Path, case: Case, rules: Sequence[Rule]) -> Report:
    """Logs (and, given one, the run's config): the triage pipeline."""
    ctx = Context()
    if "silence" in case.data:  # a live-view case: the files' silences, as the watcher sees them
        quiet = {(str(directory), name): float(s) for name, s in case.data["silence"].items()}
        ctx = Context(quiet_s=quiet, stall_after_s=float(case.data.get("stall_after", 120)))
    if "now" in case.data or case.data.get("finished"):  # post mortem: --now, --finished
        now = parse_iso(str(case.data["now"])) if "now" in case.data else None
        ctx = replace(ctx, clock=now, pinned=True, finished=bool(case.data.get("finished")))
    if "config" in case.data and ctx.quiet_s is None:  # as `triage --config` runs
        launch = _launch(case)
        configs = read_all([str(directory / CONFIG_DIR / _config_name(case))], launch.msrun)
        return triage_with_config([str(directory)], rules, configs, (), launch.devices)
    if "config" in case.data:
        launch = _launch(case)
        config = read_all([str(directory / CONFIG_DIR / _config_name(case))], launch.msrun)[0]
        ctx = replace(context_for(config, launch.devices), quiet_s=ctx.quiet_s)
    return triage([str(directory)], rules, ctx=ctx)


def _order(f: Finding) -> tuple[float, str, int]:
    first = f.first
    if first is None:
        return (float("inf"), "", 0)
    return (first.time or float("inf"), first.file or "", first.line or 0)


def _compare(index: int, finding: Finding, want: dict[str, Any]) -> list[str]:
    first = finding.first
    got = {
        "ranks": list(finding.ranks),
        "file": first.file if first else None,
        "line": first.line if first else None,
        "message": finding.message,
        "role": finding.role,
        "severity": finding.severity.value,
        "count": finding.count,
    }
    problems = []
    for key, value in want.items():
        if key == "message_contains":
            if value not in finding.message:
                problems.append(f"finding {index}: message {finding.message!r} lacks {value!r}")
        elif got.get(key) != value:
            problems.append(f"finding {index}: {key} is {got.get(key)!r}, expected {value!r}")
    return problems


def _check_report(case: Case, report: Report) -> list[str]:
    mine = sorted((f for f in report.findings if case.rule in (f.rule, *f.restated_by)), key=_order)
    expect: list[dict[str, Any]] = case.data["expect"]
    problems = []
    if len(mine) != len(expect):
        fired = ", ".join(f"{f.rule} ({f.message})" for f in report.findings) or "nothing"
        problems.append(f"expected {len(expect)} finding(s), got {len(mine)}; fired: {fired}")
    for index, (finding, want) in enumerate(zip(mine, expect), 1):
        problems += _compare(index, finding, want)
    if "root_cause" in case.data:
        problems += _check_root(case.data["root_cause"], report)
    if "outcome" in case.data and report.outcome != case.data["outcome"]:
        problems.append(f"outcome is {report.outcome!r}, expected {case.data['outcome']!r}")
    return problems


def _check_root(want: dict[str, Any] | None, report: Report) -> list[str]:
    cause = report.root_cause
    if want is None:
        return [] if cause is None else [f"expected no root cause, got {cause.rule}"]
    if cause is None:
        return ["expected a root cause, got none"]
    got = {"ranks": list(cause.ranks), "category": cause.category, "rule": cause.rule}
    return [
        f"root cause {key} is {got[key]!r}, expected {value!r}"
        for key, value in want.items()
        if got[key] != value
    ]


def run_case(case: Case, rules: Sequence[Rule], runner: Runner | None = None) -> CaseResult:
    """Run one case through the pipeline and compare."""
    with tempfile.TemporaryDirectory(prefix="msrunwatch-case-") as tmp:
        directory = Path(tmp)
        _write_case(case, directory)
        try:
            report = (runner or _default_runner(case))(directory, case, rules)
        except Exception as exc:  # a case must report, not crash the whole check
            return CaseResult(case, (f"the pipeline raised {type(exc).__name__}: {exc}",))
    return CaseResult(case, tuple(_check_report(case, report)))


def _default_runner(case: Case) -> Runner:
    if "config" in case.data and "log" not in case.data and "logs" not in case.data:
        return _config_runner
    return _triage_runner


def all_cases(rules: Iterable[Rule]) -> tuple[list[Case], list[RuleError]]:
    """Every case of every rule that has a cases file, and the cases files that are invalid."""
    cases, errors = [], []
    for rule in rules:
        path = cases_file(rule)
        if not path.exists():
            continue
        try:
            cases.extend(load_cases(path))
        except RuleError as exc:
            errors.append(exc)
    return cases, errors


def strict_problems(rules: Iterable[Rule], cases: Sequence[Case]) -> list[str]:
    """Rules without a firing case or without a non-firing case."""
    problems = []
    for rule in rules:
        mine = [c for c in cases if c.rule == rule.id]
        if not any(c.fires for c in mine):
            problems.append(f"{rule.path}:1:1: {rule.id}: no case where the rule fires")
        if not any(not c.fires for c in mine):
            problems.append(f"{rule.path}:1:1: {rule.id}: no case where the rule must not fire")
    return problems


def strict_warnings(rules: Iterable[Rule]) -> list[str]:
    """What `rules check --strict` warns about without failing: patterns whose nested
    repeats can backtrack for long (matching abandons such a line and reports it)."""
    return [
        f"{rule.path}:1:1: warning: {rule.id}: {warning}"
        for rule in rules
        if rule.pattern is not None
        for warning in pattern_warnings(rule.pattern)
    ]
