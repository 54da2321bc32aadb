"""A checked facts record back into the read layer's types (the inverse of encode).

Records reach here only once the schema's check passed, so every field has its type and
range; what is absent takes FileFacts' own default (an older writer, or a lean one).
"""

from __future__ import annotations

from typing import Any

from msrunwatch.read.cluster import Group, Handshake
from msrunwatch.read.facts import (
    CompileStats,
    FileFacts,
    FileRole,
    Hit,
    MemorySummary,
    Progress,
    Registration,
    WorkerExit,
)

_LOSS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _pairs(values: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in values)


def hit(d: dict[str, Any]) -> Hit:
    return Hit(
        rule=d["rule"],
        line=int(d["line"]),
        offset=int(d.get("offset", 0)),
        time=_float(d["time"]),
        time_exact=d.get("time_exact", d["time"] is not None),
        message=d["message"],
        fingerprint=d["fingerprint"],
        captures=_pairs(d.get("captures", ())),
        text=d.get("text", ""),
        count=int(d.get("count", 1)),
        subject=d.get("subject"),
        overrides=_pairs(d.get("overrides", ())),
    )


def _memory(d: dict[str, Any] | None) -> MemorySummary | None:
    if d is None:
        return None
    return MemorySummary(
        device_mb=_int(d.get("device_mb")),
        used_mb=_int(d.get("used_mb")),
        base_address=d.get("base_address"),
        peak_used_mb=_int(d.get("peak_used_mb")),
        peak_actual_mb=_int(d.get("peak_actual_mb")),
        line=int(d["line"]),
        time=_float(d.get("time")),
    )


def _compile(d: dict[str, Any] | None) -> CompileStats:
    if not d:
        return CompileStats()
    return CompileStats(
        count=int(d.get("count", 0)),
        total_ms=float(d.get("total_ms") or 0.0),
        started=int(d.get("started", 0)),
        stages=tuple((stage, float(ms)) for stage, ms in d.get("stages", ())),
        first_start=_float(d.get("first_start")),
        last_end=_float(d.get("last_end")),
        end_line=_int(d.get("end_line")),
    )


def _progress(d: dict[str, Any] | None) -> Progress | None:
    if d is None:
        return None
    loss = d.get("loss")
    return Progress(
        step=int(d["step"]),
        epoch=_int(d.get("epoch")),
        loss=_LOSS[loss] if isinstance(loss, str) else _float(loss),
        step_time_ms=_float(d.get("step_time_ms")),
        line=int(d.get("line", 0)),
        time=_float(d.get("time")),
        lines=int(d.get("lines", 0)),
        cadence_s=_float(d.get("cadence_s")),
    )


def _exit(d: dict[str, Any]) -> WorkerExit:
    return WorkerExit(int(d["pid"]), _int(d.get("code")), int(d["line"]), _float(d.get("time")))


def _handshake(d: dict[str, Any] | None) -> Handshake | None:
    if d is None:
        return None
    return Handshake(_float(d.get("connect")), _float(d.get("done")))


def file_facts(d: dict[str, Any], host: str | None) -> FileFacts:
    """One file's facts, without hits beyond those inline, its table or its groups."""
    fault = d.get("last_fault")
    return FileFacts(
        path=d["path"],
        log_dir=d["log_dir"],
        role=FileRole(d["role"]),
        size=int(d.get("size", 0)),
        lines=int(d.get("lines", 0)),
        rank_from_name=_int(d.get("rank_from_name")),
        rank_from_log=_int(d.get("rank_from_log")),
        node_id=d.get("node_id"),
        world_size=_int(d.get("world_size")),
        sim_level=_int(d.get("sim_level")),
        pid=_int(d.get("pid")),
        first_time=_float(d.get("first_time")),
        last_time=_float(d.get("last_time")),
        memory=_memory(d.get("memory")),
        compile=_compile(d.get("compile")),
        progress=_progress(d.get("progress")),
        finished_line=_int(d.get("finished_line")),
        training_started=d.get("training_started", False),
        pipeline_stages=_int(d.get("pipeline_stages")),
        meta_connect_failures=int(d.get("meta_connect_failures", 0)),
        meta_server_url=d.get("meta_server_url"),
        last_fault=None if fault is None else (int(fault[0]), fault[1]),
        hits=tuple(hit(h) for h in d.get("hits", ())),
        unregistered_nodes=tuple(d.get("unregistered_nodes", ())),
        worker_starts=tuple((int(r), p) for r, p in d.get("worker_starts", ())),
        worker_exits=tuple(_exit(e) for e in d.get("worker_exits", ())),
        kill_all_time=_float(d.get("kill_all_time")),
        all_workers_ok=d.get("all_workers_ok", False),
        scheduler_gave_up_time=_float(d.get("scheduler_gave_up_time")),
        terminate_all_time=_float(d.get("terminate_all_time")),
        error=d.get("error"),
        encodings=tuple((name, int(count)) for name, count in d.get("encodings", ())),
        warnings=tuple(d.get("warnings", ())),
        host=host,
        handshake=_handshake(d.get("handshake")),
    )


def registration(d: dict[str, Any]) -> Registration:
    return Registration(
        node=d["node"],
        rank=int(d["rank"]),
        host=d["host"],
        expected=int(d["expected"]),
        device=_int(d.get("device")),
        ip=d.get("ip"),
        time=_float(d.get("time")),
    )


def timed_out(items: list[dict[str, Any]]) -> tuple[tuple[str, float | None], ...]:
    return tuple((d["node"], _float(d.get("time"))) for d in items)


def group(d: dict[str, Any]) -> Group:
    return Group(d["name"], tuple((int(a), int(b)) for a, b in d["members"]))


def group_refs(d: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The [name, digest] of each group a file's rank joined."""
    return tuple((name, digest) for name, digest in d.get("groups", ()))
