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

from msrunwatch.judge.config.choices import refused_choices
from msrunwatch.judge.config.memory import FRAGMENTATION, estimate
from msrunwatch.judge.config.memory.budget import Degrees, usable
from msrunwatch.judge.config.memory.dualpipev import dualpipev
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.swapconflict import swap_recompute_conflicts
from msrunwatch.judge.config.versions import Versions
from msrunwatch.read.config.entry import job_of_run_mode
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.read.config.tables import table

DEGREES = ("tp", "pp", "cp", "ep", "vpp")
ESTIMATED = (
    "stage_layers",
    "estimated_used_mb",
    "estimated_actual_mb",
    "estimated_stage",
    "estimated_floor_actual_mb",
    "estimated_states_actual_mb",
    "estimate_unvalidated",
    "estimate_band",
    "estimate_band_why",
)
FACTS_NO_CHECK_READS = (
    "master_addr",
    "log_dir",
    "join",
    "sim_rank_id",
    "entry",
    "config_file",
    "tokenizer",
    "tokenizer_model",
    "tokenizer_vocab_file",
)
"""Settings read for the record that no check needs: unknown, they skip nothing."""
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
    floor = max((s.floor_actual_mib or 0.0 for s in est.stages), default=0.0)
    held = max((s.held_mib or 0.0 for s in est.stages), default=0.0) * FRAGMENTATION
    unvalidated = _unvalidated(est.framework, est.inputs, est.vocab_range, config.get("cp_algo"))
    if est.job == "predict":
        unvalidated.append(
            "inference (the prefill and the runtime's workspace beside the KV cache)"
        )
    if config.get("swap_attention") is True:
        unvalidated.append("MindSpeed --swap-attention (modelled from its documentation)")
    if config.get("swap_optimizer") is True:
        unvalidated.append("MindSpeed --swap-optimizer (modelled from its documentation)")
    if config.get("tp_2d") is True and (_int(config.get("tp")) or 1) > 1:
        unvalidated.append("MindSpeed --tp-2d (modelled from its documentation)")
    if dualpipev(config) and (_int(config.get("pp")) or 1) > 1:
        unvalidated.append("MindSpeed dualpipev (modelled from its documentation and schedule)")
    return {
        "stage_layers": [s.layers for s in est.stages] if est.stages else None,
        "estimated_used_mb": round(peak.used_mib) if peak and peak.used_mib else None,
        "estimated_actual_mb": round(peak.actual_mib) if peak and peak.actual_mib else None,
        "estimated_stage": peak.stage if peak else None,
        "estimate_complete": est.complete,
        "estimate_covers": est.covers,
        "estimate_is_floor": est.floor,
        "estimate_gaps": [g.removeprefix("not estimated: ") for g in est.not_estimated],
        "seq_varies": est.dynamic_seq,
        "estimated_floor_actual_mb": round(floor) if est.dynamic_seq and floor else None,
        "estimated_states_actual_mb": round(held) if held else None,
        "estimate_unvalidated": unvalidated,
        **_band(unvalidated, est.inputs),
    }


def _unvalidated(
    framework: str,
    inputs: tuple[tuple[str, object], ...],
    vocab_range: object = None,
    cp_algo: object = None,
) -> list[str]:
    """What in this config the estimate has never been checked against, neither measured runs
    nor outcomes: a memory error needs the model states alone over the budget there.

    Context parallel by ring attention was checked against outcomes (data/estimate_bands.yaml):
    it has an error band of its own; other CP algorithms were not.
    """
    got = {k: v for k, v in inputs if isinstance(v, int) and not isinstance(v, bool)}
    out = ["MindFormers graph mode"] if framework == "mindformers" else []
    if got.get("cp", 1) > 1 and _algo(cp_algo) not in _cp_band()["algos"]:
        out.append(f"context parallel by {_algo(cp_algo)}")
    if got.get("vpp", 1) > 1:
        out.append("virtual pipeline")
    if got.get("experts", 1) > 1:
        out.append("MoE activations (expert parameters are validated, activations are not)")
    if vocab_range is not None:
        out.append("a vocabulary known only as a range (no vocab_size, no known tokenizer)")
    return out


def _algo(cp_algo: object) -> str:
    """The CP algorithm: MindSpeed's default is ring attention (megatron_cp_algo)."""
    return cp_algo if isinstance(cp_algo, str) and cp_algo else "megatron_cp_algo"


def _cp_band() -> dict[str, Any]:
    return dict(table("estimate_bands")["context_parallel"])


def _band(unvalidated: list[str], inputs: tuple[tuple[str, object], ...]) -> dict[str, Any]:
    """How far over the budget the estimate must be to be an error, and why that far; None when
    something the config uses was never checked (data/estimate_bands.yaml)."""
    if unvalidated:
        return {"estimate_band": None, "estimate_band_why": None}
    bands = table("estimate_bands")
    cp = next((v for k, v in inputs if k == "cp"), 1)
    band = _cp_band() if isinstance(cp, int) and cp > 1 else bands["validated"]
    return {"estimate_band": float(band["factor"]), "estimate_band_why": str(band["why"])}


def derive(
    config: TrainingConfig, devices: int | None = None, versions: Versions | None = None
) -> dict[str, Any]:
    """Every variable of the config scope, known or None."""
    env: dict[str, Any] = {name: v.value for name, v in config.values.items()}
    unresolved = {
        n: v.unresolved
        for n, v in config.values.items()
        if v.unresolved and n not in FACTS_NO_CHECK_READS
    }
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
    env.update(_usable(config, env))
    env.update(_documented_limit(env["device_memory_mb"]))
    env["swap_recompute_conflicts"] = swap_recompute_conflicts(env)
    env["refused_choices"] = refused_choices(env, unresolved)
    if not any(name in unresolved for name in (*DEGREES, "world", "mbs", "seq_length")):
        env.update(_estimated(config, world))
    else:  # an estimate on guessed degrees would be wrong: say nothing about memory
        env.update(dict.fromkeys(ESTIMATED))
        env.update(
            estimate_complete=False,
            estimate_covers=False,
            estimate_is_floor=False,
            estimate_gaps=[],
        )
        env["seq_varies"] = False
    if env.get("swap") is True or "swap" in unresolved:  # swap is not modelled
        env.update(dict.fromkeys(ESTIMATED[1:]))
        env.update(estimate_complete=False, estimate_covers=False, estimate_is_floor=False)
    env["nnodes"] = env.get("nnodes") or (
        _divide(world, _int(env.get("local_worker_num"))) if world else None
    )
    _job_and_versions(env, versions or Versions({}))
    return env


def _usable(config: TrainingConfig, env: dict[str, Any]) -> dict[str, Any]:
    """The usable memory per card (memory/budget.py): the pool's cap, within what the card has
    left once HCCL holds its buffers."""
    tp, pp, cp, dp, ep = (_int(env.get(n)) or 1 for n in ("tp", "pp", "cp", "dp", "ep"))
    world = _int(env.get("world")) or dp * tp * pp * cp
    got = usable(config, Degrees(world, tp, dp, cp, ep), Notes())
    return {
        "limit_mb": round(got.mib),
        "card_room_mb": round(got.room_mib),
        "hccl_reserved_mb": round(got.hccl_mib),
        "communicators": list(got.communicators),
    }


def _documented_limit(device_mb: object) -> dict[str, Any]:
    """The max_device_memory MindFormers' documentation states for this card, and where."""
    for card in table("cards")["cards"]:
        if card["memory_mb"] == device_mb:
            return {
                "documented_max_device_memory_mb": card["max_device_memory_mb"],
                "documented_card": card["name"],
                "documented_limit_source": card["source"],
            }
    return dict.fromkeys(
        ("documented_max_device_memory_mb", "documented_card", "documented_limit_source")
    )


def _release(version: int) -> str:
    """10100 -> `1.1.0`."""
    return f"{version // 10000}.{version // 100 % 100}.{version % 100}"


def _refused_by_version(env: dict[str, Any], given: int | None, floor: int | None) -> None:
    """Keys a MindFormers release before the given one does not take join the refused ones,
    and so do classes named as a release before the one in use registered them; while the
    version is not known, those classes are listed apart (`older_keys_unknown`): they ran on
    the releases that had them."""
    refused = list(env.get("refused_keys") or [])
    for name, since in env.get("newer_keys") or []:
        if given is not None and given < since:
            refused.append(f"{name}: taken from MindFormers {since // 10000}.{since // 100 % 100}")
    unknown = []
    for name, until in env.get("older_keys") or []:
        if floor is None:
            unknown.append(f"{name}, from the release after MindFormers {_release(until)}")
        elif floor > until:
            refused.append(name)
    env["refused_keys"] = refused
    env["older_keys_unknown"] = unknown
    env.setdefault("unknown_keys", [])


def _job_and_versions(env: dict[str, Any], versions: Versions) -> None:
    """What the job is, which framework versions run it, and what follows from them."""
    if env["framework"] == "mindformers":
        env["job"] = job_of_run_mode(env.get("run_mode"))
    env["job"] = env.get("job") or "unknown"
    mindformers = versions.of("mindformers")
    if mindformers is None and env.get("use_legacy") is False:
        mindformers = 10600  # the mcore path (use_legacy: False) exists from r1.6.0
    env["mindformers_version"] = mindformers
    env["mindformers_version_given"] = versions.of("mindformers")
    _refused_by_version(env, versions.of("mindformers"), mindformers)
    env["megatron_version"] = versions.megatron
    env["mindspeed_llm_version"] = versions.of("mindspeed-llm")
    env["stack"] = versions.stack
    if _int(env.get("etp")) is None and "etp" not in env.get("unresolved_names", []):
        env["etp"] = env.get("tp")  # Megatron: --expert-tensor-parallel-size defaults to TP
    layers, mtp = _int(env.get("num_layers")), _int(env.get("mtp_depth"))
    if env.get("use_legacy") is False:
        mtp = None  # the mcore models lay out num_layers alone (LayerSetting in transformer_block)
    env["offset_layers"] = layers + (mtp or 0) if layers is not None else None
