"""The values config rules read: what the config says, plus what follows from it.

Readers record only what a file states. Rules also need what the frameworks derive:
Megatron's data-parallel size (world / (tp*pp*cp)), the micro-batches per step, layers
per pipeline stage, what MindFormers both swaps and recomputes, and the memory estimate
(no memory figures with swap on: swap is not modelled, and it makes recompute lists layer
indices). A value that cannot be derived stays None, so a rule that needs it does not fire
(unknown is never guessed).
"""

from __future__ import annotations

from typing import Any

from msrunwatch.judge.config.memory import estimate
from msrunwatch.judge.config.swapconflict import swap_recompute_conflicts
from msrunwatch.read.config.model import TrainingConfig, Value

DEGREES = ("tp", "pp", "cp", "ep", "vpp")
ESTIMATED = ("stage_layers", "estimated_used_mb", "estimated_actual_mb", "estimated_stage")
DEVICE_MB = 65536
"""A 64 GB Ascend card, as MindSpore reports it (`Device MOC memory size: 65536M`)."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def world_of(config: TrainingConfig, devices: int | None) -> int | None:
    """The card count: --devices, else what the config says (world, or nodes x per node)."""
    return _world(config, devices)


def _world(config: TrainingConfig, devices: int | None) -> int | None:
    if devices is not None:
        return devices
    world = _int(config.get("world"))
    if world is not None:
        return world
    nnodes, local = _int(config.get("nnodes")), _int(config.get("local_worker_num"))
    return nnodes * local if nnodes and local else None


def _divide(a: int | None, b: int | None) -> int | None:
    return a // b if a is not None and b and a % b == 0 else None


def with_world(config: TrainingConfig, world: int | None) -> TrainingConfig:
    """The config with the card count the user gave on the command line."""
    if world is None or config.get("world") == world:
        return config
    values = {**config.values, "world": Value(world, None)}
    return TrainingConfig(config.path, config.kind, values)


def _estimated(config: TrainingConfig, world: int | None) -> dict[str, Any]:
    """The memory estimate's per-stage figures, for the memory rules."""
    est = estimate(with_world(config, world))
    peak = est.peak
    return {
        "stage_layers": [s.layers for s in est.stages] if est.stages else None,
        "estimated_used_mb": round(peak.used_mib) if peak and peak.used_mib else None,
        "estimated_actual_mb": round(peak.actual_mib) if peak and peak.actual_mib else None,
        "estimated_stage": peak.stage if peak else None,
        "estimate_complete": est.complete,
    }


def derive(config: TrainingConfig, devices: int | None = None) -> dict[str, Any]:
    """Every variable of the config scope, known or None."""
    env: dict[str, Any] = {name: v.value for name, v in config.values.items()}
    unresolved = {n: v.unresolved for n, v in config.values.items() if v.unresolved}
    for name in DEGREES:
        if _int(env.get(name)) is None and name not in unresolved:
            env[name] = 1  # not set at all: the framework's default
    env["unresolved"] = [f"{n}: {why}" for n, why in unresolved.items()]
    env["unresolved_names"] = sorted(unresolved)
    env["framework"] = env.get("framework") or config.kind
    world = _world(config, devices)
    env["world"] = world
    tp, pp, cp = (_int(env.get(name)) for name in ("tp", "pp", "cp"))
    model = tp * pp * cp if tp and pp and cp else None
    if env["framework"] != "mindformers" or _int(env.get("dp")) is None:
        env["dp"] = _divide(world, model)
    env["model_size"] = model
    env["product"] = env["dp"] * model if _int(env.get("dp")) and model else None
    env["suggested_dp"] = _divide(world, model)
    mbs, gbs, dp = _int(env.get("mbs")), _int(env.get("gbs")), _int(env.get("dp"))
    if env["framework"] != "mindformers":
        env["micro_batch_num"] = _divide(gbs, mbs * dp) if mbs and dp else None
    elif gbs is None and mbs and dp:
        env["gbs"] = mbs * dp * (env.get("micro_batch_num") or 1)
    env["num_kv_heads"] = env.get("num_kv_heads") or env.get("num_heads")
    env["device_memory_mb"] = env.get("device_memory_mb") or DEVICE_MB
    env["limit_mb"] = env.get("max_device_memory_mb") or env["device_memory_mb"]
    env["swap_recompute_conflicts"] = swap_recompute_conflicts(env)
    if not any(name in unresolved for name in (*DEGREES, "world", "mbs", "seq_length")):
        env.update(_estimated(config, world))
    else:  # an estimate on guessed degrees would be wrong: say nothing about memory
        env.update(dict.fromkeys(ESTIMATED))
        env["estimate_complete"] = False
    if env.get("swap") is True or "swap" in unresolved:  # swap is not modelled
        env.update(dict.fromkeys(ESTIMATED[1:]))
        env["estimate_complete"] = False
    env["nnodes"] = env.get("nnodes") or (
        _divide(world, _int(env.get("local_worker_num"))) if world else None
    )
    return env
