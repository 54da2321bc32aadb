"""What a job's pool can use on its card (judge/config/memory/budget.py): the communicators a
rank certainly opens, HCCL_BUFFSIZE as a script exports it, MindSpore's default pool, and the
limit the memory rules compare the estimate with."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.judge.config.derive import derive
from msrunwatch.judge.config.memory.budget import Degrees, communicators, default_pool, usable
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.read.config import read_config
from msrunwatch.read.config.model import TrainingConfig, Value


@pytest.mark.parametrize(
    ("degrees", "expected"),
    [
        (Degrees(8, dp=8), ("world",)),  # data parallel over every rank is the world group
        (Degrees(8, tp=8), ("world",)),
        (Degrees(8, tp=4, dp=2), ("world", "tensor parallel", "data parallel")),
        (Degrees(16, tp=8, dp=1), ("world", "tensor parallel")),  # pipeline 2: not counted
        (Degrees(64, tp=2, dp=2, cp=16), ("world", "tensor parallel", "data parallel", "context")),
        (Degrees(16, dp=8, ep=8), ("world", "data parallel")),  # EP over DP: the same ranks
        (Degrees(32, dp=16, ep=4), ("world", "data parallel", "expert parallel")),
    ],
)
def test_the_communicators_every_rank_opens(degrees: Degrees, expected: tuple[str, ...]) -> None:
    assert communicators(degrees) == expected


def test_mindspore_default_pool_is_what_dryrun_prints_for_its_64_gb_card() -> None:
    # every DryRun worker log: 'Device MOC memory size: 65536M', 'MindSpore Used memory size: 61430M'
    assert default_pool(65536) == 61430


def _cfg(**values: object) -> TrainingConfig:
    return TrainingConfig("x.sh", "megatron", {k: Value(v) for k, v in values.items()})


def test_max_device_memory_beyond_what_the_card_has_left_is_capped_by_the_card() -> None:
    notes = Notes()
    got = usable(_cfg(max_device_memory_mb=61440), Degrees(8, tp=4, dp=2), notes)
    assert got.room_mib == 62069 - 3 * 400 and got.mib == got.room_mib
    assert "below max_device_memory" in got.source
    assert any("3 communicators" in a for a in notes.assumptions)


def test_a_script_exporting_hccl_buffsize_sizes_the_buffers(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "#!/bin/bash\nexport HCCL_BUFFSIZE=400\n"
        "msrun --worker_num=8 --local_worker_num=8 pretrain_gpt.py "
        "--tensor-model-parallel-size 4 --num-layers 4 --hidden-size 1024 "
        "--num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 --global-batch-size 8\n"
    )
    cfg = read_config(str(script))
    assert cfg.get("hccl_buffsize_mb") == 400
    env = derive(cfg)
    assert env["hccl_reserved_mb"] == 3 * 2 * 400  # world, tensor and data parallel
    assert env["card_room_mb"] == 62069 - 2400
    assert env["limit_mb"] == 58178  # msrun: MindSpore's default pool, within the room


def test_a_variable_not_exported_does_not_reach_hccl(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "#!/bin/bash\nHCCL_BUFFSIZE=400\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
        "--num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 --global-batch-size 8\n"
    )
    cfg = read_config(str(script))
    assert cfg.get("hccl_buffsize_mb") is None
    assert derive(cfg)["limit_mb"] == 62069 - 400  # torch: what the card has left, world only


@pytest.mark.parametrize(
    ("cp", "algo", "band"),
    [(1, None, 1.1), (4, None, 1.8), (4, "megatron_cp_algo", 1.8), (4, "ulysses_cp_algo", None)],
)
def test_the_error_band_is_wider_for_ring_context_parallel_and_none_for_other_algorithms(
    cp: int, algo: str | None, band: float | None
) -> None:
    values = {"framework": "megatron", "world": 8 * cp, "tp": 8, "cp": cp, "seq_length": 4096}
    values |= {"mbs": 1, "gbs": 8, "num_layers": 2, "hidden_size": 1024, "num_heads": 8}
    values |= {"ffn_hidden_size": 4096, "vocab_size": 32000, "use_flash_attention": True}
    if algo is not None:
        values["cp_algo"] = algo
    cfg = TrainingConfig("pretrain.sh", "megatron", {k: Value(v) for k, v in values.items()})
    env = derive(cfg)
    assert env["estimate_band"] == band
    if band is None:
        assert env["estimate_unvalidated"] == [f"context parallel by {algo}"]
