"""How much of its card a job's memory pool can use.

Not the card's nominal size: a 64 GB card shows the runtime 62420-62432 MiB, and the runtime's
own context takes some before the framework sizes its pool (data/cards.yaml, from real runs).
HCCL then holds 2 x HCCL_BUFFSIZE per communicator outside the pool (data/runtime.yaml, CANN's
documentation). MindSpore grows its pool up to max_device_memory, or by default to 15/16 of the
free memory, and no further than the card has left; torch_npu's allocator likewise stops at
what is free. So the budget is the smaller of the pool's cap and what the card has free once
HCCL holds the buffers of the communicators the job certainly opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.memory.result import DEFAULT_DEVICE_MIB
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.tables import table


@dataclass(frozen=True)
class Budget:
    """The usable memory, where it comes from, and what the card keeps outside the pool."""

    mib: float
    source: str
    room_mib: float
    """What the card can give the pool once HCCL holds its buffers."""
    hccl_mib: float
    communicators: tuple[str, ...]


@dataclass(frozen=True)
class Degrees:
    """The parallel degrees that decide which communicators a rank opens."""

    world: int
    tp: int = 1
    dp: int = 1
    cp: int = 1
    ep: int = 1


def communicators(d: Degrees) -> tuple[str, ...]:
    """The communicators every rank certainly opens (data/runtime.yaml hccl.groups_source): the
    world group, and one per parallel group that is neither a single rank nor every rank."""
    out = ["world"]
    for name, size in (("tensor parallel", d.tp), ("data parallel", d.dp), ("context", d.cp)):
        if 1 < size < d.world:
            out.append(name)
    if 1 < d.ep < d.world and d.ep != d.dp:
        out.append("expert parallel")
    return tuple(out)


def _number(cfg: TrainingConfig, name: str) -> float | None:
    raw = cfg.get(name)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    return float(raw) if raw > 0 else None


def _card(nominal: float) -> dict[str, Any] | None:
    """The known card of that nominal memory, with the runtime's figures, if any."""
    for card in table("cards")["cards"]:
        if card["memory_mb"] == nominal and "free_mb" in card:
            return dict(card)
    return None


def _mindspore(cfg: TrainingConfig) -> bool:
    """MindSpore sizes the pool: a MindFormers job, or a script msrun launches."""
    return bool(cfg.get("framework") == "mindformers" or cfg.get("launcher") == "msrun")


def default_pool(free: float) -> float:
    """MindSpore's pool without max_device_memory (runtime.yaml mindspore_pool)."""
    rule = table("runtime")["mindspore_pool"]
    num, den = rule["default_ratio"]
    step = rule["round_down_mib"]
    return float(int(free * num / den / step) * step - rule["less_mib"])


def usable(cfg: TrainingConfig, degrees: Degrees, notes: Notes) -> Budget:
    """The budget of one rank's pool, with the figures behind it written down."""
    nominal = _number(cfg, "device_memory_mb") or DEFAULT_DEVICE_MIB
    card = _card(nominal)
    free = float(card["free_mb"]) if card else nominal
    hccl = table("runtime")["hccl"]
    size = _number(cfg, "hccl_buffsize_mb") or float(hccl["buffsize_mb"])
    groups = communicators(degrees)
    held = len(groups) * hccl["per_communicator"] * size
    room = free - held
    where = (
        f"{free:g} MiB free on the {card['name']} when the pool is sized"
        if card
        else f"the {nominal:g} MiB card (the runtime's own share unknown)"
    )
    notes.assume(
        f"card: {where}, less HCCL's {held:g} MiB ({len(groups)} communicators: "
        f"{', '.join(groups)}; 2 x HCCL_BUFFSIZE {size:g} MB each) = {room:g} MiB the pool "
        "can grow to"
    )
    cap, what = _cap(cfg, free if card else nominal)
    if cap is None or cap >= room:
        why = f"what the card has left: {room:g} MiB"
        source = f"{why} (below {what})" if cap is not None else why
        return Budget(room, source, room, held, groups)
    return Budget(cap, f"{what} = {cap:g} MiB", room, held, groups)


def _cap(cfg: TrainingConfig, free: float) -> tuple[float | None, str]:
    """The pool's own cap: max_device_memory, else MindSpore's default pool (torch: none)."""
    limit = _number(cfg, "max_device_memory_mb")
    if limit is not None:
        return limit, "max_device_memory from the config"
    if _mindspore(cfg):
        return default_pool(free), _default_pool_sum(free)
    return None, ""


def _default_pool_sum(free: float) -> str:
    """MindSpore's default pool as a sum the reader can redo (runtime.yaml mindspore_pool)."""
    rule = table("runtime")["mindspore_pool"]
    num, den = rule["default_ratio"]
    return (
        f"MindSpore's default pool ({free:g} MiB free x {num}/{den} = {free * num / den:,.1f}, "
        f"rounded down to {rule['round_down_mib']} MiB, less {rule['less_mib']} MiB)"
    )
