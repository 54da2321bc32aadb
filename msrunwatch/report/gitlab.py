"""GitLab Code Quality JSON: each rank's evidence as an issue in the merge request widget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from msrunwatch.core.sanitize import json_document
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import rank_name
from msrunwatch.rules.vocab import Severity

MAX_PER_FINDING = 50
"""Occurrences kept per finding: a thousand ranks with one fault is one problem, not 1000."""
INPUT_CHECK = "msrunwatch-input-not-read"
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _severity(f: Finding) -> str:
    """The root cause stands out as critical; the rest by the rule's severity."""
    return "critical" if f.role == "root-cause" else SEVERITY[f.severity]


def _path(o: Occurrence) -> str | None:
    """`log_dir/file` with forward slashes, or None when the occurrence has no file."""
    if o.file is None:
        return None
    return fmt.where_path(o.log_dir, o.file, None).replace("\\", "/")


def _places(f: Finding, report: Report) -> list[tuple[str, int, Occurrence | None]]:
    """Distinct (path, line) of the finding, or the first log directory for a run-level one."""
    seen: dict[tuple[str, int], Occurrence] = {}
    for o in f.occurrences:
        path = _path(o)
        if path is not None:
            seen.setdefault((path, o.line or 1), o)
            if len(seen) == MAX_PER_FINDING:
                break
    if not seen:
        return [(report.log_dirs[0] if report.log_dirs else ".", 1, None)]
    return [(path, line, o) for (path, line), o in seen.items()]


def _fingerprint(f: Finding, path: str, line: int) -> str:
    """Stable across runs (no times) and distinct per finding and place: GitLab diffs on it."""
    key = "\0".join((f.rule, f.fingerprint or f.message, path, str(line)))
    return hashlib.md5(key.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def _description(f: Finding, o: Occurrence | None) -> str:
    """The message as read at this place (each rank's own numbers), else the finding's."""
    if o is None:
        return f"{f.message} ({fmt.ranks_text(f.ranks)})" if f.ranks else f.message
    who = "" if o.rank is None else f" ({rank_name(o.rank)})"
    return (o.message or f.message) + who


def _issues(f: Finding, report: Report) -> list[dict[str, Any]]:
    return [
        {
            "description": _description(f, o),
            "check_name": f.rule,
            "fingerprint": _fingerprint(f, path, line),
            "severity": _severity(f),
            "location": {"path": path, "lines": {"begin": line}},
        }
        for path, line, o in _places(f, report)
    ]


def _input_issue(warning: str, report: Report) -> dict[str, Any]:
    """An input that could not be read, as an issue on the log directory."""
    path = report.log_dirs[0] if report.log_dirs else "."
    return {
        "description": warning,
        "check_name": INPUT_CHECK,
        "fingerprint": hashlib.md5(
            warning.encode("utf-8", "surrogateescape"), usedforsecurity=False
        ).hexdigest(),
        "severity": "minor",
        "location": {"path": path, "lines": {"begin": 1}},
    }


def render(report: Report, rules: Sequence[Rule]) -> str:
    """The Code Quality report text (the rules are unused: findings carry what GitLab shows),
    and an issue for each input that could not be read."""
    issues = [issue for f in report.findings for issue in _issues(f, report)]
    issues += [_input_issue(w, report) for w in report.warnings]
    return json_document(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"
