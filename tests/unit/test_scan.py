"""The block scanner: what one file's bytes turn into, whatever the chunking."""

from __future__ import annotations

import pytest

from msrunwatch.read.facts import FileRole
from msrunwatch.read.scan import FileScanner
from msrunwatch.read.timestamps import iso
from msrunwatch.rules.matcher import LineMatcher
from tests.support import FIXTURES, ScanText

MEMORY_BLOCK = """\
[WARNING] DEVICE(25230,7f01694aab80,python):2026-11-21-05:31:04.068.856 [mindspore/ccsrc/plugin/ascend/res_manager/mem_manager/ascend_memory_adapter.cc:271] DeInitialize] Ascend Memory Adapter deinitialize success, statistics:
Device MOC memory size: 65536M
MindSpore Used memory size: 61430M
MindSpore memory base address: 0x7ffccd1be8c7
Used peak memory usage (without fragments): 137M
Actual peak memory usage (with fragments): 142M

"""


def test_memory_summary_block(scan_text: ScanText) -> None:
    facts = scan_text(MEMORY_BLOCK)
    m = facts.memory
    assert m is not None
    assert (m.device_mb, m.used_mb, m.peak_used_mb, m.peak_actual_mb) == (65536, 61430, 137, 142)
    assert m.base_address == "0x7ffccd1be8c7"
    assert m.line == 2
    assert facts.finished_line == 1  # teardown means the process ended normally


def test_memory_summary_at_info_is_read_at_glog_v1(scan_text: ScanText) -> None:
    info = MEMORY_BLOCK.replace("[WARNING]", "[INFO]").replace(":271]", ":269]")
    m = scan_text(info).memory
    assert m is not None and m.peak_actual_mb == 142


def test_older_hbm_summary_in_bytes(scan_text: ScanText) -> None:
    old = "Device HBM memory size: 34359738368\nMindSpore Used memory size: 32212254720\n"
    m = scan_text(old).memory
    assert m is not None and (m.device_mb, m.used_mb) == (32768, 30720)
    assert m.peak_actual_mb is None


COMPILE_GLOG1 = """\
[INFO] PIPELINE(6351,7fd39e1ddb80,python):2026-11-21-05:14:07.539.394 [mindspore/ccsrc/frontend/jit/ps/executor/graph_executor_py.cc:379] CompileInner] Start compiling, phase: train.1795238047449484032.140546114540688.0
[INFO] RUNTIME_FRAMEWORK(6351,7fd39e1ddb80,python):2026-11-21-05:14:08.020.098 [mindspore/ccsrc/backend/ms_backend/ms_backend_base.cc:1392] Build] [PROF]compile_backend_graph costs 33.832 msec.
[INFO] PIPELINE(6351,7fd39e1ddb80,python):2026-11-21-05:14:08.029.516 [mindspore/ccsrc/frontend/jit/ps/executor/graph_executor_py.cc:435] CompileInner] Finish compiling.
[INFO] PIPELINE(6351,7fd39e1ddb80,python):2026-11-21-05:14:08.029.525 [mindspore/ccsrc/frontend/jit/ps/executor/graph_executor_py.cc:436] CompileInner] [PROF]compile_graph costs 490.06 msec.
"""


def test_compile_markers_at_info(scan_text: ScanText) -> None:
    c = scan_text(COMPILE_GLOG1).compile
    assert (c.count, c.total_ms, c.in_progress) == (1, 490.06, False)
    assert dict(c.stages) == {"compile_graph": 490.06, "compile_backend_graph": 33.832}
    assert iso(c.first_start) == "2026-11-21T05:14:07.539394"


def test_compile_in_progress_until_finished(scan_text: ScanText) -> None:
    started = COMPILE_GLOG1.splitlines()[0] + "\n"
    assert scan_text(started).compile.in_progress


def test_bare_prof_lines_count_once_when_info_copies_exist(scan_text: ScanText) -> None:
    bare = "[PROF]compile_graph costs 490.06 msec.\n"
    assert scan_text(bare).compile.total_ms == 490.06
    assert scan_text(COMPILE_GLOG1 + bare).compile.total_ms == 490.06


@pytest.mark.parametrize(
    ("lines", "step", "loss", "step_ms"),
    [
        (["epoch: 1 step: 8, loss is 1.5", "epoch: 2 step: 3, loss is 0.25"], 11, 0.25, None),
        (
            [
                "epoch: 1 step: 2, loss is 3.0",
                "Train epoch time: 711.843 ms, per step time: 88.980 ms",
            ],
            2,
            3.0,
            88.98,
        ),
        (
            [
                "2025-04-07 15:34:29,173 - [mindformers/core/callback/callback.py:529] - INFO - "
                "{ Epoch:[  2/  2], step:[    2/   19], loss: 10.633, per_step_time: 1752ms, lr: 1e-05, "
                "overflow cond: False, loss_scale: 1.0, global_norm: [1 508834], "
                "train_throughput_per_npu: 170.738T"
            ],
            21,
            10.633,
            1752.0,
        ),
        (
            [
                " [2025-08-01 07:19:37] iteration        7/    5000 | consumed samples:          896 |"
                " elapsed time per iteration (ms): 19138.8 | learning rate: 6.976744E-08 |"
                " global batch size:   128 | lm loss: 1.043863E+01 | loss scale: 1.0 |"
            ],
            7,
            10.43863,
            19138.8,
        ),
        (["[dryrun_shard] rank=0 step=1 loss=0.0"], 1, 0.0, None),
    ],
    ids=["lossmonitor-epochs", "timemonitor", "mindformers", "megatron", "key-value"],
)
def test_progress_lines(
    scan_text: ScanText, lines: list[str], step: int, loss: float, step_ms: float | None
) -> None:
    p = scan_text("\n".join(lines) + "\n").progress
    assert p is not None
    assert (p.step, p.loss, p.step_time_ms) == (step, pytest.approx(loss), step_ms)


def test_rank_from_cluster_and_from_dryrun(scan_text: ScanText) -> None:
    node = (
        "[WARNING] DISTRIBUTED(14140,7fd584eb3b80,python):2026-11-21-05:59:04.750.366 "
        "[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] This node 2 rank id: 2\n"
    )
    assert scan_text(node, rank=0).rank == 2
    sim = (
        "[WARNING] ME(25235,7f9973689b80,python):2026-11-21-05:30:51.565.246 "
        "[mindspore/ccsrc/runtime/hardware_abstract/collective/collective_manager.cc:173] "
        "Initialize] This is simulation mode with level 1. Process's RANK_ID: 5, RANK_SIZE: 8\n"
    )
    facts = scan_text(sim, rank=0)
    assert (facts.rank, facts.world_size, facts.sim_level) == (5, 8, 1)


OOM_TAIL = (FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log/worker_1.log").read_bytes()


def test_oom_record_fires_the_specific_rule_not_the_python_fallback(scan_text: ScanText) -> None:
    facts = scan_text(OOM_TAIL)
    rules = [h.rule for h in facts.hits]
    assert rules == ["allocate-memory-failed", "oom-memory-not-enough"]
    oom = facts.hits[1]
    assert (oom.line, oom.count, oom.time_exact) == (20, 2, True)  # ERROR line + exception text
    assert oom.capture("kernel") == "0_Default/BroadcastTo-op0"
    assert iso(oom.time) == "2026-11-21T05:34:25.600374"


def test_plain_exception_fires_the_python_fallback(scan_text: ScanText) -> None:
    data = (FIXTURES / "cpu_dp2_exception_rank1/msrun_log/worker_1.log").read_bytes()
    facts = scan_text(data)
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 42)]
    hit = facts.hits[0]
    assert hit.message == (
        "RuntimeError: msrunwatch test: deliberate failure on rank 1 at step 3"
        " (at train_dense.py:79 in on_train_step_end)"
    )
    # The traceback has no timestamp: it is dated by the first GLOG line after it (the
    # process's exit lines), not by the one before it (start-up, a minute earlier).
    assert not hit.time_exact
    assert iso(hit.time) == "2026-11-21T05:16:38.356193"


def test_a_fault_at_the_end_of_a_log_is_dated_by_the_line_before(scan_text: ScanText) -> None:
    data = "[WARNING] ME(1,a,python):2026-11-21-05:00:00.000.000 [a.cc:1] F] start\nValueError: x\n"
    hit = scan_text(data).hits[0]
    assert (iso(hit.time), hit.time_exact) == ("2026-11-21T05:00:00.000000", False)


def test_unprefixed_fault_is_dated_by_the_skipped_info_line_before_it(scan_text: ScanText) -> None:
    data = (
        "[WARNING] ME(1,a,python):2026-11-21-05:00:00.000.000 [a.cc:1] F] start\n"
        "[INFO] ME(1,a,python):2026-11-21-06:00:00.000.000 [a.cc:1] F] much later\n"
        "ValueError: boom\n"
    )
    hit = scan_text(data).hits[0]
    assert iso(hit.time) == "2026-11-21T06:00:00.000000"


@pytest.mark.parametrize(
    "line",
    [
        "[WARNING] DISTRIBUTED(12365,7fe5f480bb80,python):2026-11-21-05:16:30.294.549 [mindspore/ccsrc/cluster/topology/compute_graph_node.cc:193] Register] Failed to connect to the meta server node url: 127.0.0.1:50219",
        "[WARNING] DISTRIBUTED(12365,7fe5f480bb80,python):2026-11-21-05:16:31.397.986 [mindspore/ccsrc/cluster/topology/cluster_context.cc:316] BuildCluster] Topology build timed out., retry(1/1200).",
        "[WARNING] DISTRIBUTED(12365,7fe5f480bb80,python):2026-11-21-05:16:30.886.776 [mindspore/ccsrc/cluster/topology/compute_graph_node.cc:392] ReconnectWithTimeoutWindow] Failed to register and try to reconnect to the meta server.",
        "[WARNING] PARALLEL(21872,7fcc8a006b80,python):2026-11-21-05:26:15.223.663 [mindspore/ccsrc/frontend/parallel/pipeline_transformer/pipeline_transformer.cc:207] MainGraph] Pipeline Parallel with no 'lazy_inline' is deprecated, '@lazy_inline' should be enabled",
    ],
    ids=["meta-server-url", "topology-retry", "reconnect", "lazy-inline"],
)
def test_benign_startup_warnings_are_never_findings(scan_text: ScanText, line: str) -> None:
    assert scan_text(line + "\n").hits == ()


@pytest.mark.parametrize(
    "path",
    [
        "cpu_dp2_oom_alloc_failed/msrun_log/worker_1.log",
        "cpu_dp2_exception_rank1/msrun_log/worker_1.log",
        "cpu_dp2_success_glog1/msrun_log/worker_0.log",
        "dryrun_sim1_rank0_tracker_runtime_stats/msrun_log/worker_0.log",
        "cpu_dp2_exception_rank1/msrun_console.txt",
    ],
)
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_chunking_never_changes_the_facts(scan_text: ScanText, path: str, chunk: int) -> None:
    data = (FIXTURES / path).read_bytes()
    role = FileRole.CONSOLE if path.endswith(".txt") else FileRole.WORKER
    assert scan_text(data, role=role, chunk=chunk) == scan_text(data, role=role)


def test_line_count_and_size_match_the_file(scan_text: ScanText) -> None:
    data = (FIXTURES / "cpu_dp2_success_glog1/msrun_log/worker_0.log").read_bytes()
    facts = scan_text(data, chunk=65536)
    assert facts.lines == data.count(b"\n")
    assert facts.size == len(data)


def test_hostile_bytes_do_not_stop_the_file(scan_text: ScanText) -> None:
    data = (
        b"\xff\xfe garbage \x00 with NUL\r\n"
        + b"x" * 300_000
        + b"\n[\n"
        + b"[WARNING] ME(1,a,python):2026-13-45-99:99:99.xxx [a.cc:1] F] bad time\n"
        + b"epoch: 1 step: 4, loss is 0.5\r\n"
        + b"ValueError: last line without newline"
    )
    facts = scan_text(data, chunk=1000)
    assert facts.lines == 6
    assert facts.progress is not None and facts.progress.step == 4
    assert [h.rule for h in facts.hits] == ["python-exception"]


# -- issue 10: hostile and broken input -------------------------------------------------

WARNING = "[WARNING] ME(1,a,python):2026-11-21-05:00:00.000.000 [a.cc:1] F] start\n"


@pytest.mark.parametrize("chunk", [None, 65536, 1 << 20, 3 << 20])
def test_a_line_over_1_mib_is_one_line_however_it_is_fed(scan_text: ScanText, chunk: int) -> None:
    data = WARNING.encode() + b"x" * (3 << 20) + b"\nValueError: after the long line\n"
    facts = scan_text(data, chunk=chunk)
    assert facts.lines == 3
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 3)]


def test_a_long_last_line_without_newline_counts_once(scan_text: ScanText) -> None:
    data = b"ValueError: first\n" + b"y" * (2 << 20)
    assert scan_text(data, chunk=65536).lines == 2
    assert scan_text(data).lines == 2


@pytest.mark.parametrize("chunk", [None, 1, 5])
def test_cr_only_files_have_lines(scan_text: ScanText, chunk: int) -> None:
    data = b"training starts\rValueError: boom\rlast words\r"
    facts = scan_text(data, chunk=chunk)
    assert facts.lines == 3
    assert [(h.rule, h.line) for h in facts.hits] == [("python-exception", 2)]


def test_crlf_files_are_not_cr_only(scan_text: ScanText) -> None:
    data = b"training starts\r\nValueError: boom\r\n"
    facts = scan_text(data, chunk=1)
    assert (facts.lines, facts.hits[0].line, facts.hits[0].text) == (2, 2, "ValueError: boom")


def test_gbk_text_is_read_as_gb18030_and_said_so(scan_text: ScanText) -> None:
    data = "RuntimeError: 设备内存不足，请减小批大小\n".encode("gbk") + b"plain \xff\xfe bytes\n"
    facts = scan_text(data)
    assert "设备内存不足" in facts.hits[0].message
    assert facts.encodings == (("gb18030", 1), ("invalid", 1))


def test_a_scanner_knows_its_file_by_its_first_bytes(matcher: LineMatcher) -> None:
    scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, matcher, 0)
    scanner.feed(WARNING.encode() + b"epoch: 1 step: 1, loss is 0.5\n")
    assert scanner.same_head(WARNING.encode()[:40])
    rewritten = WARNING.replace("05:00:00", "06:00:00").encode()
    assert not scanner.same_head(rewritten)


def test_a_print_only_log_with_a_suites_dates_has_a_start_and_a_last_time(
    scan_text: ScanText,
) -> None:
    """MindOCR/MindCV/MindYOLO log with Python's logging, no GLOG line: the rank started."""
    facts = scan_text(
        "(ms-dev) $ python tools/train.py -c db_r18.yaml\n"
        "[2024-02-01 01:45:11] mindocr.train INFO - Standalone training. Device id: 0\n"
        "Distribute: False\n"
        "[2024-02-01 01:45:22] mindocr.train INFO - Model: det_resnet18-DBFPN-DBHead\n"
    )
    assert iso(facts.first_time) == "2024-02-01T01:45:11.000000"
    assert iso(facts.last_time) == "2024-02-01T01:45:22.000000"
