"""What triage must conclude on every real MindSpore 2.10.0 scenario (issue #2's bar)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES


def triage_json(capsys: pytest.CaptureFixture[str], *targets: str) -> tuple[int, dict[str, Any]]:
    code = main(["triage", "--format", "json", *targets])
    return code, json.loads(capsys.readouterr().out)


def statuses(report: dict[str, Any]) -> dict[int, str]:
    return {r["rank"]: r["status"] for r in report["ranks"]}


def categories(report: dict[str, Any], severity: str = "error") -> set[str]:
    return {f["category"] for f in report["findings"] if f["severity"] == severity}


HEALTHY = {
    "cpu_2nodes_noderank_ok": 4,
    "cpu_dp2_compile_statistics": 2,
    "cpu_dp2_glog_logtostderr0": 2,
    "cpu_dp2_success_glog1": 2,
    "cpu_dp2_success_glog2": 2,
    "dryrun_sim0_8p_glog2": 8,
    "dryrun_sim1_8p_nojoin_glog2": 8,
    "dryrun_sim1_rank0_tracker_runtime_stats": 1,
}


@pytest.mark.parametrize("scenario", sorted(HEALTHY))
def test_healthy_runs_report_no_error(capsys: pytest.CaptureFixture[str], scenario: str) -> None:
    code, report = triage_json(capsys, str(FIXTURES / scenario))
    assert code == 0
    assert report["outcome"] == "ok"
    assert report["root_cause"] is None
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    assert set(statuses(report).values()) == {"finished"}
    assert len(report["ranks"]) == HEALTHY[scenario]


def test_two_nodes_with_node_rank_map_files_to_global_ranks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = FIXTURES / "cpu_2nodes_noderank_ok"
    _, report = triage_json(capsys, str(base / "node0/msrun_log"), str(base / "node1/msrun_log"))
    files = {r["rank"]: (r["log_dir"].split("/")[-2], r["file"]) for r in report["ranks"]}
    assert files == {
        0: ("node0", "worker_0.log"),
        1: ("node0", "worker_1.log"),
        2: ("node1", "worker_2.log"),
        3: ("node1", "worker_3.log"),
    }


def test_exception_on_rank1_is_the_root_cause_and_rank0_a_victim(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = triage_json(capsys, str(FIXTURES / "cpu_dp2_exception_rank1/msrun_log"))
    assert code == 1
    assert report["outcome"] == "failed"
    cause = report["root_cause"]
    assert (cause["ranks"], cause["category"], cause["file"], cause["line"]) == (
        [1],
        "python-exception",
        "worker_1.log",
        42,
    )
    assert "deliberate failure on rank 1 at step 3" in cause["message"]
    assert statuses(report) == {0: "killed", 1: "failed"}
    roles = {f["rule"]: f["role"] for f in report["findings"]}
    assert roles["node-timed-out"] == "symptom"
    assert roles["killed-by-msrun"] == "victim"


def test_with_the_console_the_exit_code_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    base = FIXTURES / "cpu_dp2_exception_rank1"
    _, report = triage_json(
        capsys, str(base / "msrun_log"), "--console", str(base / "msrun_console.txt")
    )
    exits = {r["rank"]: r["exit_code"] for r in report["ranks"]}
    assert exits == {0: None, 1: 1}
    assert report["root_cause"]["ranks"] == [1]


def test_oom_names_the_rank_that_ran_out_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = triage_json(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed"))
    assert code == 1
    cause = report["root_cause"]
    assert (cause["ranks"], cause["category"], cause["file"], cause["line"]) == (
        [1],
        "oom",
        "msrun_log/worker_1.log",
        20,
    )
    assert statuses(report) == {0: "failed", 1: "failed"}
    assert "oom" in categories(report) and "node-timeout" in categories(report)
    oom = next(f for f in report["findings"] if f["category"] == "oom")
    assert oom["ranks"] == [0, 1] and oom["role"] == "root-cause"


def test_missing_node_blames_the_ranks_that_never_registered(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = triage_json(capsys, str(FIXTURES / "cpu_cluster_timeout_missing_node/msrun_log"))
    assert code == 1
    cause = report["root_cause"]
    assert (cause["ranks"], cause["category"]) == ([2, 3], "cluster-init-timeout")
    assert statuses(report) == {0: "timed-out", 1: "timed-out", 2: "unknown", 3: "unknown"}


@pytest.mark.parametrize(
    ("scenario", "category", "rule"),
    [
        (
            "dryrun_sim1_strategy_product_16_on_8",
            "strategy-mismatch",
            "strategy-needs-more-devices",
        ),
        (
            "dryrun_sim1_pipeline_stages_3_on_8",
            "pipeline-stage-mismatch",
            "pipeline-stages-not-dividing-devices",
        ),
    ],
)
def test_configuration_errors_name_every_rank(
    capsys: pytest.CaptureFixture[str], scenario: str, category: str, rule: str
) -> None:
    code, report = triage_json(capsys, str(FIXTURES / scenario / "msrun_log"))
    assert code == 1
    cause = report["root_cause"]
    assert (cause["ranks"], cause["category"], cause["rule"]) == (list(range(8)), category, rule)
    assert set(statuses(report).values()) == {"failed"}
    assert "python-exception" not in categories(report)  # the traceback is the same fault


def test_dryrun_memory_summary_per_rank(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = triage_json(capsys, str(FIXTURES / "dryrun_sim1_8p_nojoin_glog2/msrun_log"))
    for rank in report["ranks"]:
        memory = rank["memory"]
        assert (
            memory["device_mb"],
            memory["used_mb"],
            memory["peak_used_mb"],
            memory["peak_actual_mb"],
        ) == (65536, 61430, 137, 142)


def test_sim_rank_is_read_from_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = triage_json(capsys, str(FIXTURES / "dryrun_sim1_rank0_tracker_runtime_stats"))
    (rank,) = report["ranks"]
    assert rank["rank"] == 0
    assert rank["memory"]["peak_actual_mb"] == 142
    assert rank["compile"]["total_ms"] == 1152.5


def test_compile_and_progress_at_glog_v1(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = triage_json(capsys, str(FIXTURES / "cpu_dp2_success_glog1/msrun_log"))
    rank0 = report["ranks"][0]
    assert rank0["compile"]["count"] == 1
    assert rank0["compile"]["total_ms"] == 490.06
    assert rank0["progress"]["step"] == 16  # 2 epochs x 8 steps
    assert rank0["progress"]["step_time_ms"] == pytest.approx(3.0, abs=100)
