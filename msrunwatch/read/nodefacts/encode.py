"""FileFacts as the plain data of a facts record, field by field (schema 1).

Explicit on purpose: the format is a published contract (msrunwatch/schemas/
facts.schema.json), so a field added to FileFacts reaches it only when it is written here
(and a test fails until it is: every FileFacts field is either encoded or listed as left
out). Text is cut to the schema's lengths and every cut is counted.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from msrunwatch.read.cluster import Group, Handshake
from msrunwatch.read.facts import (
    CompileStats,
    FileFacts,
    Hit,
    MemorySummary,
    Progress,
    Registration,
    WorkerExit,
)

MAX_TEXT = 4096
"""Characters of any text field (the schema's `text`)."""
MAX_NAME = 255
MAX_LIST = 4096
"""Items of a list field (exits, starts, unregistered nodes)."""
MAX_CAPTURES = 32
MAX_CAPTURE = 512
"""Characters of a capture's value: a hit stays well under one record."""
MAX_WARNINGS = 64
LEFT_OUT = frozenset({"hits", "registrations", "timed_out_nodes", "host"})
"""FileFacts fields file_facts() does not write: hits (the writer puts them inline or in
`hits` records), the scheduler's table and the nodes it timed out (in `scheduler`
records), the host (the record's).
Groups are written by name and digest, their members once in `group` records."""


class Cuts(Counter[str]):
    """What was cut, by what (the `end` record's `cut`)."""

    def text(self, value: str, limit: int = MAX_TEXT, what: str = "text") -> str:
        if len(value) <= limit:
            return value
        self[f"{what} over {limit} characters"] += 1
        return value[:limit]

    def items(self, values: list[Any], limit: int, what: str) -> list[Any]:  # type: ignore[override]
        if len(values) <= limit:
            return values
        self[what] += len(values) - limit
        return values[:limit]


def loss(value: float | None) -> float | str | None:
    """A loss that became NaN or infinite is news: kept as a word, not dropped."""
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def hit(h: Hit, cuts: Cuts) -> dict[str, Any]:
    pairs = cuts.items(list(h.captures), MAX_CAPTURES, "captures over 32 per line")
    return {
        "rule": cuts.text(h.rule, MAX_NAME, "rule id"),
        "line": h.line,
        "offset": h.offset,
        "time": h.time,
        "time_exact": h.time_exact,
        "message": cuts.text(h.message),
        "fingerprint": cuts.text(h.fingerprint),
        "captures": [[cuts.text(k, 64), cuts.text(v, MAX_CAPTURE, "capture")] for k, v in pairs],
        "text": cuts.text(h.text),
        "count": h.count,
        "subject": None if h.subject is None else cuts.text(h.subject),
        "overrides": [[cuts.text(k, 64), cuts.text(v, 1024)] for k, v in h.overrides[:16]],
    }


def _memory(m: MemorySummary | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "device_mb": m.device_mb,
        "used_mb": m.used_mb,
        "base_address": None if m.base_address is None else m.base_address[:64],
        "peak_used_mb": m.peak_used_mb,
        "peak_actual_mb": m.peak_actual_mb,
        "line": m.line,
        "time": m.time,
    }


def _compile(c: CompileStats) -> dict[str, Any]:
    return {
        "count": c.count,
        "total_ms": c.total_ms,
        "started": c.started,
        "stages": [[stage[:256], ms] for stage, ms in c.stages[:256]],
        "first_start": c.first_start,
        "last_end": c.last_end,
        "end_line": c.end_line,
    }


def _progress(p: Progress | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "step": p.step,
        "epoch": p.epoch,
        "loss": loss(p.loss),
        "step_time_ms": p.step_time_ms,
        "line": p.line,
        "time": p.time,
        "lines": p.lines,
        "cadence_s": p.cadence_s,
    }


def _exit(e: WorkerExit) -> dict[str, Any]:
    return {"pid": e.pid, "code": e.code, "line": e.line, "time": e.time}


def _handshake(h: Handshake | None) -> dict[str, Any] | None:
    return None if h is None else {"connect": h.connect, "done": h.done}


def file_facts(f: FileFacts, cuts: Cuts, digests: dict[Group, str]) -> dict[str, Any]:
    """Every field of one file's facts but its hits, its scheduler table and its host."""
    starts = cuts.items(list(f.worker_starts), MAX_LIST, "worker starts over 4,096")
    exits = cuts.items(list(f.worker_exits), MAX_LIST, "worker exits over 4,096")
    gone = cuts.items(list(f.unregistered_nodes), MAX_LIST, "unregistered nodes over 4,096")
    warnings = cuts.items(list(f.warnings), MAX_WARNINGS, "warnings over 64 per file")
    return {
        "path": cuts.text(f.path, MAX_TEXT, "path"),
        "log_dir": cuts.text(f.log_dir, MAX_TEXT, "path"),
        "role": f.role.value,
        "size": f.size,
        "lines": f.lines,
        "rank_from_name": f.rank_from_name,
        "rank_from_log": f.rank_from_log,
        "node_id": None if f.node_id is None else cuts.text(f.node_id, 256, "node id"),
        "world_size": f.world_size,
        "sim_level": f.sim_level,
        "pid": f.pid,
        "first_time": f.first_time,
        "last_time": f.last_time,
        "memory": _memory(f.memory),
        "compile": _compile(f.compile),
        "progress": _progress(f.progress),
        "finished_line": f.finished_line,
        "training_started": f.training_started,
        "pipeline_stages": f.pipeline_stages,
        "meta_connect_failures": f.meta_connect_failures,
        "meta_server_url": None if f.meta_server_url is None else cuts.text(f.meta_server_url),
        "last_fault": None
        if f.last_fault is None
        else [f.last_fault[0], cuts.text(f.last_fault[1])],
        "unregistered_nodes": [cuts.text(n) for n in gone],
        "worker_starts": [[rank, cuts.text(path)] for rank, path in starts],
        "worker_exits": [_exit(e) for e in exits],
        "kill_all_time": f.kill_all_time,
        "all_workers_ok": f.all_workers_ok,
        "scheduler_gave_up_time": f.scheduler_gave_up_time,
        "terminate_all_time": f.terminate_all_time,
        "error": None if f.error is None else cuts.text(f.error),
        "encodings": [[name[:64], count] for name, count in f.encodings[:8]],
        "warnings": [cuts.text(w) for w in warnings],
        "handshake": _handshake(f.handshake),
        "groups": [[cuts.text(g.name), digests[g]] for g in f.groups],
    }


def registration(r: Registration, cuts: Cuts) -> dict[str, Any]:
    return {
        "node": cuts.text(r.node),
        "rank": r.rank,
        "host": cuts.text(r.host),
        "expected": r.expected,
        "device": r.device,
        "ip": None if r.ip is None else r.ip[:256],
        "time": r.time,
    }


def timed_out(nodes: tuple[tuple[str, float | None], ...], cuts: Cuts) -> list[dict[str, Any]]:
    kept = cuts.items(list(nodes), MAX_LIST, "timed-out nodes over 4,096")
    return [{"node": cuts.text(node), "time": when} for node, when in kept]


SHRUNK_LIST = 64
SHRUNK_TEXT = 512


def shrunk(body: dict[str, Any], cuts: Cuts) -> dict[str, Any]:
    """A file's facts whose lists and texts were too long for one record, cut shorter."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if isinstance(value, list) and len(value) > SHRUNK_LIST:
            cuts[f"{key} over {SHRUNK_LIST} in a large file record"] += len(value) - SHRUNK_LIST
            value = value[:SHRUNK_LIST]
        if isinstance(value, list):
            value = [_short(v, cuts) for v in value]
        out[key] = _short(value, cuts)
    return out


def _short(value: Any, cuts: Cuts) -> Any:
    if isinstance(value, str):
        return cuts.text(value, SHRUNK_TEXT, "text in a large file record")
    if isinstance(value, list):
        return [_short(v, cuts) for v in value]
    if isinstance(value, dict):
        return {k: _short(v, cuts) for k, v in value.items()}
    return value
