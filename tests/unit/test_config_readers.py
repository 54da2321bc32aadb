"""Config readers: MindFormers YAML, MindSpeed-LLM / Megatron launch scripts, msrun lines."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from msrunwatch.core import yamlload
from msrunwatch.core.errors import ArithError, UsageError
from msrunwatch.judge.config.derive import derive
from msrunwatch.read.config import ConfigError, NotATrainingConfig, read_config, read_msrun
from msrunwatch.read.config.arith import evaluate
from msrunwatch.read.config.mindformers import memory_mb
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.overrides import parse_sets
from msrunwatch.rules.variables import CONFIG
from tests.support import FIXTURES

CONFIGS = FIXTURES / "configs"
UPSTREAM_MARK = "# ---- upstream file follows ----\n"


def read(name: str) -> TrainingConfig:
    return read_config(str(CONFIGS / name))


def script(tmp_path: Path, text: str, name: str = "run.sh") -> TrainingConfig:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_config(str(path))


def launch(body: str = "", args: str = "") -> str:
    """A minimal MindSpeed-LLM style script around body (variables) and GPT args."""
    return (
        f"#!/bin/bash\n{body}\nmsrun --worker_num 8 --local_worker_num 8 pretrain_gpt.py {args}\n"
    )


# -- real upstream files ---------------------------------------------------------------------

REAL = [
    "mf_qwen25_7b_finetune_8k.yaml",
    "mf_qwen3_32b_pretrain_4k.yaml",
    "ms_qwen25_7b_32k.sh",
    "ms_qwen3_30b_a3b_4k.sh",
    "ms_chatglm3_6b_64k.sh",
    "pt_qwen25_72b_32k_torchrun.sh",
    "pt_llama31_8b_128k_cp.sh",
    "pt_llama31_50b_128k_cp.sh",
    "pt_llama31_70b_128k_cp.sh",
]


@pytest.mark.parametrize("name", REAL)
def test_real_fixtures_are_byte_for_byte_upstream(name: str) -> None:
    raw = (CONFIGS / name).read_bytes()
    header, body = raw.split(UPSTREAM_MARK.encode(), 1)
    blob = hashlib.sha1(b"blob %d\x00" % len(body) + body).hexdigest()
    assert f"(git blob {blob})".encode() in header


# (file, name, value, line, text of that line (stripped), or None for a default)
VALUES: list[tuple[str, str, Any, int | None, str | None]] = [
    # MindSpeed-LLM qwen25 7B (MindSpore backend): TP=4 PP=2 on 8 cards
    ("ms_qwen25_7b_32k.sh", "framework", "megatron", None, None),
    ("ms_qwen25_7b_32k.sh", "tp", 4, 24, "TP=4"),
    ("ms_qwen25_7b_32k.sh", "pp", 2, 25, "PP=2"),
    ("ms_qwen25_7b_32k.sh", "cp", 1, None, None),
    ("ms_qwen25_7b_32k.sh", "seq_length", 32768, 26, "SEQ_LEN=32768"),
    ("ms_qwen25_7b_32k.sh", "max_position_embeddings", 32768, 26, "SEQ_LEN=32768"),
    ("ms_qwen25_7b_32k.sh", "mbs", 1, 27, "MBS=1"),
    ("ms_qwen25_7b_32k.sh", "gbs", 64, 28, "GBS=64"),
    ("ms_qwen25_7b_32k.sh", "num_layers", 28, 45, "--num-layers 28  \\"),
    ("ms_qwen25_7b_32k.sh", "hidden_size", 3584, 46, "--hidden-size 3584  \\"),
    ("ms_qwen25_7b_32k.sh", "ffn_hidden_size", 18944, 47, "--ffn-hidden-size 18944 \\"),
    ("ms_qwen25_7b_32k.sh", "num_heads", 28, 48, "--num-attention-heads 28  \\"),
    ("ms_qwen25_7b_32k.sh", "num_kv_heads", 4, 54, "--num-query-groups 4 \\"),
    ("ms_qwen25_7b_32k.sh", "vocab_size", 152064, 68, "--padded-vocab-size 152064 \\"),
    ("ms_qwen25_7b_32k.sh", "sp", True, 44, "--sequence-parallel \\"),
    ("ms_qwen25_7b_32k.sh", "use_flash_attention", True, 55, "--use-flash-attn \\"),
    ("ms_qwen25_7b_32k.sh", "swiglu", True, 56, "--swiglu \\"),
    ("ms_qwen25_7b_32k.sh", "untie_embeddings", True, 64, None),
    ("ms_qwen25_7b_32k.sh", "params_dtype", "bf16", 87, "--bf16 \\"),
    ("ms_qwen25_7b_32k.sh", "use_distributed_optimizer", False, None, None),
    ("ms_qwen25_7b_32k.sh", "recompute_granularity", None, None, None),
    ("ms_qwen25_7b_32k.sh", "world", 8, 15, "WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))"),
    ("ms_qwen25_7b_32k.sh", "local_worker_num", 8, 10, "NPUS_PER_NODE=8"),
    ("ms_qwen25_7b_32k.sh", "nnodes", 1, 13, "NNODES=1"),
    ("ms_qwen25_7b_32k.sh", "node_rank", 0, 14, "NODE_RANK=0"),
    ("ms_qwen25_7b_32k.sh", "master_port", 6000, 12, "MASTER_PORT=6000"),
    ("ms_qwen25_7b_32k.sh", "join", False, 36, "--join=False"),
    ("ms_qwen25_7b_32k.sh", "sim_level", None, None, None),
    # MindSpeed-LLM qwen3 30B-A3B MoE on 2 nodes
    ("ms_qwen3_30b_a3b_4k.sh", "world", 16, 19, "WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))"),
    ("ms_qwen3_30b_a3b_4k.sh", "nnodes", 2, 17, "NNODES=2"),
    ("ms_qwen3_30b_a3b_4k.sh", "tp", 1, 27, "TP=1"),
    ("ms_qwen3_30b_a3b_4k.sh", "pp", 4, 28, "PP=4"),
    ("ms_qwen3_30b_a3b_4k.sh", "ep", 4, 29, "EP=4"),
    ("ms_qwen3_30b_a3b_4k.sh", "cp_algo", "ulysses_cp_algo", 36, "CP_TYPE='ulysses_cp_algo'"),
    ("ms_qwen3_30b_a3b_4k.sh", "num_experts", 128, 50, "--num-experts 128 \\"),
    ("ms_qwen3_30b_a3b_4k.sh", "head_dim", 128, 110, "--kv-channels 128 \\"),
    ("ms_qwen3_30b_a3b_4k.sh", "recompute_granularity", "full", 73, None),
    ("ms_qwen3_30b_a3b_4k.sh", "recompute_method", "uniform", 72, None),
    ("ms_qwen3_30b_a3b_4k.sh", "recompute_num_layers", 1, 74, None),
    ("ms_qwen3_30b_a3b_4k.sh", "log_dir", "msrun_log", 45, '--log_dir="msrun_log" \\'),
    ("ms_qwen3_30b_a3b_4k.sh", "join", True, 46, "--join=True"),
    # the PyTorch-backend style: torchrun, 16 nodes
    ("pt_qwen25_72b_32k_torchrun.sh", "world", 128, 12, "NPUS_PER_NODE=8"),
    ("pt_qwen25_72b_32k_torchrun.sh", "local_worker_num", 8, 12, "NPUS_PER_NODE=8"),
    ("pt_qwen25_72b_32k_torchrun.sh", "nnodes", 16, 15, "NNODES=16"),
    ("pt_qwen25_72b_32k_torchrun.sh", "tp", 8, 25, "TP=8"),
    ("pt_qwen25_72b_32k_torchrun.sh", "cp", 4, 27, "CP=4"),
    ("pt_qwen25_72b_32k_torchrun.sh", "cp_algo", "megatron_cp_algo", 42, None),
    ("pt_qwen25_72b_32k_torchrun.sh", "num_layer_list", [17, 20, 22, 21], 47, None),
    ("pt_qwen25_72b_32k_torchrun.sh", "num_kv_heads", 8, 93, "--num-query-groups 8 \\"),
    ("pt_qwen25_72b_32k_torchrun.sh", "use_distributed_optimizer", True, 94, None),
    ("pt_qwen25_72b_32k_torchrun.sh", "overlap_grad_reduce", True, 95, None),
    # chatglm3: CP 16, hybrid algorithm, fp16
    ("ms_chatglm3_6b_64k.sh", "cp", 16, 40, "CP=16"),
    ("ms_chatglm3_6b_64k.sh", "cp_algo", "hybrid_cp_algo", 44, "CP_ALGO=hybrid_cp_algo"),
    ("ms_chatglm3_6b_64k.sh", "ulysses_degree", 8, 69, "--ulysses-degree-in-cp 8 \\"),
    ("ms_chatglm3_6b_64k.sh", "params_dtype", "fp16", 114, "--fp16 \\"),
    ("ms_chatglm3_6b_64k.sh", "local_worker_num", 8, 15, "NPUS_PER_NODE=8"),
    # MindFormers Qwen2.5 7B (legacy keys): dp4 mp1 pp2
    ("mf_qwen25_7b_finetune_8k.yaml", "framework", "mindformers", None, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "dp", 4, 110, "data_parallel: 4"),
    ("mf_qwen25_7b_finetune_8k.yaml", "tp", 1, 111, "model_parallel: 1"),
    ("mf_qwen25_7b_finetune_8k.yaml", "pp", 2, 112, "pipeline_stage: 2"),
    ("mf_qwen25_7b_finetune_8k.yaml", "cp", 1, 113, "context_parallel: 1"),
    ("mf_qwen25_7b_finetune_8k.yaml", "ep", 1, None, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "sp", True, 114, "use_seq_parallel: True"),
    ("mf_qwen25_7b_finetune_8k.yaml", "micro_batch_num", 16, 115, "micro_batch_num: 16"),
    ("mf_qwen25_7b_finetune_8k.yaml", "vocab_emb_dp", False, 116, "vocab_emb_dp: False"),
    ("mf_qwen25_7b_finetune_8k.yaml", "micro_batch_interleave_num", 1, 119, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "parallel_mode", 1, 97, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "full_batch", True, 100, "full_batch: True"),
    ("mf_qwen25_7b_finetune_8k.yaml", "use_distributed_optimizer", True, 103, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "recompute", [7, 7], 123, "recompute: [7, 7]"),
    ("mf_qwen25_7b_finetune_8k.yaml", "max_device_memory_mb", 59392, 148, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "mbs", 1, 28, "batch_size: 1"),
    ("mf_qwen25_7b_finetune_8k.yaml", "gradient_accumulation_steps", 1, None, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "seq_length", 8192, 163, "seq_length: 8192"),
    ("mf_qwen25_7b_finetune_8k.yaml", "hidden_size", 3584, 164, "hidden_size: 3584"),
    ("mf_qwen25_7b_finetune_8k.yaml", "num_layers", 28, 165, "num_layers: 28"),
    ("mf_qwen25_7b_finetune_8k.yaml", "num_heads", 28, 166, "num_heads: 28"),
    ("mf_qwen25_7b_finetune_8k.yaml", "num_kv_heads", 4, 167, "n_kv_heads: 4"),
    ("mf_qwen25_7b_finetune_8k.yaml", "vocab_size", 152064, 168, "vocab_size: 152064"),
    ("mf_qwen25_7b_finetune_8k.yaml", "ffn_hidden_size", 18944, 169, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "max_position_embeddings", 131072, 173, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "params_dtype", "fp32", 182, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "use_flash_attention", True, 184, None),
    ("mf_qwen25_7b_finetune_8k.yaml", "offset", 0, 186, "offset: 0"),
    ("mf_qwen25_7b_finetune_8k.yaml", "swiglu", True, 161, "type: LlamaConfig"),
    ("mf_qwen25_7b_finetune_8k.yaml", "vpp", 1, None, None),
    # MindFormers Qwen3 32B (mcore / HF keys): dp1 mp4 pp4
    ("mf_qwen3_32b_pretrain_4k.yaml", "dp", 1, 94, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "tp", 4, 95, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "pp", 4, 96, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "sp", False, 99, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "mbs", 1, 27, "batch_size: 1"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "num_layers", 64, 137, "num_hidden_layers: 64"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "num_heads", 64, 138, "num_attention_heads: 64"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "num_kv_heads", 8, 139, "num_key_value_heads: 8"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "head_dim", 128, 140, "head_dim: 128"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "ffn_hidden_size", 25600, 136, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "vocab_size", 151936, 134, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "seq_length", 4096, 143, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "max_position_embeddings", 4096, 142, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "dataset_seq_length", 4096, 56, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "offset", [-1, -1, 1, 1], 164, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "recompute", True, 124, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "swiglu", True, 141, "hidden_act: 'swiglu'"),
    ("mf_qwen3_32b_pretrain_4k.yaml", "untie_embeddings", True, 159, None),
    ("mf_qwen3_32b_pretrain_4k.yaml", "full_batch", False, 108, None),
    # seed 001: TP=2 PP=2 SEQ_LEN=10240 MBS=1 GBS=64 on 4 cards, DryRun
    ("seed001_qwen25_7b_tp2_pp2.sh", "tp", 2, 25, "TP=2"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "pp", 2, 26, "PP=2"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "seq_length", 10240, 27, "SEQ_LEN=10240"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "mbs", 1, 28, "MBS=1"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "gbs", 64, 29, "GBS=64"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "world", 4, 16, "WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "local_worker_num", 4, 11, "NPUS_PER_NODE=4"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "nnodes", 1, 14, "NNODES=1"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "sim_level", 1, 44, "--sim_level 1 \\"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "log_dir", "msrun_log", 43, "--log_dir msrun_log \\"),
    ("seed001_qwen25_7b_tp2_pp2.sh", "recompute_granularity", None, None, None),
    ("seed001_qwen25_7b_tp2_pp2_recompute.sh", "tp", 2, 22, "TP=2"),
    ("seed001_qwen25_7b_tp2_pp2_recompute.sh", "recompute_granularity", "full", 94, None),
    ("seed001_qwen25_7b_tp2_pp2_recompute.sh", "recompute_method", "uniform", 95, None),
    ("seed001_qwen25_7b_tp2_pp2_recompute.sh", "recompute_num_layers", 1, 96, None),
    ("seed001_qwen25_7b_tp2_pp2_recompute.sh", "world", 4, 13, None),
    # broken variants: the value that carries the mistake, on the line of the mistake
    ("mf_qwen25_dp_mismatch.yaml", "dp", 8, 107, "data_parallel: 8"),
    ("mf_qwen25_heads_not_divisible.yaml", "tp", 8, 109, "model_parallel: 8"),
    ("mf_qwen25_micro_batch_lt_pp.yaml", "micro_batch_num", 1, 111, "micro_batch_num: 1"),
    ("mf_qwen3_offset_sum.yaml", "offset", [-1, -1, 1, 2], 160, None),
    ("ms_qwen25_gbs_not_divisible.sh", "nnodes", 3, 10, "NNODES=3"),
    ("ms_qwen25_gbs_not_divisible.sh", "world", 24, 12, None),
    ("ms_qwen25_layers_not_divisible_pp.sh", "pp", 8, 22, "PP=8"),
    ("ms_qwen25_layers_not_divisible_pp.sh", "world", 16, 12, None),
    ("ms_qwen25_sp_without_tp.sh", "tp", 1, 21, "TP=1"),
    ("ms_qwen25_sp_without_tp.sh", "sp", True, 41, "--sequence-parallel \\"),
    ("ms_qwen25_cp_without_fa.sh", "cp", 2, 24, "CP=2"),
    ("ms_qwen25_cp_without_fa.sh", "use_flash_attention", False, None, None),
]


@pytest.mark.parametrize(
    ("name", "key", "value", "line", "text"),
    VALUES,
    ids=[f"{v[0]}:{v[1]}" for v in VALUES],
)
def test_values_and_their_lines(
    name: str, key: str, value: Any, line: int | None, text: str | None
) -> None:
    config = read(name)
    got = config.values[key]
    assert got.unresolved is None
    assert got.value == value
    if line is None:
        assert got.source is None
        return
    assert got.source is not None
    assert got.source.file == str(CONFIGS / name)
    assert got.source.line == line
    file_line = (CONFIGS / name).read_text(encoding="utf-8").splitlines()[line - 1]
    assert got.source.text == file_line
    if text is not None:
        assert file_line.strip() == text


@pytest.mark.parametrize(
    "name",
    sorted(
        str(p.relative_to(CONFIGS)) for p in CONFIGS.rglob("*") if p.is_file() and p.suffix != ".md"
    ),
)
def test_every_fixture_reads_and_uses_known_names(name: str) -> None:
    config = read(name)
    assert config.kind in ("mindformers", "megatron")
    assert set(config.values) <= set(CONFIG)
    for value in config.values.values():
        if value.unresolved is not None:
            assert value.value is None and value.source is not None


def test_flag_value_points_at_the_assignment_and_remembers_the_flag() -> None:
    tp = read("seed001_qwen25_7b_tp2_pp2.sh").values["tp"]
    assert tp.source is not None and tp.source.text == "TP=2"
    assert (tp.source.line, tp.source.col) == (25, 4)
    via = getattr(tp, "via", None)
    assert via is not None and via.line == 51
    assert via.text.strip() == "--tensor-model-parallel-size ${TP} \\"


def test_seed_rank_prefix_gotcha() -> None:
    node_rank = read("seed001_qwen25_7b_tp2_pp2.sh").values["node_rank"]
    assert node_rank.value is None
    assert node_rank.unresolved is not None and "--rank_table_file" in node_rank.unresolved
    assert node_rank.source is not None and node_rank.source.text.strip() == "--rank $NODE_RANK \\"


def test_unset_variable_fixture() -> None:
    config = read("ms_qwen25_unset_variable.sh")
    tp = config.values["tp"]
    assert tp.value is None
    assert tp.unresolved == "$TP_SIZE is not set in the script"
    assert tp.source is not None and (tp.source.line, tp.source.text) == (21, "TP=${TP_SIZE}")
    assert config.get("pp") == 2  # the rest still reads


def test_sim_level_not_exported_fixture() -> None:
    sim = read("ms_qwen25_sim_level_not_exported.sh").values["sim_level"]
    assert sim.value is None and sim.source is not None and sim.source.line == 21
    assert sim.unresolved is not None and "not exported" in sim.unresolved


def test_comment_inside_quoted_args_becomes_stray_args() -> None:
    config = read("ms_qwen25_comment_inside_args.sh")
    stray = config.values["stray_args"]
    assert stray.value == [
        "\\",
        "#开启完全重计算",
        "\\",
        "#重计算方式为uniform",
        "\\",
        "#每1层进行一次重计算",
    ]
    assert stray.source is not None and stray.source.line == 94
    assert config.get("recompute_granularity") == "full"
    assert config.get("recompute_method") == "uniform"
    assert config.get("recompute_num_layers") == 1


def test_chatglm_unresolvable_parts_say_why() -> None:
    config = read("ms_chatglm3_6b_64k.sh")
    reasons = {k: v.unresolved for k, v in config.values.items() if v.unresolved}
    assert set(reasons) == {"node_rank", "master_addr", "tokenizer"}  # tokenizer: no check needs it
    assert "`IP1` is a placeholder" in (reasons["master_addr"] or "")
    assert config.get("nnodes") == 2  # NNODES=${#IPs[@]} over IPs=('IP1' 'IP2')
    assert config.get("world") == 16
    assert "inside a `for` loop" in (reasons["node_rank"] or "")
    assert config.values["node_rank"].source is not None
    assert config.values["node_rank"].source.text == "        NODE_RANK=$i"


# -- MindFormers YAML details -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "mib"),
    [("58GB", 59392), ("59392MB", 59392), ("1.5GB", 1536), ("58gb", 59392), ("64G", 65536)],
)
def test_max_device_memory_sizes(text: str, mib: int) -> None:
    assert memory_mb(text) == (mib, None)


@pytest.mark.parametrize("text", ["lots", "58 GiB please", 58, None])
def test_max_device_memory_rejects(text: object) -> None:
    value, why = memory_mb(text)
    assert value is None and why is not None and "58GB" in why


def yaml_config(tmp_path: Path, text: str) -> TrainingConfig:
    return script(tmp_path, text, "c.yaml")


def test_yaml_defaults_and_kv_heads(tmp_path: Path) -> None:
    config = yaml_config(
        tmp_path,
        "parallel_config:\n  model_parallel: 2\nmodel:\n  model_config:\n"
        "    type: Qwen2Config\n    num_heads: 16\n",
    )
    assert config.get("tp") == 2 and config.get("dp") == 1 and config.get("pp") == 1
    assert config.where("dp") is None
    assert config.get("num_kv_heads") == 16 and config.where("num_kv_heads") is None
    assert config.get("swiglu") is True
    assert "world" not in config.values
    mp = config.where("tp")
    assert mp is not None and (mp.line, mp.col) == (2, 19)


def test_yaml_device_num_gives_world(tmp_path: Path) -> None:
    config = yaml_config(tmp_path, "parallel:\n  device_num: 16\nparallel_config: {}\n")
    assert config.get("world") == 16


def test_yaml_wrong_types_are_unresolved(tmp_path: Path) -> None:
    config = yaml_config(
        tmp_path,
        'parallel_config:\n  data_parallel: "4"\n  use_seq_parallel: 1\n'
        'context:\n  max_device_memory: "lots"\n',
    )
    assert config.values["dp"].unresolved == "data_parallel is '4', not a whole number"
    assert config.values["sp"].unresolved is not None
    assert config.values["max_device_memory_mb"].unresolved is not None
    assert config.get("dp") is None


def test_yaml_block_collections_point_at_their_key() -> None:
    sel = read("mf_qwen25_7b_finetune_8k.yaml").values["select_recompute"]
    assert sel.source is not None and sel.source.text.strip() == "select_recompute:"
    assert isinstance(sel.value, dict) and sel.value["feed_forward\\.mul"] == [14, 14]


def test_yaml_gelu_is_not_swiglu(tmp_path: Path) -> None:
    config = yaml_config(
        tmp_path, "model:\n  model_config:\n    type: LlamaConfig\n    hidden_act: gelu\n"
    )
    assert config.get("swiglu") is False


def test_yaml_mcore_names_of_mtp_and_the_fused_swiglu(tmp_path: Path) -> None:
    # as MindFormers' telechat3 YAML (master) writes them
    config = yaml_config(
        tmp_path,
        "use_legacy: False\nmodel:\n  model_config:\n    hidden_act: 'fusedswiglu'\n"
        "    num_nextn_predict_layers: &mtp_depth 1\n",
    )
    assert config.get("swiglu") is True
    assert config.get("mtp_num_layers") == 1
    assert config.get("mtp_depth") is None


# -- MindFormers swap_config ------------------------------------------------------------------

SWAP_YAML = """\
parallel_config:
  pipeline_stage: 2
recompute_config:
  recompute: [0, 3]
swap_config:
  swap: True
  layer_swap:
    - backward_prefetch: 20
      layers: [3, 1]
    - backward_prefetch: 20
      layers: False
  op_swap:
    - op_name: 'attention'
      backward_prefetch: 20
      layers: [0, 1]
    - op_name: ['attention', 'feed_forward\\.mul']
      backward_prefetch: 10
      layers: [2]
"""


def test_yaml_swap_config_is_read_and_located(tmp_path: Path) -> None:
    config = yaml_config(tmp_path, SWAP_YAML)
    assert config.get("swap") is True
    assert config.get("layer_swap") == [1, 3]
    assert config.get("op_swap") == {"attention": [0, 1, 2], "feed_forward\\.mul": [2]}
    lines = {
        n: (s.line, s.text.strip())
        for n in ("swap", "layer_swap", "op_swap")
        if (s := config.where(n))
    }
    assert lines == {
        "swap": (6, "swap: True"),
        "layer_swap": (7, "layer_swap:"),
        "op_swap": (12, "op_swap:"),
    }
    env = derive(config)
    assert env["swap_recompute_conflicts"] == [
        "layer 3 (layer_swap and recompute)",
        "attention in layer 0 (op_swap and recompute)",
    ]
    assert env["estimated_used_mb"] is None  # swap is not modelled by the estimate


def test_yaml_swap_defaults(tmp_path: Path) -> None:
    off = yaml_config(tmp_path, "parallel_config:\n  pipeline_stage: 2\n")
    assert (off.get("swap"), off.get("layer_swap"), off.get("op_swap")) == (False, [], {})
    assert off.where("swap") is None and derive(off)["swap_recompute_conflicts"] == []
    on = yaml_config(tmp_path, "recompute_config:\n  recompute: True\nswap_config:\n  swap: True\n")
    assert on.get("op_swap") == {r".*\.flash_attention": True}  # MindFormers' default swap
    assert derive(on)["swap_recompute_conflicts"] == ["every layer and operator (recompute: True)"]


@pytest.mark.parametrize(
    ("block", "name", "line", "needle"),
    [
        ("swap_config: True\n", "swap", 3, "swap_config is True, not a mapping"),
        ("swap_config:\n  swap: 'yes'\n", "swap", 4, "swap is 'yes', not True or False"),
        ("swap_config:\n  swap: True\n  layer_swap: 3\n", "layer_swap", 5, "layer_swap is 3"),
        (
            "swap_config:\n  swap: True\n  layer_swap:\n    - backward_prefetch: 1\n      layers: '0-3'\n",
            "layer_swap",
            7,
            "layer_swap layers is '0-3', not True, False or a list of layer numbers",
        ),
        (
            "swap_config:\n  swap: True\n  layer_swap:\n    - {backward_prefetch: 1, layers: [[0, 1]]}\n",
            "layer_swap",
            6,
            "not True, False or a list of layer numbers",
        ),
        (
            "swap_config:\n  swap: True\n  op_swap:\n    mul: [{backward_prefetch: 1, layers: [2]}]\n",
            "op_swap",
            5,
            "op_swap item has no op_name",
        ),
        ("swap_config:\n  swap: True\n  op_swap: [attention]\n", "op_swap", 5, "not a mapping"),
    ],
)
def test_yaml_malformed_swap_config_is_unresolved(
    tmp_path: Path, block: str, name: str, line: int, needle: str
) -> None:
    """Never a traceback, never a guess: the reason, at the line, and no verdict on swap."""
    config = yaml_config(tmp_path, "recompute_config:\n  recompute: [0]\n" + block)
    value = config.values[name]
    assert value.value is None and needle in (value.unresolved or "")
    assert value.source is not None and value.source.line == line
    env = derive(config)
    assert env["swap_recompute_conflicts"] is None
    assert any(item.startswith(f"{name}: ") for item in env["unresolved"])


# -- launch scripts: expansion, quoting, arithmetic ---------------------------------------------


def test_deep_arithmetic_is_unresolved_not_a_crash(tmp_path: Path) -> None:
    deep = "(" * 2000 + "1" + ")" * 2000
    config = script(tmp_path, launch(f"TP=$(({deep}))", "--tensor-model-parallel-size $TP"))
    assert config.get("tp") is None
    assert "nested too deeply" in (config.values["tp"].unresolved or "")


def test_arithmetic_over_known_values(tmp_path: Path) -> None:
    config = script(
        tmp_path,
        "NPUS_PER_NODE=8\nNNODES=2\nWORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))\n"
        "HALF=$(( WORLD_SIZE / 2 - (1 + 1) ))\n"
        "msrun --worker_num $WORLD_SIZE --local_worker_num $NPUS_PER_NODE pretrain_gpt.py"
        " --global-batch-size $((HALF * 3))\n",
    )
    assert config.get("world") == 16
    assert config.get("nnodes") == 2
    assert config.get("gbs") == 18
    world = config.where("world")
    assert world is not None and world.line == 3 and world.col == 12


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("1+2*3", 7),
        ("(1+2)*3", 9),
        ("7/2", 3),
        ("-7/2", -3),
        ("-7%3", -1),
        ("2**10", 1024),
        ("010", 8),
        ("0x10", 16),
        ("1<<4", 16),
        ("3>2 && 2>3", 0),
        ("1 ? 5 : 6", 5),
        ("-(-3)", 3),
        ("A*B", 6),
        ("", 0),
    ],
)
def test_arith_evaluator(expr: str, value: int) -> None:
    variables = {"A": 2, "B": 3}
    assert evaluate(expr, variables.__getitem__) == value


@pytest.mark.parametrize("expr", ["1/0", "2+", "a=1", "x++", "08", "1 $ 2", "(1"])
def test_arith_evaluator_refuses(expr: str) -> None:
    with pytest.raises(ArithError):
        evaluate(expr, lambda name: 1)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("TP=$((8 / 0))", "division by 0"),
        ("TP=$(($MISSING * 2))", "$MISSING is not set in the script"),
        ("TP=$((MISSING * 2))", "$MISSING is not set in the script"),
        ("TP=$(nproc)", "command substitution"),
        ("TP=`nproc`", "backquotes"),
        ("TP=$1", "positional parameter"),
        ("ARR=(2 4)\nI=1\nTP=${ARR[$I]}", "reads an array this way"),
        ("TP=${UNDEFINED%%x}", "pattern or substring"),
        ("if true; then\n  TP=2\nfi", "inside an `if` block (line 2)"),
        ("for i in 1 2; do TP=$i; done", "inside a `for` loop"),
        ("[ -n x ] && TP=2", "after `&&`"),
        ("f() {\n  TP=2\n}", "inside a function body"),
        ("read TP", "read from input"),
        ("TP=${TP_SIZE:?set TP_SIZE}", "stops the script"),
    ],
)
def test_unresolved_values_say_why(tmp_path: Path, body: str, needle: str) -> None:
    config = script(tmp_path, launch(body, "--tensor-model-parallel-size $TP"))
    tp = config.values["tp"]
    assert tp.value is None
    assert tp.unresolved is not None and needle in tp.unresolved, tp.unresolved
    assert tp.source is not None


def test_unset_variable_used_directly(tmp_path: Path) -> None:
    text = launch("", "--tensor-model-parallel-size ${TP} --num-layers 4")
    config = script(tmp_path, text)
    tp = config.values["tp"]
    assert tp.unresolved == "$TP is not set in the script"
    use = text.splitlines()[2]
    assert tp.source is not None and tp.source.line == 3
    assert tp.source.col == use.index("${TP}") + 1
    assert config.get("num_layers") == 4


@pytest.mark.parametrize(
    ("body", "args", "key", "value"),
    [
        # quoting
        ("TP='2'", "--tensor-model-parallel-size $TP", "tp", 2),
        ('TP="2"', "--tensor-model-parallel-size $TP", "tp", 2),
        ("TP=2 # the tensor parallel size", "--tensor-model-parallel-size $TP", "tp", 2),
        ("export TP=2", "--tensor-model-parallel-size $TP", "tp", 2),
        ("declare -x TP=2", "--tensor-model-parallel-size $TP", "tp", 2),
        ("A=--tensor-model-parallel-size\nB=2", '"$A" "$B"', "tp", 2),
        ("TP=2\nunset TP\nTP=4", "--tensor-model-parallel-size $TP", "tp", 4),
        ('ALGO="megatron_cp_algo"', "--context-parallel-algo '$ALGO'", "cp_algo", "$ALGO"),
        ("X=1", r"--context-parallel-algo \$X", "cp_algo", "$X"),
        # defaults
        ("TP=${TP_SIZE:-2}", "--tensor-model-parallel-size $TP", "tp", 2),
        ("TP_SIZE=\nTP=${TP_SIZE:-2}", "--tensor-model-parallel-size $TP", "tp", 2),
        ("TP_SIZE=4\nTP=${TP_SIZE:-2}", "--tensor-model-parallel-size $TP", "tp", 4),
        (": ${TP:=8}", "--tensor-model-parallel-size $TP", "tp", 8),
        ("SP=1", "${SP:+--sequence-parallel}", "sp", True),
        ("", "${SP:+--sequence-parallel}", "sp", False),
        ("L=abcd", "--num-layers ${#L}", "num_layers", 4),
        # appending, flag forms, last one wins
        ("ARGS=--num-layers\nARGS+=' 12'", "$ARGS", "num_layers", 12),
        ("", "--num-layers=12", "num_layers", 12),
        ("", "--num-layers 12 --num-layers 14", "num_layers", 14),
        ("", "--num-layer-list 7,7,7,7", "num_layer_list", [7, 7, 7, 7]),
        (
            "",
            "--use-manual-layer-allocation --manual-layers 5,6,6,5",
            "num_layer_list",
            [5, 6, 6, 5],
        ),
        ("", "--recompute-activations", "recompute_granularity", "selective"),
        ("", "--num-attention-heads 32 --group-query-attention", "num_kv_heads", 1),
        ("", "--num-attention-heads 32 --num-query-groups 8", "num_kv_heads", 32),
        ("", "--fp16", "params_dtype", "fp16"),
        ("", "", "params_dtype", "fp32"),
        ("", "--num-virtual-stages-per-pipeline-rank 3", "vpp", 3),
        (
            "",
            "--num-layers 32 --pipeline-model-parallel-size 4 "
            "--num-layers-per-virtual-pipeline-stage 2",
            "vpp",
            4,
        ),
    ],
)
def test_script_forms(tmp_path: Path, body: str, args: str, key: str, value: Any) -> None:
    config = script(tmp_path, launch(body, args))
    got = config.values[key]
    assert got.unresolved is None
    assert got.value == value


def test_manual_layers_are_the_split_only_with_their_switch(tmp_path: Path) -> None:
    # AscendSpeed ignores --manual-layers unless --use-manual-layer-allocation is given
    config = script(tmp_path, launch("", "--num-layers 22 --manual-layers 5,6,6,5"))
    assert "num_layer_list" not in config.values


def test_multiline_quoted_args_with_continuations_and_comments(tmp_path: Path) -> None:
    text = (
        "#!/bin/bash\n"
        "# a comment with $TP and --num-layers 99 in it\n"
        "TP=2   # trailing comment\n"
        'GPT_ARGS="\n'
        "    --tensor-model-parallel-size ${TP} \\\n"
        "\t--num-layers 24 \\\n"
        '    --seq-length "4096"\n'
        '"\n'
        "msrun --worker_num=8 \\\n"
        "    --local_worker_num=8 \\\n"
        "    pretrain_gpt.py \\\n"
        "    $GPT_ARGS \\\n"
        "    --micro-batch-size 2 \\\n"
        "    2>&1 | tee logs/x.log &\n"
    )
    heredoc = "cat <<-EOF > notes.txt\nmsrun --worker_num 99 x.py --num-layers 77\n\tEOF\n"
    text = text.replace("msrun --worker_num=8", heredoc + "msrun --worker_num=8")
    config = script(tmp_path, text)
    assert (config.get("tp"), config.get("num_layers"), config.get("mbs")) == (2, 24, 2)
    # `"4096"` inside the quoted string closes and reopens it, as with --log_dir="msrun_log"
    assert config.get("seq_length") == 4096
    assert config.get("world") == 8  # not the 99 in the here-document
    layers = config.where("num_layers")
    assert layers is not None and (layers.line, layers.col) == (6, 15)
    mbs = config.where("mbs")
    assert mbs is not None and mbs.line == 16
    assert "stray_args" not in config.values


def test_assignments_after_the_launch_do_not_count(tmp_path: Path) -> None:
    config = script(tmp_path, launch("TP=2", "--tensor-model-parallel-size $TP") + "TP=8\n")
    assert config.get("tp") == 2


def test_python_without_launcher_uses_script_variables(tmp_path: Path) -> None:
    config = script(
        tmp_path,
        "WORLD_SIZE=4\nNPUS_PER_NODE=4\nNNODES=1\nMASTER_PORT=6001\n"
        "python -u pretrain_gpt.py --tensor-model-parallel-size 2\n",
    )
    assert (config.get("world"), config.get("local_worker_num"), config.get("tp")) == (4, 4, 2)
    assert config.get("master_port") == 6001


def test_python_m_torch_distributed_run(tmp_path: Path) -> None:
    config = script(
        tmp_path,
        "python -m torch.distributed.run --nproc_per_node 4 --nnodes 2 pretrain_gpt.py --bf16\n",
    )
    assert (config.get("world"), config.get("nnodes"), config.get("params_dtype")) == (8, 2, "bf16")


def test_unresolved_args_word_blocks_defaults(tmp_path: Path) -> None:
    config = script(tmp_path, launch("", "--num-layers 4 $EXTRA_ARGS"))
    assert config.get("num_layers") == 4
    tp = config.values["tp"]
    assert tp.value is None and tp.unresolved is not None and "EXTRA_ARGS" in tp.unresolved


def test_msrun_prefix_and_exported_sim_level(tmp_path: Path) -> None:
    exported = script(tmp_path, "export MS_SIMULATION_LEVEL=2\n" + launch())
    assert exported.get("sim_level") == 2
    prefixed = script(
        tmp_path, "MS_SIMULATION_LEVEL=0 msrun --worker_num 2 --local_worker_num 2 train.py\n"
    )
    assert prefixed.get("sim_level") == 0
    later_export = script(
        tmp_path, "MS_SIMULATION_LEVEL=3\nexport MS_SIMULATION_LEVEL\n" + launch()
    )
    assert later_export.get("sim_level") == 3


def test_script_content_without_suffix(tmp_path: Path) -> None:
    config = script(tmp_path, launch("TP=2", "--tensor-model-parallel-size $TP"), "launch")
    assert config.kind == "megatron" and config.get("tp") == 2


def test_yaml_content_without_suffix(tmp_path: Path) -> None:
    config = script(tmp_path, "parallel_config:\n  data_parallel: 2\n", "config")
    assert config.kind == "mindformers" and config.get("dp") == 2


# -- msrun command lines ---------------------------------------------------------------------


MSRUN_EQ = (
    "msrun --worker_num=16 --local_worker_num=8 --master_addr=10.0.0.1 --master_port=8119 "
    "--node_rank=1 --log_dir=msrun_log --join=True --sim_level=1 train.py --foo"
)
MSRUN_SPACE = (
    "msrun --worker_num 16 --local_worker_num 8 --master_addr 10.0.0.1 --master_port 8119 "
    "--node_rank 1 --log_dir msrun_log --join True --sim_level 1 train.py --foo"
)


@pytest.mark.parametrize("cmdline", [MSRUN_EQ, MSRUN_SPACE], ids=["equals", "space"])
def test_msrun_both_forms(cmdline: str) -> None:
    config = read_msrun(cmdline)
    assert config.kind == "msrun" and config.path == "<msrun>"
    got = {k: config.get(k) for k in ("world", "local_worker_num", "nnodes", "node_rank")}
    assert got == {"world": 16, "local_worker_num": 8, "nnodes": 2, "node_rank": 1}
    assert config.get("master_port") == 8119 and config.get("master_addr") == "10.0.0.1"
    assert config.get("join") is True and config.get("sim_level") == 1
    assert config.get("log_dir") == "msrun_log"
    port = config.where("master_port")
    assert port is not None and port.file == "<msrun>" and port.line == 1
    assert cmdline[port.col - 1 :].startswith("8119")
    assert "framework" not in config.values  # train.py --foo: no Megatron flags


def test_msrun_defaults_and_origin() -> None:
    config = read_msrun("msrun train.py", origin="--msrun")
    assert (config.get("world"), config.get("local_worker_num"), config.get("nnodes")) == (8, 8, 1)
    assert config.get("master_port") == 8118 and config.where("world") is None
    assert config.path == "--msrun"


def test_msrun_with_megatron_args_and_prefix_match() -> None:
    config = read_msrun(
        "MS_SIMULATION_LEVEL=1 msrun --worker_num 4 --local 4 --rank 0 pretrain_gpt.py "
        "--tensor-model-parallel-size=2 --pipeline-model-parallel-size 2"
    )
    assert config.get("framework") == "megatron"
    assert (config.get("world"), config.get("local_worker_num")) == (4, 4)
    assert (config.get("tp"), config.get("pp"), config.get("sim_level")) == (2, 2, 1)
    assert "cp" not in config.values  # a bare command line fills no Megatron defaults
    node_rank = config.values["node_rank"]
    assert node_rank.value is None and "--rank_table_file" in (node_rank.unresolved or "")


@pytest.mark.parametrize(
    ("cmdline", "key", "needle"),
    [
        ("msrun --worker_num=10 --local_worker_num=4 x.py", "nnodes", "not a multiple"),
        ("msrun --worker_num=eight x.py", "world", "not an integer"),
        ("msrun --join=yes x.py", "join", "not True or False"),
        (
            "msrun --node_rank $NODE_RANK x.py",
            "node_rank",
            "$NODE_RANK is not set on the command line",
        ),
        ("msrun --master_port", "master_port", "has no value"),
    ],
)
def test_msrun_unresolved(cmdline: str, key: str, needle: str) -> None:
    value = read_msrun(cmdline).values[key]
    assert value.value is None and value.unresolved is not None and needle in value.unresolved


def test_msrun_bare_options_and_torchrun() -> None:
    bare = read_msrun("--worker_num=4 --local_worker_num=2")
    assert (bare.get("world"), bare.get("nnodes")) == (4, 2)
    torch = read_msrun("torchrun --nproc-per-node 8 --nnodes 2 --node-rank 1 pretrain_gpt.py")
    assert (torch.get("world"), torch.get("local_worker_num"), torch.get("node_rank")) == (16, 8, 1)
    elastic = read_msrun("torchrun --nproc_per_node 8 --nnodes 1:4 train.py")
    assert elastic.values["nnodes"].unresolved is not None and elastic.get("world") is None


# -- errors ----------------------------------------------------------------------------------


BAD_CONFIGS = [
    (
        "bad.yaml",
        "parallel_config:\n  data_parallel: 4\n   model_parallel: 2\n",
        r"bad\.yaml:3:18: invalid YAML",
    ),
    (
        "dup.yaml",
        "parallel_config:\n  a: 1\n  a: 2\n",
        r"dup\.yaml:3:3: invalid YAML: duplicate key 'a'",
    ),
    (
        "tag.yaml",
        "parallel_config: !!python/object:os.system {}\n",
        r"tag\.yaml:1:18: invalid YAML",
    ),
    ("list.yaml", "- 1\n- 2\n", r"list\.yaml:1: not a MindFormers config"),
    ("other.yaml", "foo: 1\n", r"other\.yaml: not a MindFormers config: it has none of"),
    ("empty.sh", "\n  \n", r"empty\.sh: empty file"),
    ("bin.sh", b"\x89PNG\r\n\x1a\n\xff", r"bin\.sh:1: not a text file"),
    ("nul.yaml", "a: 1\n\x00\n", r"nul\.yaml:2: not a text file"),
    (
        "quote.sh",
        'A=1\nB="\n --num-layers 2\n',
        r"quote\.sh:2: unexpected end of file: unterminated double quote",
    ),
    ("squote.sh", "A='x\n", r"squote\.sh:1: unexpected end of file: unterminated single quote"),
    ("arith.sh", "A=$((1 + 2)\nmsrun x.py\n", r"arith\.sh:1: .*\$\(\("),
    ("subst.sh", "A=${}\n", r"subst\.sh:1: \$\{\}: bad substitution"),
    ("redir.sh", "echo >\n", r"redir\.sh:1: syntax error: nothing after the redirection"),
    # found by fuzzing: a backslash at the very end of a double-quoted string
    ("eof.sh", 'A="abc\\', r"eof\.sh:1: unexpected end of file: unterminated double quote"),
    (
        "listkey.yaml",
        "? [a, b]\n: 1\n",
        r"listkey\.yaml:1:3: invalid YAML: a mapping key must be a plain value",
    ),
    ("bigint.yaml", "parallel_config:\n  data_parallel: " + "9" * 5000 + "\n", r"invalid YAML"),
    (
        "deep.yaml",
        "a: " + "[" * 5000 + "]" * 5000 + "\n",
        r"deep\.yaml:1:\d+: invalid YAML: nested too deeply to read$",
    ),
    ("deep.sh", "X=" + "${A:-" * 3000 + "}" * 3000 + "\n", r"deep\.sh: nested too deeply"),
    ("nolaunch.sh", "TP=2\necho $TP\n", r"nolaunch\.sh: no msrun, torchrun or python command"),
    (
        "notes.txt",
        "just some notes\n",
        r"notes\.txt: not a MindFormers YAML or a launch script",
    ),
]
"""(file name, content, the one-line error it must give); the file name is the test id."""


@pytest.mark.parametrize(
    ("name", "content", "message"), BAD_CONFIGS, ids=[name for name, _, _ in BAD_CONFIGS]
)
def test_bad_input_raises_one_line_config_error(
    tmp_path: Path, name: str, content: str | bytes, message: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as info:
        read_config(str(path))
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path))
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


@pytest.mark.parametrize(
    ("target", "message"),
    [("missing.yaml", "cannot read: No such file"), (".", "is a directory")],
)
def test_unreadable_paths(tmp_path: Path, target: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read_config(str(tmp_path / target))


@pytest.mark.parametrize(
    ("cmdline", "message"),
    [
        ("", "empty msrun command line"),
        ("ls -l", "expected an msrun command line"),
        ("python train.py", "got a plain python command"),
        ("msrun --log_dir 'x", "unterminated single quote"),
    ],
)
def test_bad_msrun_lines(cmdline: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        read_msrun(cmdline)
    assert str(info.value).startswith("<msrun>")


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_deep_yaml_gives_one_message_with_either_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: str
) -> None:
    """LibYAML stops at its own depth limit, the pure-Python parser at Python's: one message."""
    if not hasattr(yaml, loader):
        pytest.skip(f"PyYAML was built without {loader}")
    monkeypatch.setattr(yamlload, "_Loader", getattr(yaml, loader))
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"deep\.yaml:1:\d+: invalid YAML: nested too deeply"):
        read_config(str(path))


# -- real files as they are (issue 11) ---------------------------------------------------------


def test_bash_arrays_are_expanded_element_by_element(tmp_path: Path) -> None:
    """Megatron-LM's examples keep launcher and model options in arrays."""
    config = script(
        tmp_path,
        "#!/bin/bash\nGPUS=8\nDIST=(\n  --nproc_per_node $GPUS   # per node\n  --nnodes 2\n)\n"
        'MODEL=(--num-layers 24 "--hidden-size" 1024)\nPAR=(--tensor-model-parallel-size 8)\n'
        'PAR+=(--pipeline-model-parallel-size 2)\ntorchrun ${DIST[@]} pretrain_gpt.py "${MODEL[@]}" ${PAR[*]}\n',
    )
    assert config.get("world") == 16
    assert (config.get("num_layers"), config.get("hidden_size")) == (24, 1024)
    assert (config.get("tp"), config.get("pp")) == (8, 2)
    pp_at = config.where("pp")
    assert pp_at is not None and (pp_at.line, pp_at.text) == (
        9,
        "PAR+=(--pipeline-model-parallel-size 2)",
    )


@pytest.mark.parametrize(
    ("body", "value"),
    [("A=(x y z)\nTP=${A[2]}", None), ("A=(2 4)\nTP=${A[1]}", 4), ("TP=2\nX=${TP[0]}", None)],
)
def test_array_indexing(tmp_path: Path, body: str, value: int | None) -> None:
    config = script(tmp_path, launch(body, "--tensor-model-parallel-size $TP"))
    assert config.get("tp") == value or (value is None and config.get("tp") in (None, 2))


def test_a_scalar_read_as_an_array_is_the_scalar(tmp_path: Path) -> None:
    """`${DISTRIBUTED_ARGS[@]}` on a plain string is the whole string (bash)."""
    config = script(
        tmp_path,
        '#!/bin/bash\nDIST="--nproc_per_node 8 --nnodes 1"\n'
        "torchrun ${DIST[@]} pretrain_gpt.py --tensor-model-parallel-size 4\n",
    )
    assert config.get("world") == 8


@pytest.mark.parametrize(
    "assignment",
    [
        "MASTER_ADDR=<master_ip_address>",
        'MASTER_ADDR="your master node IP"',
        'MASTER_ADDR="master node ip"',
        "MASTER_ADDR=<Specify the master address>",
    ],
)
def test_placeholders_are_unresolved_values_not_a_rejected_file(
    tmp_path: Path, assignment: str
) -> None:
    config = script(
        tmp_path,
        f"#!/bin/bash\n{assignment}\nNODE_RANK=<local_rank>\n"
        "msrun --master_addr $MASTER_ADDR --worker_num 16 --local_worker_num 8 "
        "--node_rank $NODE_RANK pretrain_gpt.py --tensor-model-parallel-size 2 "
        "--load $CKPT_PATH\n",
    )
    assert config.get("world") == 16  # the words after the placeholder are still read
    assert "placeholder" in (config.values["master_addr"].unresolved or "")
    assert "placeholder" in (config.values["node_rank"].unresolved or "")
    assert "stray_args" not in config.values


def test_a_redirection_is_not_taken_for_a_placeholder(tmp_path: Path) -> None:
    config = script(tmp_path, launch("TP=2", "--tensor-model-parallel-size $TP <in.txt >out.log"))
    assert config.get("tp") == 2


@pytest.mark.parametrize(
    "command",
    [
        "uv run --extra ssm torchrun --nproc_per_node 8 pretrain_gpt.py",
        "uv run python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py",
        "$PREFIX torchrun --nproc_per_node 8 pretrain_gpt.py",
    ],
)
def test_wrapped_launchers_are_read(tmp_path: Path, command: str) -> None:
    config = script(tmp_path, f"#!/bin/bash\n{command} --tensor-model-parallel-size 4\n")
    assert (config.get("world"), config.get("tp")) == (8, 4)
    assert config.get("entry") == "pretrain_gpt.py"


def test_an_unknown_launcher_leaves_the_card_count_unknown(tmp_path: Path) -> None:
    config = script(
        tmp_path, "#!/bin/bash\n${LAUNCH_SCRIPT} ${SCRIPT_DIR}/finetune.py --num-layers 24\n"
    )
    assert config.get("num_layers") == 24
    assert config.get("world") is None
    assert "launcher is unknown" in (config.values["world"].unresolved or "")


def test_a_positional_yaml_is_the_trainers_config_not_a_stray_word(tmp_path: Path) -> None:
    config = script(
        tmp_path, "#!/bin/bash\ntorchrun --nproc_per_node 8 train_fsdp2.py cfg/model.yaml --x 1\n"
    )
    assert config.get("config_file") == "cfg/model.yaml"
    assert "stray_args" not in config.values
    assert (config.get("entry"), config.get("job")) == ("train_fsdp2.py", "train")


@pytest.mark.parametrize(
    ("entry", "job"),
    [
        ("pretrain_gpt.py", "train"),
        ("posttrain_gpt.py", "train"),
        ("inference.py", "predict"),
        ("evaluation.py", "eval"),
        ("my_tool.py", "unknown"),
    ],
)
def test_the_entry_script_says_the_job(tmp_path: Path, entry: str, job: str) -> None:
    config = script(tmp_path, f"#!/bin/bash\nmsrun --worker_num 8 {entry} --num-layers 4\n")
    assert (config.get("entry"), config.get("job")) == (entry, job)


@pytest.mark.parametrize(
    ("entry", "what"),
    [("convert_ckpt.py", "checkpoint conversion"), ("preprocess_data.py", "data preprocessing")],
)
def test_converters_and_preprocessors_start_no_job(tmp_path: Path, entry: str, what: str) -> None:
    with pytest.raises(ConfigError, match=f"a {what} script .*nothing to check"):
        script(tmp_path, f"#!/bin/bash\npython {entry} --num-layers 4 --target-pp-size 2\n")


def test_crlf_is_a_value_at_the_first_such_line_and_the_rest_is_read(tmp_path: Path) -> None:
    text = "#!/bin/bash\nTP=2\r\nmsrun --worker_num 8 pretrain_gpt.py \\\r\n --tensor-model-parallel-size $TP\r\n"
    config = script(tmp_path, text)
    assert config.get("crlf_line") == 2
    assert config.get("tp") == 2


def test_torchrun_ignores_a_nnodes_variable_it_is_not_given(tmp_path: Path) -> None:
    config = script(
        tmp_path,
        "#!/bin/bash\nNNODES=16\npython -m torch.distributed.launch pretrain_gpt.py --num-layers 2\n",
    )
    assert (config.get("world"), config.get("nnodes")) == (1, 1)


def test_mindformers_run_mode_moe_config_lora_and_mtp_are_read(tmp_path: Path) -> None:
    path = tmp_path / "lora.yaml"
    path.write_text(
        "run_mode: finetune\nmoe_config:\n  expert_num: 8\nmodel:\n  model_config:\n"
        "    num_layers: 61\n    mtp_depth: 1\n    hidden_dropout_prob: 0.1\n"
        "    pet_config:\n      pet_type: lora\n      lora_rank: 16\n"
        "      target_modules: '.*wq|.*wk|.*wv|.*wo'\n",
        encoding="utf-8",
    )
    config = read_config(str(path))
    assert config.get("run_mode") == "finetune"
    assert config.get("moe_config_experts") == 8
    assert (config.get("mtp_depth"), config.get("hidden_dropout")) == (1, 0.1)
    assert (config.get("pet_type"), config.get("lora_r")) == ("lora", 16)


def test_mindformers_r0_6_lora_under_model_arch_pet_is_read(tmp_path: Path) -> None:
    """MindFormers r0.6 put LoRA in model.arch.pet (configs/glm/run_glm_6b_lora.yaml at
    v0.6.0): unread, the GLM-6B LoRA config of 8491f6f8e was estimated as a full finetune at
    298% of its 30 GB, an error; read, its base is frozen (124%, a warning)."""
    path = tmp_path / "run_glm_6b_lora.yaml"
    path.write_text(
        "run_mode: finetune\nmodel:\n  model_config:\n    num_layers: 28\n  arch:\n"
        "    type: GLMForPreTrainingWithLora\n    pet:\n      pet_type: lora\n"
        "      pet_config:\n        lora_rank: 8\n        lora_alpha: 32\n",
        encoding="utf-8",
    )
    config = read_config(str(path))
    assert (config.get("pet_type"), config.get("lora_r")) == ("lora", 8)


def test_an_array_appended_to_under_a_condition_keeps_its_elements(tmp_path: Path) -> None:
    """Megatron-LM examples/mimo/scripts/run_qwen35_vlm_train.sh (3554868f08) appends the
    master address to its torchrun arguments only on several nodes: the whole array was
    unknown, torchrun's default of one process was taken, and TP 8 was the error
    config-world-not-divisible ('1 cards'). The elements before the append stand either way."""
    config = script(
        tmp_path,
        "#!/bin/bash\nGPUS_PER_NODE=${GPUS_PER_NODE:-8}\nNUM_NODES=${NNODES:-1}\n"
        'DISTRIBUTED_ARGS=(\n    --nproc_per_node "$GPUS_PER_NODE"\n    --nnodes "$NUM_NODES"\n)\n'
        'if [ "$NUM_NODES" -gt 1 ]; then\n    DISTRIBUTED_ARGS+=(--master_addr localhost)\nfi\n'
        'torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py --tensor-model-parallel-size 8 '
        "--num-layers 8 --hidden-size 1024 --num-attention-heads 16\n",
    )
    assert (config.get("local_worker_num"), config.get("nnodes"), config.get("world")) == (8, 1, 8)


def test_a_crlf_script_that_starts_no_job_still_gives_the_crlf_finding(tmp_path: Path) -> None:
    """bash fails on the line endings whatever the script runs."""
    config = script(tmp_path, "#!/bin/bash\r\npython convert_ckpt.py --num-layers 2\r\n")
    assert config.get("crlf_line") == 1
    assert "tp" not in config.values


def test_a_section_read_as_a_scalar_is_a_refused_key_not_a_read_error(tmp_path: Path) -> None:
    """MindFormers unpacks parallel_config with **: a scalar there stops its start-up, which is
    an error finding at the key (config-key-refused), and the rest of the file is still read."""
    path = tmp_path / "shape.yaml"
    path.write_text("parallel_config: 8\nmodel:\n  model_config:\n    num_layers: 4\n")
    config = read_config(str(path))
    refused = config.values["refused_keys"]
    assert refused.value == [
        "parallel_config is the int 8, not a mapping (a line under it is indented wrong, or a "
        "key lacks the space after ':'): MindFormers calls "
        "TransformerOpParallelConfig(**parallel_config)"
    ]
    assert refused.source is not None and refused.source.line == 1
    assert config.get("num_layers") == 4


def test_a_mindformers_launch_beside_the_yaml_sets_its_run_mode(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(
        "run_mode: predict\nparallel_config:\n  data_parallel: 8\n"
    )
    (tmp_path / "run.sh").write_text(
        '#!/bin/bash\nbash scripts/msrun_launcher.sh "run_mindformer.py \\\n'
        ' --config train.yaml --run_mode finetune" 8\n'
    )
    config = read_config(str(tmp_path / "train.yaml"))
    assert config.get("run_mode") == "finetune" and config.get("world") == 8
    source = config.where("run_mode")
    assert source is not None and source.file.endswith("run.sh") and source.line == 2
    # the script itself is checked as the YAML it launches
    launched = read_config(str(tmp_path / "run.sh"))
    assert launched.path.endswith("train.yaml") and launched.get("run_mode") == "finetune"


def test_msrun_running_run_mindformer_names_the_cards(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("run_mode: train\nparallel_config:\n  data_parallel: 2\n")
    (tmp_path / "go.sh").write_text(
        "msrun --worker_num=16 --local_worker_num=8 run_mindformer.py --config=a.yaml\n"
    )
    assert read_config(str(tmp_path / "a.yaml")).get("world") == 16


def test_a_script_launching_a_yaml_that_is_not_there_is_not_linted(tmp_path: Path) -> None:
    (tmp_path / "go.sh").write_text("msrun --worker_num=8 run_mindformer.py --config x.yaml\n")
    with pytest.raises(NotATrainingConfig, match=r"launches MindFormers with x\.yaml"):
        read_config(str(tmp_path / "go.sh"))


@pytest.mark.parametrize(
    ("launch", "world"),
    [
        ("deepspeed --num_gpus 8 --num_nodes 2 pretrain_gpt.py", 16),
        ("deepspeed --num_gpus=4 pretrain_gpt.py", 4),
        ("deepspeed --hostfile hosts --num_gpus 8 pretrain_gpt.py", None),
        ('ray job submit --address="http://127.0.0.1:8265" -- python3 train.py', None),
    ],
)
def test_deepspeed_and_ray_launches_are_read(
    tmp_path: Path, launch: str, world: int | None
) -> None:
    path = tmp_path / "go.sh"
    path.write_text(f"#!/bin/bash\n{launch} --tensor-model-parallel-size 2 --num-layers 8\n")
    config = read_config(str(path))
    assert config.get("tp") == 2 and config.get("num_layers") == 8
    assert config.get("world") == world


def test_set_overrides_by_name_yaml_path_or_flag() -> None:
    sets = parse_sets(
        ["run_mode=finetune", "parallel_config.model_parallel=4", "--seq-length=8192"]
    )
    assert sets == {"run_mode": "finetune", "tp": 4, "seq_length": 8192}
    assert parse_sets(["context.max_device_memory=58GB"]) == {"max_device_memory_mb": 59392}
    with pytest.raises(UsageError, match="unknown setting"):
        parse_sets(["no_such_thing=1"])
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        parse_sets(["run_mode"])


def test_msrun_given_on_the_command_line_sets_the_run_mode_of_a_mindformers_yaml() -> None:
    launch = read_msrun(
        "msrun --worker_num=8 --local_worker_num=8 run_mindformer.py --config x.yaml "
        "--run_mode finetune"
    )
    assert launch.get("run_mode") == "finetune" and launch.get("world") == 8
    assert launch.get("framework") is None  # the YAML's framework stays MindFormers


def test_tp_2d_is_read_and_leaves_the_estimate_unvalidated(tmp_path: Path) -> None:
    """MindSpeed --tp-2d --tp-x --tp-y: modelled from its documentation only, so a memory
    error needs the model states alone over the card (estimate_unvalidated)."""
    args = "--tensor-model-parallel-size 4 --tp-2d --tp-x 2 --tp-y 2"
    config = script(tmp_path, launch(args=args))
    assert (config.get("tp_2d"), config.get("tp_x"), config.get("tp_y")) == (True, 2, 2)
    env = derive(config)
    assert "MindSpeed --tp-2d (modelled from its documentation)" in env["estimate_unvalidated"]
    assert env["estimate_band"] is None
    plain = derive(script(tmp_path, launch(args="--tensor-model-parallel-size 4"), "b.sh"))
    assert not any("tp-2d" in u for u in plain["estimate_unvalidated"])


def test_swap_optimizer_is_read_and_leaves_the_estimate_unvalidated(tmp_path: Path) -> None:
    args = "--use-distributed-optimizer --swap-optimizer --swap-optimizer-times 8"
    config = script(tmp_path, launch(args=args))
    assert (config.get("swap_optimizer"), config.get("swap_optimizer_times")) == (True, 8)
    env = derive(config)
    assert (
        "MindSpeed --swap-optimizer (modelled from its documentation)"
        in env["estimate_unvalidated"]
    )
    assert env["estimate_band"] is None
