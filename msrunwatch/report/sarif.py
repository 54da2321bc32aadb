"""SARIF 2.1.0: findings as code-scanning alerts (GitHub code scanning, Azure DevOps, IDEs)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import msrunwatch
from msrunwatch.core.sanitize import json_document
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.vocab import Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/msrunwatch/msrunwatch"
MAX_LOCATIONS = 1000
"""SARIF consumers (GitHub) reject results with more locations than this."""
FINGERPRINT_KEY = "msrunwatch/v1"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_DRIVE = re.compile(r"^[A-Za-z]:/")


def _uri(path: str) -> str:
    """A path as a URI reference: forward slashes, percent-encoded, file:// when absolute.
    The name's own bytes are encoded (`%D7%F7` for a GBK name that is not UTF-8)."""
    path = path.replace("\\", "/")
    raw = path.encode("utf-8", "surrogateescape")
    if path.startswith("/"):
        return "file://" + quote(raw, safe="/:")
    if _DRIVE.match(path):
        return "file:///" + quote(raw, safe="/:")
    # `:` stays encoded so a relative path's first segment never reads as a URI scheme.
    return quote(raw, safe="/")


def _camel(rule_id: str) -> str:
    """`oom-memory-not-enough` → `OomMemoryNotEnough`: SARIF wants an identifier-like name."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", rule_id))


def _descriptor(rule: Rule) -> dict[str, Any]:
    """A rule's metadata, so viewers can show its title, doc and hint next to each alert."""
    out: dict[str, Any] = {
        "id": rule.id,
        "name": _camel(rule.id),
        "shortDescription": {"text": rule.title},
    }
    if rule.doc:
        out["fullDescription"] = {"text": rule.doc}
    if rule.hint:
        out["help"] = {"text": rule.hint}
    out["defaultConfiguration"] = {"level": LEVEL[rule.counts_as]}
    out["properties"] = {
        "category": rule.category,
        "tags": sorted(set(rule.tags)),
        "references": list(rule.references),
    }
    return out


def _stand_in(f: Finding) -> Rule:
    """A rule rebuilt from a finding whose rule was not passed in, so its ruleIndex resolves."""
    return Rule(
        id=f.rule,
        title=f.title,
        category=f.category,
        severity=f.severity,
        scope=Scope.RUN,
        message=f.message,
        hint=f.hint,
    )


def _rules_used(report: Report, rules: Sequence[Rule]) -> list[Rule]:
    """The rules with at least one finding, in the order given (unknown ones last)."""
    fired = {f.rule for f in report.findings}
    used = [r for r in rules if r.id in fired]
    known = {r.id for r in used}
    for f in report.findings:
        if f.rule not in known:
            known.add(f.rule)
            used.append(_stand_in(f))
    return used


def _message(f: Finding) -> str:
    """The finding's message in human units (code scanning shows this text, as the other
    formats show `64.0 GiB`), naming its ranks when there are several."""
    said = fmt.human_sizes(f.message)
    if len(f.ranks) > 1:
        return f"{said} ({fmt.ranks_text(f.ranks)})"
    return said


def _location(path: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _occurrence_path(o: Occurrence) -> str | None:
    """`log_dir/file` as the user would open it, or None for an occurrence without a file."""
    if o.file is None:
        return None
    return fmt.where_path(o.log_dir, o.file, None)


def _locations(f: Finding, report: Report) -> list[dict[str, Any]]:
    """Every occurrence that has a file; a run-level finding points at the log directory."""
    out = []
    for o in f.occurrences:
        path = _occurrence_path(o)
        if path is not None:
            out.append(_location(path, o.line))
            if len(out) == MAX_LOCATIONS:
                break
    if not out:
        out.append(_location(report.log_dirs[0] if report.log_dirs else ".", None))
    return out


def _fingerprint(f: Finding) -> str:
    """Stable across runs of the same logs: rule and message shape, never times."""
    return hashlib.sha256(f"{f.rule}\0{f.fingerprint or f.message}".encode()).hexdigest()


def _result(f: Finding, index: int, report: Report) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": _message(f)},
        "locations": _locations(f, report),
        "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(f)},
        "properties": {
            "category": f.category,
            "role": f.role,
            "ranks": list(f.ranks),
            "count": f.count,
        },
    }


def _invocation(report: Report) -> dict[str, Any]:
    """Problems reading the logs, so a clean result set is not mistaken for a clean run: any
    input that could not be read makes the execution unsuccessful."""
    notes = [{"level": "warning", "message": {"text": w}} for w in report.warnings]
    out: dict[str, Any] = {"executionSuccessful": not notes}
    if notes:
        out["toolExecutionNotifications"] = notes
    return out


def _log(report: Report, rules: Sequence[Rule]) -> dict[str, Any]:
    """The SARIF log as plain data."""
    used = _rules_used(report, rules)
    index = {r.id: i for i, r in enumerate(used)}
    driver = {
        "name": "msrunwatch",
        "version": msrunwatch.__version__,
        "informationUri": INFORMATION_URI,
        "rules": [_descriptor(r) for r in used],
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [_invocation(report)],
        "results": [_result(f, index[f.rule], report) for f in report.findings],
        "properties": {"outcome": report.outcome, "logDirs": list(report.log_dirs)},
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render(report: Report, rules: Sequence[Rule]) -> str:
    """The SARIF log text."""
    return json_document(json.dumps(_log(report, rules), indent=2, ensure_ascii=False)) + "\n"
