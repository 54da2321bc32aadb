"""GitHub Actions: workflow-command annotations, and a job summary that lists every finding."""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.core.sanitize import terminal
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.report import fmt, markdown
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
SHOWN = 10
"""Annotations of each kind GitHub displays per step; the summary carries the rest."""


def _data(text: str) -> str:
    """Escape a command's message so a newline cannot end the command early, and show log
    text's control characters (escape sequences the log viewer would obey) visibly."""
    text = terminal(text, newlines=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escape a property value: `,` would start the next property and `:` end the list."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _anchor(f: Finding) -> Occurrence | None:
    """The first occurrence with a file: where the annotation points."""
    return next((o for o in f.occurrences if o.file is not None), None)


def _properties(f: Finding) -> str:
    """`file=…,line=…,title=…`, leaving out what the finding does not have."""
    props: list[tuple[str, str]] = []
    o = _anchor(f)
    if o is not None:
        props.append(("file", fmt.where_path(o.log_dir, o.file, None).replace("\\", "/")))
        if o.line is not None:
            props.append(("line", str(o.line)))
    props.append(("title", f"{f.rule}: {f.title}"))
    return ",".join(f"{key}={_property(value)}" for key, value in props)


def _annotation(f: Finding) -> str:
    """One workflow command: the finding's message and the ranks that showed it."""
    text = fmt.human_sizes(f.message)
    message = f"{text} ({fmt.ranks_text(f.ranks)})" if f.ranks else text
    return f"::{COMMAND[f.severity]} {_properties(f)}::{_data(message)}"


def render(report: Report, rules: Sequence[Rule]) -> str:
    """One annotation line per finding (the rules are unused: findings carry their titles),
    then one warning per input that could not be read."""
    out = [_annotation(f) + "\n" for f in report.findings]
    title = _property("msrunwatch: input not read")
    out.extend(f"::warning title={title}::{_data(w)}\n" for w in report.warnings)
    return "".join(out)


def _counts(report: Report) -> dict[Severity, int]:
    """Findings by severity: each becomes one annotation of that kind."""
    return {s: sum(1 for f in report.findings if f.severity is s) for s in Severity}


def _header(report: Report, rules: Sequence[Rule]) -> list[str]:
    """What was checked and found, and a note when GitHub hid some annotations."""
    counts = _counts(report)
    tally = ", ".join(f"{n} {COMMAND[s]}{'' if n == 1 else 's'}" for s, n in counts.items())
    out = [f"# msrunwatch check: {len(rules)} rules, {tally}", ""]
    if counts[Severity.ERROR] > SHOWN or counts[Severity.WARNING] > SHOWN:
        out += [
            f"_GitHub shows only {SHOWN} error and {SHOWN} warning annotations per step; "
            "every finding is listed below._",
            "",
        ]
    return out


def summary(report: Report, rules: Sequence[Rule]) -> str:
    """Markdown for $GITHUB_STEP_SUMMARY: every finding, beyond the annotations GitHub shows."""
    return "\n".join(_header(report, rules)) + "\n" + markdown.render(report)
