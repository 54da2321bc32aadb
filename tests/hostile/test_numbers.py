"""Numbers and dates a log line can forge: no crash, no infinity in JSON, no rolled dates."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.read.timestamps import iso, parse_glog, parse_iso
from tests.hostile.support import GLOG, cli, log_dir, strict_json

MANY = "9" * 5000
"""More digits than Python converts (4,300)."""

FORGED = {
    "memory-inf": ["Device MOC memory size: infM", "MindSpore Used memory size: 1M"],
    "memory-1e999": ["Device MOC memory size: 1e999M"],
    "memory-400-digits": [f"Device MOC memory size: {'9' * 400}M"],
    "memory-1e302": [  # finite, but over float's range once in bytes (found by the property test)
        "[ERROR] ME(0,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] ",
        "Device MOC memory size: 1.7144137714980277e+302M",
    ],
    "year-9999": ["[ERROR] ME(100,7f,python):9999-12-31-23:59:59.999.999 [a.cc:1] F] x"],
    "day-99": ["[ERROR] ME(100,7f,python):2026-11-99-05:34:25.600.374 [a.cc:1] F] x"],
    "rank-id": [
        f"[WARNING] ME(1,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] "
        f"This node a rank id: {MANY}"
    ],
    "pid": [f"[ERROR] ME({MANY},7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] x"],
    "step": [f"epoch: 1 step: {MANY}, loss is 0.5"],
    "epoch": [f"epoch: {MANY} step: 1, loss is 0.5"],
    "megatron-step": [f" iteration {MANY}/ 10 | lm loss: 1.0"],
    "prof-huge": [f"[PROF]compile_graph costs {'9' * 400} msec"],
    "alloc-size": [
        f"{GLOG}Memory isn't enough and alloc failed, kernel name: k, alloc size: {MANY}B"
    ],
    "alloc-size-400": [
        f"{GLOG}Memory isn't enough and alloc failed, kernel name: k, alloc size: {'9' * 400}B"
    ],
    "step-time-inf": [
        "epoch: 1 step: 1, loss is 0.5",
        f"epoch time: 1 ms, per step time: {'9' * 400} ms",
    ],
}
SCHEDULER = "[INFO] DISTRIBUTED(9,7f,python):2026-11-21-05:34:21.370.000 [meta_server_node.cc:1] x"


@pytest.mark.parametrize("name", sorted(FORGED))
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_forged_numbers_never_crash_triage(
    name: str, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = log_dir(tmp_path, *FORGED[name])
    code, out, err = cli(capsys, "triage", str(directory), "--format", fmt)
    assert code in (0, 1), err
    assert "Traceback" not in err
    if fmt == "json":
        strict_json(out)


@pytest.mark.parametrize("name", sorted(FORGED))
def test_forged_numbers_never_crash_check(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = log_dir(tmp_path, *FORGED[name])
    for fmt in ("sarif", "gitlab", "json"):
        code, out, err = cli(capsys, "check", str(directory), "--format", fmt)
        assert code in (0, 1), err
        strict_json(out)


@pytest.mark.parametrize("node", [MANY, "²"])
def test_a_forged_subject_node_id_never_crashes_the_judge(
    node: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = log_dir(tmp_path, GLOG + "x")
    timed_out = f"{GLOG}The node: {node} is timed out. It may exit with exception, please check"
    (directory / "scheduler.log").write_text(f"{SCHEDULER}\n{timed_out}\n", encoding="utf-8")
    code, out, err = cli(capsys, "triage", str(directory), "--format", "json")
    assert code == 1, err
    assert strict_json(out)["findings"]


def test_day_99_is_undated_not_rolled_into_the_next_month() -> None:
    assert parse_glog("2026-11-99-05:34:25.600.374") is None
    assert parse_glog("2026-02-30-05:34:25.600.374") is None
    assert parse_iso("2026-11-31 05:34:25") is None
    assert parse_glog("2026-11-21-05:34:25.600.374") is not None


def test_impossible_years_are_undated_and_iso_never_raises() -> None:
    assert parse_glog("9999-12-31-23:59:59.999.999") is None
    assert parse_glog("0001-01-01-00:00:00.000.000") is None
    assert iso(1e30) is None
    assert iso(float("inf")) is None


def test_to_int_bounds_digits_and_refuses_what_int_would() -> None:
    from msrunwatch.core.numbers import to_int

    assert to_int("42") == 42
    assert to_int("-7") == -7
    assert to_int(MANY) is None
    assert to_int("²") is None
    assert to_int("٤٢") is None  # Arabic-Indic digits: int() takes them, no log prints them
    assert to_int("") is None
    assert to_int("1_000") is None


def test_to_float_refuses_infinity_and_nan_unless_asked() -> None:
    from msrunwatch.core.numbers import to_float

    assert to_float("1.5e3") == 1500.0
    assert to_float("inf") is None
    assert to_float("1e999") is None
    assert to_float("nan") is None
    assert to_float("0x10") is None
    assert to_float("9" * 400) is None
    loss = to_float("nan", special=True)
    assert loss is not None and loss != loss
    assert to_float("inf", special=True) == float("inf")


def test_a_forged_expected_rank_count_is_not_believed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row per expected rank: 10**18 of them took all memory (found by bench/fuzz.py)."""
    directory = log_dir(tmp_path, GLOG + "x")
    registered = (
        "[INFO] DISTRIBUTED(9,7f,python):2026-11-21-05:34:21.370.000 [meta_server_node.cc:1] x] "
        "The new node: 0(role: MS_WORKER), rank id: 0, device id: 0, hostname: h, ip: 1 is "
        "registered successfully. Currently registered node number: 1, expected node number: "
        + "9"
        * 18
    )
    (directory / "scheduler.log").write_text(f"{SCHEDULER}\n{registered}\n", encoding="utf-8")
    code, out, err = cli(capsys, "triage", str(directory), "--format", "json")
    assert code in (0, 1), err
    assert len(strict_json(out)["ranks"]) == 1


@pytest.mark.parametrize("digits", [45, 400, 5000])
def test_a_yaml_number_of_too_many_digits_is_refused_where_it_is(
    digits: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(f"parallel_config:\n  data_parallel: {'9' * digits}\n", encoding="utf-8")
    code, _, err = cli(capsys, "check", str(config), "--devices", "8")
    assert code == 2
    assert "train.yaml:2:" in err and "digits" in err
