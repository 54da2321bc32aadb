"""Logs read beside the run's config (`triage --config`, `check LOGS CONFIG`): the config's
stages and estimate reach the verdict, and the memory-estimate-gap rule compares them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msrunwatch.cli import main

SCRIPT = """#!/bin/bash
msrun --worker_num 2 --local_worker_num 2 --master_port 6000 --log_dir msrun_log pretrain_gpt.py \\
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 \\
    --num-layers 24 --hidden-size 4096 --ffn-hidden-size 11008 --num-attention-heads 32 \\
    --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 \\
    --padded-vocab-size 32000 --swiglu --use-flash-attn --sequence-parallel --bf16
"""


def worker(rank: int, used: int) -> str:
    pid = 211896 + rank
    return (
        f"[WARNING] DISTRIBUTED({pid},ffffb0b63020,python):2025-09-16-10:02:4{rank}.118.315 "
        "[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] "
        f"This node {rank} rank id: {rank}\n"
        f"[INFO] DEVICE({pid},ffffb0b63020,python):2025-09-16-10:11:1{rank}.423.692 "
        "[mindspore/ccsrc/plugin/ascend/res_manager/mem_manager/ascend_memory_adapter.cc:269] "
        "DeInitialize] Ascend Memory Adapter deinitialize success, statistics:\n"
        "Device MOC memory size: 65536M\nMindSpore Used memory size: 58196M\n"
        "MindSpore memory base address: 0x12c0c0000000\n"
        f"Used peak memory usage (without fragments): {used}M\n"
        f"Actual peak memory usage (with fragments): {used + 1000}M\n"
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "msrun_log"
    logs.mkdir()
    (logs / "worker_0.log").write_text(worker(0, 30000), encoding="utf-8")
    (logs / "worker_1.log").write_text(worker(1, 48700), encoding="utf-8")
    config = tmp_path / "train.sh"
    config.write_text(SCRIPT, encoding="utf-8")
    return logs, config


def test_triage_with_config_sets_each_rank_beside_its_stage_estimate(
    run_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, config = run_dir
    main(["triage", str(logs), "--config", str(config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    estimates = [r["estimate"] for r in report["ranks"]]
    # unfused SwiGLU (no --use-fused-swiglu) and Megatron's default dropout masks: ~51,033 MiB
    assert all(e and e["stage"] == 0 and 50_500 < e["used_mb"] < 51_500 for e in estimates)
    gap = [f for f in report["findings"] if f["rule"] == "memory-estimate-gap"]
    assert len(gap) == 1 and gap[0]["ranks"] == [0] and gap[0]["severity"] == "info"


def test_check_logs_and_config_together(
    run_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, config = run_dir
    code = main(["check", str(logs), str(config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert str(config) in report["log_dirs"]
    assert any(f["rule"] == "memory-estimate-gap" for f in report["findings"])


def test_ignoring_the_gap_rule_works(
    run_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, config = run_dir
    args = ["triage", str(logs), "--config", str(config), "--format", "json"]
    main([*args, "--ignore", "memory-estimate-gap"])
    report = json.loads(capsys.readouterr().out)
    assert not any(f["rule"] == "memory-estimate-gap" for f in report["findings"])


def test_check_logs_and_config_takes_the_card_count_from_the_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MindFormers YAML does not state its card count: the 2 ranks of the logs give it."""
    logs = tmp_path / "msrun_log"
    logs.mkdir()
    for rank in (0, 1):
        (logs / f"worker_{rank}.log").write_text(worker(rank, 30000), encoding="utf-8")
    config = tmp_path / "train.yaml"
    config.write_text(
        "parallel:\n  parallel_mode: 1\nparallel_config:\n  data_parallel: 4\n"
        "  model_parallel: 1\n  pipeline_stage: 1\n",
        encoding="utf-8",
    )
    code = main(["check", str(logs), str(config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    mismatch = [f for f in report["findings"] if f["rule"] == "config-parallel-product-mismatch"]
    assert code == 1 and len(mismatch) == 1
    assert mismatch[0]["message"].endswith("but the job has 2 cards")
    assert not any(f["rule"] == "config-card-count-unknown" for f in report["findings"])


def test_triage_with_a_config_for_another_card_count_warns_and_sets_no_estimate(
    run_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, config = run_dir
    config.write_text(
        SCRIPT.replace("--worker_num 2 --local_worker_num 2", "--worker_num 8 --local_worker_num 8")
    )
    main(["triage", str(logs), "--config", str(config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert all(r["estimate"] is None for r in report["ranks"])
    (warning,) = [f for f in report["findings"] if f["rule"] == "config-world-differs-from-run"]
    assert warning["severity"] == "warning"
    assert "launches 8 workers but the run's logs show 2 ranks" in warning["message"]
