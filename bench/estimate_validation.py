#!/usr/bin/env python3
"""The memory estimate against independent figures: published tables, a measured run, and
public configs documented to run on their cards.

    python bench/estimate_validation.py            # the README table (Markdown)

Each row names the figure, where it comes from, what `msrunwatch estimate` gives for the same
setting, and the error; a row the estimate does not model says "not estimated" and why.
tests/unit/test_estimate_validation.py holds every row to its limit. Seed 001 is one row among
them, not the calibration they bend to.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msrunwatch.judge.config.memory import MIB, Estimate, estimate  # noqa: E402
from msrunwatch.judge.config.memory.inputs import read_inputs  # noqa: E402
from msrunwatch.judge.config.memory.notes import Notes  # noqa: E402
from msrunwatch.judge.config.memory.states import states  # noqa: E402
from msrunwatch.read.config import read_config  # noqa: E402
from msrunwatch.read.config.model import TrainingConfig, Value  # noqa: E402

GIB = 1024**3
LIMIT = 0.10
"""Every row within 10%, or marked."""


@dataclass(frozen=True)
class Row:
    """One validation figure."""

    group: str
    figure: str
    source: str
    published: float | None
    estimated: float | None
    unit: str
    note: str = ""
    """Why the row is not estimated, or what it is (a budget check)."""

    @property
    def error(self) -> float | None:
        if self.published is None or self.estimated is None:
            return None
        return self.estimated / self.published - 1

    @property
    def within(self) -> bool:
        return self.error is not None and abs(self.error) <= LIMIT


def config(**values: Any) -> TrainingConfig:
    return TrainingConfig("validation.sh", "megatron", {k: Value(v) for k, v in values.items()})


# --- Korthikanti et al. 2022, Table 2 (activation bytes per layer), with dropout masks -------

PAPER_MODELS = {  # Table 3 of the paper: the GPT models it trains with t = 8, s = 2048
    "22B": {"hidden_size": 6144, "num_heads": 64, "mbs": 4},
    "175B": {"hidden_size": 12288, "num_heads": 96, "mbs": 1},
    "530B": {"hidden_size": 20480, "num_heads": 128, "mbs": 1},
    "1T": {"hidden_size": 25600, "num_heads": 160, "mbs": 1},
}
SEQ, TP = 2048, 8


def _paper(h: int, a: int, b: int, case: str) -> float:
    """The paper's Table 2 bytes per layer (s b h terms; GeLU, ffn 4h, dropout masks)."""
    sbh, t, s = SEQ * b * h, TP, SEQ
    return {
        "TP": sbh * (10 + 24 / t + 5 * a * s / (h * t)),
        "TP+SP": sbh / t * (34 + 5 * a * s / h),
        "TP+selective": sbh * (10 + 24 / t),
        "TP+SP+selective": sbh / t * 34,
    }[case]


def _ours(h: int, a: int, b: int, case: str) -> float:
    cfg = config(
        framework="megatron",
        tp=TP,
        seq_length=SEQ,
        mbs=b,
        hidden_size=h,
        num_heads=a,
        num_kv_heads=a,
        ffn_hidden_size=4 * h,
        num_layers=8,
        pp=1,
        vocab_size=51200,
        swiglu=False,
        use_flash_attention=False,
        sp="SP" in case,
        hidden_dropout=0.1,
        attention_dropout=0.1,
        params_dtype="bf16",
        world=TP,
    )
    terms = estimate(cfg).layer_terms
    assert terms is not None
    mib = terms.selective_mib if "selective" in case else terms.layer_mib
    return mib * MIB


def korthikanti() -> Iterator[Row]:
    for name, m in PAPER_MODELS.items():
        h, a, b = m["hidden_size"], m["num_heads"], m["mbs"]
        cases = ("TP", "TP+SP", "TP+selective", "TP+SP+selective") if name == "175B" else ("TP+SP",)
        for case in cases:
            yield Row(
                "Korthikanti et al. 2022, Table 2",
                f"GPT-{name} per-layer activations, {case}",
                "arXiv:2205.05198 Table 2 (formula) on its Table 3 model, t=8, s=2048",
                _paper(h, a, b, case) / MIB,
                _ours(h, a, b, case) / MIB,
                "MiB",
            )


# --- ZeRO (Rajbhandari et al. 2020), Figure 1: model states of a 7.5B model, N_d = 64 ---------


def _states_gb(distributed: bool) -> float:
    cfg = config(
        framework="megatron",
        params_dtype="fp16",
        world=64,
        tp=1,
        pp=1,
        use_distributed_optimizer=distributed,
    )
    notes = Notes()
    held = states(cfg, read_inputs(cfg, notes), False, False, notes)
    return 7.5e9 * held.trainable.total / 1e9


def zero() -> Iterator[Row]:
    src = "arXiv:1910.02054 Figure 1 (fp16 Adam, K = 12, N_d = 64)"
    yield Row(
        "ZeRO paper",
        "7.5B model states, baseline (16 B/param)",
        src,
        120.0,
        _states_gb(False),
        "GB",
    )
    yield Row(
        "ZeRO paper",
        "7.5B model states, P_os (ZeRO-1 = distributed optimizer)",
        src,
        31.4,
        _states_gb(True),
        "GB",
    )
    for name, published in (("P_os+g (ZeRO-2)", 16.6), ("P_os+g+p (ZeRO-3)", 1.9)):
        yield Row(
            "ZeRO paper",
            f"7.5B model states, {name}",
            src,
            published,
            None,
            "GB",
            "not estimated: gradient and parameter sharding is FSDP, which the estimate "
            "does not model (it says `not estimated: FSDP`)",
        )


# --- MindSpeed: activation-function recompute savings on Llama-2-7B -------------------------

LLAMA2_7B = {
    "framework": "megatron",
    "num_layers": 32,
    "hidden_size": 4096,
    "num_heads": 32,
    "num_kv_heads": 32,
    "ffn_hidden_size": 11008,
    "vocab_size": 32000,
    "swiglu": True,
    "use_flash_attention": True,
    "sp": True,
    "pp": 1,
    "params_dtype": "bf16",
    "world": 8,
    "hidden_dropout": 0.0,
    "attention_dropout": 0.0,
}
MINDSPEED_ROWS = (  # seq, mbs, tp, published GB (docs/zh/features/activation-function-recompute.md)
    (12288, 2, 4, 8.05),
    (8096, 2, 4, 5.31),
    (16384, 2, 4, 12.49),
    (12288, 1, 4, 4.04),
    (12288, 2, 8, 4.02),
)


def _saving(seq: int, mbs: int, tp: int) -> float:
    values = {**LLAMA2_7B, "seq_length": seq, "mbs": mbs, "tp": tp, "gbs": mbs * 8 // tp}
    plain = estimate(config(**values)).stages[0].used_mib or 0.0
    saved = estimate(config(**values, recompute_activation_function=True)).stages[0].used_mib
    return (plain - (saved or 0.0)) * MIB / GIB


def mindspeed() -> Iterator[Row]:
    src = "Ascend/MindSpeed@028de58c docs/zh/features/activation-function-recompute.md"
    for seq, mbs, tp, published in MINDSPEED_ROWS:
        note = ""
        if (seq, mbs) == (16384, 2):
            note = (
                "outside 10%: the published saving grows 1.55x from 12K to 16K tokens where "
                "the activation it frees grows 1.33x; the other four rows agree within 1%"
            )
        yield Row(
            "MindSpeed activation-function recompute",
            f"Llama-2-7B saving, seq {seq}, mbs {mbs}, TP{tp}",
            src,
            published,
            _saving(seq, mbs, tp),
            "GiB",
            note,
        )


# --- Seed 001: Qwen2.5-7B on MindSpeed-LLM / MindSpore, measured -------------------------------

SEED = {
    "none": ("seed001_qwen25_7b_tp2_pp2.sh", 55405, 57400),
    "full recompute": ("seed001_qwen25_7b_tp2_pp2_recompute.sh", 35073, 36174),
}


def seed() -> Iterator[Row]:
    for case, (name, used, actual) in SEED.items():
        est = estimate(read_config(str(ROOT / "fixtures" / "configs" / name))).stages[0]
        src = "seed 001 rank-0 log, TP2 PP2 seq 10240 on 4 x 64 GB (fixtures/configs)"
        yield Row(
            "Seed 001 (measured)", f"stage 0 used peak, {case}", src, used, est.used_mib, "MiB"
        )
        yield Row(
            "Seed 001 (measured)",
            f"stage 0 actual peak, {case}",
            src,
            actual,
            est.actual_mib,
            "MiB",
        )


# --- public configs documented to run on their cards: not over budget -----------------------

DOCUMENTED = (
    (
        "ms_qwen25_7b_32k.sh",
        "MindSpeed-LLM@master docs/en/mindspore/models/supported_models.md: Qwen2.5-7B 32K, 1x8",
    ),
    (
        "pt_qwen25_72b_32k_torchrun.sh",
        "MindSpeed-LLM@master docs/en/pytorch/models/supported_models.md: "
        "Qwen2.5-72B 32K, 16x8 [Pass]",
    ),
    (
        "mf_qwen3_32b_pretrain_4k.yaml",
        "MindFormers@master configs/qwen3/README.md: "
        "Qwen3-32B pretraining Validated (16 cards, its YAML)",
    ),
    (
        "mf_qwen25_7b_finetune_8k.yaml",
        "MindFormers@master research/qwen2_5/README.md: Qwen2.5-7B finetune on 8 cards",
    ),
)
DEVICES = {"mf_qwen3_32b_pretrain_4k.yaml": 16, "mf_qwen25_7b_finetune_8k.yaml": 8}


def documented() -> Iterator[Row]:
    for name, source in DOCUMENTED:
        cfg = read_config(str(ROOT / "fixtures" / "configs" / name))
        if name in DEVICES:
            cfg = TrainingConfig(cfg.path, cfg.kind, {**cfg.values, "world": Value(DEVICES[name])})
        est = estimate(cfg)
        yield _budget_row(name, source, est)


def _budget_row(name: str, source: str, est: Estimate) -> Row:
    peak = est.peak
    share = None if peak is None or peak.actual_mib is None else peak.actual_mib / est.budget_mib
    if est.not_estimated:
        note = "; ".join(est.not_estimated)
        return Row("Documented to run", name, source, None, share, "of budget", note)
    verdict = "within budget" if share is not None and share <= 1 else "CALLED OVER BUDGET"
    return Row("Documented to run", name, source, None, share, "of budget", verdict)


SECTIONS: tuple[Callable[[], Iterator[Row]], ...] = (seed, korthikanti, zero, mindspeed, documented)


def rows() -> list[Row]:
    return [row for section in SECTIONS for row in section()]


def _cell(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "of budget":
        return f"{value:.0%}"
    return f"{value:,.2f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def table(all_rows: list[Row]) -> str:
    out = ["| figure | source | published | estimate | error |", "|---|---|---|---|---|"]
    for r in all_rows:
        if r.error is not None:
            err = f"{r.error:+.1%}" + ("" if r.within else f" ({r.note})")
        else:
            err = r.note
        out.append(
            f"| {r.group}: {r.figure} | {r.source} | {_cell(r.published, r.unit)} | "
            f"{_cell(r.estimated, r.unit)} | {err} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(table(rows()), end="")
