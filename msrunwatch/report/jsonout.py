"""The JSON report: the stable contract scripts and later tools read (version 1)."""

from __future__ import annotations

import json
from typing import Any

from msrunwatch.core.numbers import finite
from msrunwatch.core.sanitize import json_document
from msrunwatch.judge.model import Finding, FirstError, Occurrence, RankReport, Report, RootCause
from msrunwatch.read.facts import CompileStats, MemorySummary, Progress
from msrunwatch.read.timestamps import iso

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


def to_dict(report: Report) -> dict[str, Any]:
    """The report as plain data, in the documented field order."""
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
