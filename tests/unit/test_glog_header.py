"""The GLOG line shapes, from real MindSpore 2.10.0 lines."""

from __future__ import annotations

import pytest

from msrunwatch.read.patterns import GLOG_HEADER

REAL = [
    (
        "[WARNING] DISTRIBUTED(4206,7f013da79b80,python):2026-11-21-05:12:44.300.858 "
        "[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] This node 1 rank id: 1",
        (
            "WARNING",
            "DISTRIBUTED",
            "4206",
            "2026-11-21-05:12:44.300.858",
            "PostProcess",
            "This node 1 rank id: 1",
        ),
    ),
    (
        "[ERROR] ME(23115:139741591436160,MainProcess):2026-11-21-05:27:15.979.000 "
        "[mindspore/parallel/cluster/process_entity/_api.py:365] Worker process 23119 exit with "
        "exception. Error code: 1.",
        (
            "ERROR",
            "ME",
            "23115",
            "2026-11-21-05:27:15.979.000",
            None,
            "Worker process 23119 exit with exception. Error code: 1.",
        ),
    ),
    (
        "[INFO] ME(6325:140497743895424,MainProcess):2026-11-21-05:14:08.310.00 "
        "[mindspore/parallel/cluster/process_entity/_api.py:375] All workers successfully exit!",
        (
            "INFO",
            "ME",
            "6325",
            "2026-11-21-05:14:08.310.00",
            None,
            "All workers successfully exit!",
        ),
    ),
    (
        "[ERROR] RUNTIME_FRAMEWORK(31813,7f78777fe6c0,python):2026-11-21-05:34:25.600.374 "
        "[mindspore/ccsrc/backend/ms_backend/runtime/actors/base/memory_manager_actor.cc:515] "
        "SetOpContextMemoryAllocFail] #umsg#Memory not enough:#umsg#Memory isn't enough",
        (
            "ERROR",
            "RUNTIME_FRAMEWORK",
            "31813",
            "2026-11-21-05:34:25.600.374",
            "SetOpContextMemoryAllocFail",
            "#umsg#Memory not enough:#umsg#Memory isn't enough",
        ),
    ),
    (
        "[INFO] COMMON(4179,7ffab17c8b80,python3):2026-11-21-05:13:19.152.468 "
        "[mindspore/ccsrc/pybind_api/frontend/manager.cc:161] ClearResPart2] Start clear snapshot manager...",
        (
            "INFO",
            "COMMON",
            "4179",
            "2026-11-21-05:13:19.152.468",
            "ClearResPart2",
            "Start clear snapshot manager...",
        ),
    ),
    (
        "[ERROR] HCCL(80812,):2026-06-17-02:21:43.853.226 [hccl/src/x.cc:12] Func] socket timeout",
        ("ERROR", "HCCL", "80812", "2026-06-17-02:21:43.853.226", "Func", "socket timeout"),
    ),
]


@pytest.mark.parametrize(("line", "expected"), REAL, ids=[e[1][1] + "-" + e[1][0] for e in REAL])
def test_glog_header_fields(line: str, expected: tuple[str, ...]) -> None:
    m = GLOG_HEADER.match(line)
    assert m is not None
    assert (m["level"], m["module"], m["pid"], m["ts"], m["func"], m["msg"]) == expected


@pytest.mark.parametrize(
    "line",
    [
        "epoch: 1 step: 1, loss is 9.81625747680664",
        "[train_dense] rank=1 size=2 pid=12365",
        "[PROF]compile_graph costs 580.05 msec.",
        "[MS_RUNTIME_PROF]The jit_level is: O0, and enable kernelbykernel executor.",
        "[",
        "[WARNING] DISTRIBUTED(1,2,python):2026-13-45-99:99:99.xxx [a.cc:1] F] broken timestamp",
    ],
)
def test_prints_and_broken_lines_are_not_glog_headers(line: str) -> None:
    assert GLOG_HEADER.match(line) is None
