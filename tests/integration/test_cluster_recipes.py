"""The README's cluster recipes, run as written against stand-ins for srun, pdsh and
kubectl (tests/integration/fakes/_fake.py) that run each command once per simulated node,
each node with its own real msrun_log (fixtures/cpu_2nodes_noderank_ok's two nodes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FIXTURES, ROOT

FAKE = Path(__file__).parent / "fakes" / "_fake.py"
BASE = FIXTURES / "cpu_2nodes_noderank_ok"


def recipe(name: str) -> str:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- cluster:recipe {name} -->") + 2
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start:end]) + "\n"


@pytest.fixture
def cluster(tmp_path: Path) -> dict[str, str]:
    """Two nodes, each with its own msrun_log, and the tools on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("srun", "pdsh", "kubectl"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" {tool} "$@"\n')
        script.chmod(0o755)
    msrun = bin_dir / "msrun"
    msrun.write_text("#!/bin/sh\necho 'msrun: training failed' >&2\nexit 1\n")
    msrun.chmod(0o755)
    for node in ("node0", "node1"):
        shutil.copytree(BASE / node / "msrun_log", tmp_path / "nodes" / node / "msrun_log")
    path = os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), os.environ["PATH"]])
    return {
        **os.environ,
        "PATH": path,
        "FAKE_NODES": "node0 node1",
        "NODES": "node0,node1",
        "FAKE_NODE_ROOT": str(tmp_path / "nodes"),
        "LOG_DIR": "/local/job/msrun_log",
        "JOB": "llm",
        "NO_COLOR": "1",
    }


def bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], env=env, cwd=cwd, capture_output=True, text=True)


def nodes_of(report: dict[str, object]) -> list[tuple[str, str]]:
    return [(n["host"], n["state"]) for n in report["nodes"]]  # type: ignore[index,union-attr]


def test_slurm_recipe_collects_even_when_training_fails(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    """`set -e` stops the script at the failed training step; the EXIT trap still runs."""
    done = bash(recipe("slurm"), cluster, tmp_path)
    assert done.returncode == 1  # the training step's failure stays the job's
    report = json.loads((tmp_path / "verdict.json").read_text())
    assert nodes_of(report) == [("node0", "complete"), ("node1", "complete")]
    assert report["outcome"] == "ok" and len(report["ranks"]) == 4


def test_pdsh_recipe(cluster: dict[str, str], tmp_path: Path) -> None:
    done = bash(recipe("pdsh"), cluster, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK  no faults; 4 finished")
    lines = (tmp_path / "facts.jsonl").read_text().splitlines()
    assert all(line.startswith(("node0: {", "node1: {")) for line in lines)


def test_kubernetes_recipe(cluster: dict[str, str], tmp_path: Path) -> None:
    done = bash(recipe("kubernetes"), cluster, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nodes: 2 (2 complete)" in done.stdout


def test_shared_storage_recipe(cluster: dict[str, str], tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "msrun_log"
    shared.mkdir(parents=True)
    for node in ("node0", "node1"):
        for path in (BASE / node / "msrun_log").iterdir():
            shutil.copy(path, shared / path.name)
    env = {
        **cluster,
        "LOG_DIR": str(shared),
        "FAKE_SHARED": "1",
        "FACTS_DIR": str(tmp_path / "facts"),
    }
    done = bash(recipe("shared"), env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "facts").iterdir()) == [
        "node0.shard-0-of-2.facts.jsonl",
        "node1.shard-1-of-2.facts.jsonl",
    ]
    assert "OK  no faults; 4 finished" in done.stdout


def test_srun_labels_are_cut(cluster: dict[str, str], tmp_path: Path) -> None:
    script = 'srun -l --ntasks-per-node=1 msrunwatch facts "$LOG_DIR" -o - > facts.jsonl\nmsrunwatch triage facts.jsonl'
    done = bash(script, cluster, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "facts.jsonl").read_text().startswith(("0: {", "1: {"))
    assert "nodes: 2 (2 complete)" in done.stdout
