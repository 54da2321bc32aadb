"""Sizes a config can forge (issue 21, defect 1): a pipeline size of 40 digits, which the YAML
integer cap allows, or 100000000000 in a Megatron script, made `estimate` and `check` build one
estimate per pipeline stage until memory ran out (1.8 GB in 60 s; 2.8 GB in 20 s). Each command
now ends with a one-line finding or error, within a memory cap the old code ran through."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

import pytest

from tests.support import program

MEMORY_CAP = 768 * 1024 * 1024
"""Address space for the child: several times what checking a real config takes (about
25 MiB resident), far below what one estimate per forged stage needs."""
HANG_S = 110
"""Only a runaway reaches this (the hang guard of tests/hostile/conftest.py is at 120 s)."""

FORGED = {  # name: (file name, text, the forged size)
    "yaml-40-digit-pipeline": (
        "big.yaml",
        "parallel_config:\n  pipeline_stage: 1234567890123456789012345678901234567890\n",
        "1234567890123456789012345678901234567890",
    ),
    "megatron-1e11-pipeline": (
        "big.sh",
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py "
        "--pipeline-model-parallel-size 100000000000 --num-layers 8\n",
        "100000000000",
    ),
    "yaml-pipeline-and-layers": (
        "big_layers.yaml",
        "parallel_config:\n  pipeline_stage: 99999999999\n"
        "model:\n  model_config:\n    num_layers: 4\n    hidden_size: 1024\n",
        "99999999999",
    ),
}


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return program(*args, timeout=HANG_S, preexec_fn=_capped)


@pytest.mark.parametrize("name", sorted(FORGED))
@pytest.mark.parametrize("command", ["check", "estimate"])
def test_a_forged_pipeline_size_ends_with_one_line(name: str, command: str, tmp_path: Path) -> None:
    file_name, text, size = FORGED[name]
    path = tmp_path / file_name
    path.write_text(text, encoding="utf-8")
    done = _run(command, str(path))
    assert "internal error" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    if command == "check":
        # an error finding names the pipeline size, exactly, on one line of its own
        assert done.returncode == 1, (done.stdout, done.stderr)
        lines = [line for line in done.stdout.splitlines() if ": error config-" in line]
        assert any(size in line for line in lines), done.stdout
    else:
        # no per-stage table for a pipeline no cluster runs: the estimate says why, once
        assert done.returncode in (0, 1, 2), done.stderr
        said = done.stdout + done.stderr
        assert f"pipeline of {size} stages" in said, said
        assert said.count("\n") < 60, said
