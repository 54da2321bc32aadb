"""The JSON report: the stable contract scripts and later tools read (version 1)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from msrunwatch.core.compat import zip_strict
from msrunwatch.core.numbers import finite
from msrunwatch.core.sanitize import json_document
from msrunwatch.judge.model import Finding, FirstError, Occurrence, RankReport, Report, RootCause
from msrunwatch.read.facts import CompileStats, MemorySummary, Progress
from msrunwatch.read.timestamps import iso

if TYPE_CHECKING:
    from msrunwatch.read.nodefacts.merge import NodeView  # facts only: imported by them

_number = finite
"""JSON has no NaN or infinity: they become null."""


def _round(value: float | None) -> float | None:
    value = finite(value)
    return None if value is None else round(value, 1)


def memory(m: MemorySummary | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "device_mb": m.device_mb,
        "used_mb": m.used_mb,
        "peak_used_mb": m.peak_used_mb,
        "peak_actual_mb": m.peak_actual_mb,
        "base_address": m.base_address,
        "line": m.line,
    }


def compile_stats(c: CompileStats | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "count": c.count,
        "total_ms": finite(c.total_ms),
        "in_progress": c.in_progress,
        "stages": [{"stage": s, "ms": finite(ms)} for s, ms in c.stages],
    }


def progress(p: Progress | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "step": p.step,
        "loss": _number(p.loss),
        "epoch": p.epoch,
        "step_time_ms": _number(p.step_time_ms),
        "line": p.line,
        "time": iso(p.time),
    }


def first_error(e: FirstError | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {
        "category": e.category,
        "line": e.line,
        "time": iso(e.time),
        "rule": e.rule,
        "file": e.file,
    }


def rank(r: RankReport) -> dict[str, Any]:
    return {
        "rank": r.rank,
        "file": r.file,
        "log_dir": r.log_dir,
        "status": r.status.value,
        "status_reason": r.status_reason,
        "pid": r.pid,
        "host": r.host,
        "memory": memory(r.memory),
        "compile": compile_stats(r.compile),
        "progress": progress(r.progress),
        "first_error": first_error(r.first_error),
        "first_time": iso(r.first_time),
        "last_time": iso(r.last_time),
        "lines": r.lines,
        "exit_code": r.exit_code,
        "estimate": None
        if r.estimate is None
        else {
            "stage": r.estimate.stage,
            "used_mb": _round(r.estimate.used_mb),
            "actual_mb": _round(r.estimate.actual_mb),
        },
        "waiting_on": list(r.waiting_on),
    }


def occurrence(o: Occurrence) -> dict[str, Any]:
    return {
        "rank": o.rank,
        "log_dir": o.log_dir,
        "file": o.file,
        "line": o.line,
        "time": iso(o.time),
        "time_exact": o.time_exact,
        "count": o.count,
        "message": o.message,
        "text": o.text,
    }


def finding(f: Finding) -> dict[str, Any]:
    first = f.first
    return {
        "rule": f.rule,
        "category": f.category,
        "severity": f.severity.value,
        "ranks": list(f.ranks),
        "file": first.file if first else None,
        "line": first.line if first else None,
        "log_dir": first.log_dir if first else None,
        "time": iso(first.time) if first else None,
        "message": f.message,
        "role": f.role,
        "title": f.title,
        "hint": f.hint,
        "count": f.count,
        "fingerprint": f.fingerprint,
        "restated_by": list(f.restated_by),
        "cause_ranks": list(f.cause_ranks),
        "occurrences": [occurrence(o) for o in f.occurrences],
    }


def root_cause(c: RootCause | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "ranks": list(c.ranks),
        "category": c.category,
        "file": c.file,
        "line": c.line,
        "message": c.message,
        "rule": c.rule,
        "log_dir": c.log_dir,
        "time": iso(c.time),
        "time_exact": c.time_exact,
        "reason": c.reason,
    }


def _ms(seconds: float | None) -> float | None:
    value = finite(seconds)
    return None if value is None else round(value * 1000, 3)


def node(n: NodeView) -> dict[str, Any]:
    return {
        "host": n.name,
        "state": n.state,
        "why": n.why,
        "ranks": list(n.ranks),
        "clock_offset_ms": _ms(n.offset_s),
        "clock_uncertainty_ms": _ms(n.error_s),
        "clock_brackets": n.brackets,
        "clock_bracket_ms": None if n.bracket_s is None else [_ms(x) for x in n.bracket_s],
    }


def _with_clocks(report: Report, out: dict[str, Any]) -> dict[str, Any]:
    """Facts from several nodes: the nodes, and each rank's clock (fields only added)."""
    clocks = report.clocks
    for entry, r in zip_strict(out["ranks"], report.ranks):
        offset, error = clocks.get((r.log_dir or "", r.file or ""), (None, None))
        entry["clock_offset_ms"], entry["clock_uncertainty_ms"] = _ms(offset), _ms(error)
    cause = report.root_cause
    if out["root_cause"] is not None and cause is not None:
        _, error = clocks.get((cause.log_dir or "", cause.file or ""), (None, None))
        out["root_cause"]["time_uncertainty_ms"] = _ms(error)
    out["nodes"] = [node(n) for n in report.nodes]
    out["clock_reference"] = report.clock_reference
    return out


def to_dict(report: Report) -> dict[str, Any]:
    """The report as plain data, in the documented field order."""
    out = _plain(report)
    return _with_clocks(report, out) if report.nodes else out


def _plain(report: Report) -> dict[str, Any]:
    return {
        "version": report.version,
        "log_dirs": list(report.log_dirs),
        "outcome": report.outcome,
        "root_cause": root_cause(report.root_cause),
        "ranks": [rank(r) for r in report.ranks],
        "findings": [finding(f) for f in report.findings],
        "warnings": list(report.warnings),
        "files_read": report.files,
        "bytes_read": report.bytes,
    }


def render(report: Report) -> str:
    """The JSON report text."""
    text = json.dumps(to_dict(report), indent=2, ensure_ascii=False, allow_nan=False)
    return json_document(text) + "\n"
