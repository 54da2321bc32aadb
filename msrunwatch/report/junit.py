"""JUnit XML: one test per rule, so Jenkins and GitLab list what was checked and what failed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from msrunwatch.core.sanitize import name
from msrunwatch.judge.model import Finding, Report
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import rank_name

SUITE = "msrunwatch"
INPUT_CASE = "every-input-read"
"""The test that fails when some input could not be read (the report's warnings)."""
MAX_EVIDENCE = 50
"""Evidence lines listed per finding: a thousand ranks must not make a megabyte of XML."""
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, not even escaped (ANSI escapes, NUL)."""


def _clean(text: str) -> str:
    """Log text made XML-safe: forbidden characters become visible `\\x1b`-style escapes."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), name(text))


def _one_line(text: str) -> str:
    """Attribute values on one line: some readers normalise newlines in attributes away."""
    return " ".join(_clean(text).split())


def _evidence(f: Finding) -> list[str]:
    """`path:line (rank N): log text` for each occurrence that has a file."""
    lines = []
    shown = [o for o in f.occurrences if o.file is not None]
    for o in shown[:MAX_EVIDENCE]:
        who = (
            rank_name(o.rank)
            if o.rank is not None
            else "config"
            if o.log_dir is None
            else "scheduler/msrun"
        )
        lines.append(f"  {fmt.where(o)} ({who}): {o.text}".rstrip())
    if len(shown) > MAX_EVIDENCE:
        lines.append(f"  ... {len(shown) - MAX_EVIDENCE} more occurrences")
    return lines


def _describe(f: Finding) -> list[str]:
    """A finding as the failure text shows it: headline, evidence, hint."""
    message = fmt.human_sizes(f.message)
    out = [f"{f.severity.value} [{f.role}] {fmt.about(f)}: {message}", *_evidence(f)]
    if f.hint:
        out.append(f"  hint: {fmt.human_sizes(f.hint)}")
    return out


def _testcase(rule_id: str, category: str, findings: Sequence[Finding]) -> ET.Element:
    """A rule's test: empty when it passed, one failure listing every finding when not."""
    case = ET.Element("testcase", classname=f"{SUITE}.{category}", name=rule_id)
    if findings:
        failure = ET.SubElement(
            case,
            "failure",
            message=_one_line(fmt.human_sizes(findings[0].message)),
            type=findings[0].severity.value,
        )
        failure.text = _clean("\n".join(line for f in findings for line in _describe(f)))
    return case


def _unique(rules: Sequence[Rule]) -> list[Rule]:
    """The first rule of each id: GitLab keys tests on classname and name, so no repeats."""
    seen: dict[str, Rule] = {}
    for r in rules:
        seen.setdefault(r.id, r)
    return list(seen.values())


def _cases(report: Report, rules: Sequence[Rule]) -> list[ET.Element]:
    """One test per rule given, plus one per finding rule not given, so no failure is lost."""
    by_rule: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_rule.setdefault(f.rule, []).append(f)
    cases = [_testcase(r.id, r.category, by_rule.pop(r.id, [])) for r in _unique(rules)]
    cases += [_testcase(rid, found[0].category, found) for rid, found in by_rule.items()]
    return cases


def _counts(element: ET.Element, tests: int, failures: int) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(failures))
    element.set("errors", "0")
    element.set("skipped", "0")


def _input_case(warnings: Sequence[str]) -> ET.Element:
    """A failing test for what could not be read, so a partial read is never all green."""
    case = ET.Element("testcase", classname=f"{SUITE}.input", name=INPUT_CASE)
    failure = ET.SubElement(case, "failure", message=_one_line(warnings[0]), type="warning")
    failure.text = _clean("\n".join(warnings))
    return case


def render(report: Report, rules: Sequence[Rule]) -> str:
    """The JUnit XML document, with its declaration."""
    cases = _cases(report, rules)
    if report.warnings:
        cases.append(_input_case(report.warnings))
    failures = sum(1 for c in cases if c.find("failure") is not None)
    root = ET.Element("testsuites", name=SUITE)
    _counts(root, len(cases), failures)
    suite = ET.SubElement(root, "testsuite", name=SUITE)
    _counts(suite, len(cases), failures)
    suite.extend(cases)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
