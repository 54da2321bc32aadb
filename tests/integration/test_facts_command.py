"""`msrunwatch facts` and `msrunwatch triage FACTS` as a user runs them, in this process
(`cli.main`, so coverage measures the command, the driver and the merge): where the facts
go, what a node with nothing readable still tells the merge, shards, standard input,
evidence, gzip, and facts that arrive cut, twice under one name or from a newer schema.
One test runs the real entry point in a pipe and compares it with the in-process run."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES, ROOT

NODE0 = FIXTURES / "cpu_2nodes_noderank_ok" / "node0" / "msrun_log"
NODE1 = FIXTURES / "cpu_2nodes_noderank_ok" / "node1" / "msrun_log"
HANG = FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout" / "msrun_log"


class Cli:
    """`msrunwatch ARGS...` in this process: exit code, stdout, stderr."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
        self.capsys, self.monkeypatch = capsys, monkeypatch
        monkeypatch.chdir(ROOT)

    def __call__(self, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            fake = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
            self.monkeypatch.setattr(sys, "stdin", fake)
        code = main(list(args))
        out = self.capsys.readouterr()
        return code, out.out, out.err

    def json(self, *args: str, stdin: bytes | None = None) -> dict[str, Any]:
        code, out, err = self(*args, "--format", "json", stdin=stdin)
        assert code in (0, 1), err
        report: dict[str, Any] = json.loads(out)
        return report


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(capsys, monkeypatch)


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# -- where the facts go ----------------------------------------------------------------------


def test_facts_to_a_directory_names_the_file_on_the_node(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MSRUNWATCH_HOST", "gpu-17")
    code, _, err = cli("facts", str(NODE0), "-o", f"{tmp_path}/")
    assert code == 0, err
    assert [p.name for p in tmp_path.iterdir()] == ["gpu-17.facts.jsonl"]
    first = records((tmp_path / "gpu-17.facts.jsonl").read_text())[0]
    assert first["kind"] == "node" and first["host"] == "gpu-17"
    assert "3 files, 7 records" in err and "gpu-17.facts.jsonl" in err


def test_facts_expands_host_in_a_file_name(cli: Cli, tmp_path: Path) -> None:
    code, _, _ = cli("facts", str(NODE0), "--host", "n9", "-o", str(tmp_path / "{host}.jsonl"))
    assert code == 0 and (tmp_path / "n9.jsonl").is_file()


def test_a_shard_names_its_file_after_host_and_shard(cli: Cli, tmp_path: Path) -> None:
    code, _, _ = cli("facts", str(HANG), "--shard", "1/3", "--host", "a b", "-o", f"{tmp_path}/")
    assert code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["a_b.shard-1-of-3.facts.jsonl"]


def test_facts_never_writes_into_a_log_directory_it_reads(cli: Cli, tmp_path: Path) -> None:
    logs = tmp_path / "msrun_log"
    logs.mkdir()
    (logs / "worker_0.log").write_bytes((NODE0 / "worker_0.log").read_bytes())
    code, _, err = cli("facts", str(logs), "-o", f"{logs}/")
    assert code == 2 and "never writes there" in err and err.count("\n") == 1
    assert [p.name for p in logs.iterdir()] == ["worker_0.log"]


def test_an_output_that_cannot_be_written_is_one_line_and_leaves_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("x")
    code, out, err = cli("facts", str(NODE0), "-o", str(tmp_path / "file" / "n.facts.jsonl"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "cannot write" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_written_file_replaces_the_old_one_whole(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "n.facts.jsonl"
    target.write_text("old\n")
    assert cli("facts", str(NODE0), "--host", "n", "-o", str(target))[0] == 0
    kinds = [r["kind"] for r in records(target.read_text())]
    assert kinds[0] == "node" and kinds[-1] == "end"
    assert "old" not in target.read_text().splitlines()  # a path may hold 'old' (/wt/cold)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.facts.jsonl"]


def test_facts_of_nothing_exits_2_and_still_tells_the_merge(cli: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    code, out, err = cli("facts", str(empty), "--host", "n3", "-o", "-")
    assert code == 2 and "no log could be read" in err
    written = records(out)
    assert [r["kind"] for r in written] == ["node", "end"]
    assert written[0]["warnings"], "the node record says why nothing was read"


def test_a_bad_shard_is_a_usage_error(cli: Cli) -> None:
    code, _, err = cli("facts", str(NODE0), "--shard", "3/3")
    assert code == 2 and "K/N" in err and err.count("\n") == 1


# -- reading them back -----------------------------------------------------------------------


def test_shards_of_one_directory_read_every_file_once(cli: Cli, tmp_path: Path) -> None:
    for k in range(3):
        code, _, err = cli(
            "facts", str(HANG), "--shard", f"{k}/3", "--host", f"h{k}", "-o", f"{tmp_path}/"
        )
        assert code == 0, err
    paths = [
        r["facts"]["path"]
        for p in tmp_path.iterdir()
        for r in records(p.read_text())
        if r["kind"] == "file"
    ]
    assert sorted(paths) == sorted(p.name for p in HANG.iterdir())
    plain, merged = cli.json("triage", str(HANG)), cli.json("triage", str(tmp_path))
    assert merged["root_cause"]["ranks"] == plain["root_cause"]["ranks"] == [2]
    assert [(n["host"], n["state"]) for n in merged["nodes"]] == [(f"shared:{HANG}", "complete")]


def test_a_missing_shard_leaves_the_shared_directory_partial(cli: Cli, tmp_path: Path) -> None:
    for k in (0, 2):
        cli("facts", str(HANG), "--shard", f"{k}/3", "--host", f"h{k}", "-o", f"{tmp_path}/")
    report = cli.json("triage", str(tmp_path))
    (node,) = report["nodes"]
    assert node["state"] == "partial" and "shard(s) 1 of 3 not whole" in node["why"]
    assert report["outcome"] != "ok"


def test_triage_of_facts_on_standard_input(cli: Cli) -> None:
    _, facts, _ = cli("facts", str(NODE0), "--host", "n0", "-o", "-")
    report = cli.json("triage", "-", stdin=facts.encode())
    assert [n["host"] for n in report["nodes"]] == ["n0"]


def test_the_real_entry_point_in_a_pipe_says_what_this_process_says(
    cli: Cli, tmp_path: Path
) -> None:
    """`msrunwatch facts DIR -o - | msrunwatch triage - --format json` as processes."""
    command = [sys.executable, "-m", "msrunwatch"]
    facts = subprocess.run(
        [*command, "facts", str(HANG), "--host", "n0", "-o", "-"],
        capture_output=True, cwd=ROOT, check=True,
    ).stdout  # fmt: skip
    piped = subprocess.run(
        [*command, "triage", "-", "--format", "json"],
        input=facts, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    (tmp_path / "n0.facts.jsonl").write_bytes(facts)
    here = cli.json("triage", str(tmp_path / "n0.facts.jsonl"))
    there = json.loads(piped.stdout)
    for key in ("outcome", "root_cause", "ranks", "nodes"):
        assert there[key] == here[key], key
    assert piped.returncode == 1


def test_gzipped_facts_read_as_plain_ones(cli: Cli, tmp_path: Path) -> None:
    _, facts, _ = cli("facts", str(HANG), "--host", "n0", "-o", "-")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "n0.facts.jsonl").write_text(facts)
    (tmp_path / "n0.facts.jsonl.gz").write_bytes(gzip.compress(facts.encode()))
    zipped = cli.json("triage", str(tmp_path / "n0.facts.jsonl.gz"))
    plain = cli.json("triage", str(tmp_path / "plain"))
    assert zipped["root_cause"] == plain["root_cause"] and zipped["root_cause"]["ranks"] == [2]


def test_a_broken_gzip_is_not_taken_for_facts(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "n0.facts.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00 not gzip at all")
    code, out, err = cli("triage", str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1


def test_nothing_readable_in_facts_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "x.facts.jsonl"
    bad.write_text('{"kind":"node","schema":1,"host":"h","stream":"s"}\n{"kind":"file", broken\n')
    code, _, err = cli("triage", str(bad))
    assert code == 2 and err.count("\n") == 1 and "no facts could be read" in err


@pytest.mark.parametrize(
    "name", ["cpu_dp2_oom_alloc_failed", "cpu_dp4_hang_rank2_allreduce_timeout"]
)
def test_evidence_lines_are_the_files_own_numbered_lines(cli: Cli, name: str) -> None:
    folder = FIXTURES / name / "msrun_log"
    _, out, _ = cli("facts", str(folder), "--evidence", "--host", "n", "-o", "-")
    written = records(out)
    paths = {r["fid"]: r["facts"]["path"] for r in written if r["kind"] == "file"}
    shown = [r for r in written if r["kind"] == "evidence"]
    assert len(shown) >= 2
    for record in shown:
        text = (folder / paths[record["fid"]]).read_bytes().decode(errors="replace").split("\n")
        assert sum(len(t) + 8 for _, t in record["lines"]) <= 8 << 10
        for number, line in record["lines"]:
            assert line == text[number - 1].rstrip("\r")[:400], (paths[record["fid"]], number)


# -- facts that arrive cut, twice, or newer ----------------------------------------------------


def _two_nodes(cli: Cli, tmp_path: Path) -> tuple[list[str], list[str]]:
    node0 = cli("facts", str(NODE0), "--host", "node0", "-o", "-")[1].splitlines()
    node1 = cli("facts", str(NODE1), "--host", "node1", "-o", "-")[1].splitlines()
    return node0, node1


def test_a_node_without_its_end_record_is_partial_and_the_run_never_ok(
    cli: Cli, tmp_path: Path
) -> None:
    node0, node1 = _two_nodes(cli, tmp_path)
    whole = tmp_path / "whole"
    whole.mkdir()
    (whole / "node0.facts.jsonl").write_text("\n".join(node0) + "\n")
    (whole / "node1.facts.jsonl").write_text("\n".join(node1) + "\n")
    assert cli.json("triage", str(whole))["outcome"] == "ok"
    (whole / "node1.facts.jsonl").write_text("\n".join(node1[:-1]) + "\n")
    report = cli.json("triage", str(whole))
    states = {n["host"]: (n["state"], n["why"]) for n in report["nodes"]}
    assert states["node1"] == ("partial", f"no end record ({len(node1) - 1} records came)")
    assert report["outcome"] == "unknown"


def test_a_record_lost_in_the_middle_is_counted(cli: Cli, tmp_path: Path) -> None:
    node0, node1 = _two_nodes(cli, tmp_path)
    (tmp_path / "node0.facts.jsonl").write_text("\n".join(node0) + "\n")
    (tmp_path / "node1.facts.jsonl").write_text("\n".join(node1[:1] + node1[2:]) + "\n")
    report = cli.json("triage", str(tmp_path))
    states = {n["host"]: (n["state"], n["why"]) for n in report["nodes"]}
    assert states["node1"] == ("partial", f"{len(node1) - 1} of {len(node1)} records came")
    assert report["outcome"] == "unknown"


def test_two_machines_with_one_hostname_are_kept_apart(cli: Cli, tmp_path: Path) -> None:
    """Node 1's logs sent as node 0's too (one name, one directory, one file name): their
    node ids differ, so they are two machines."""
    (tmp_path / "a.facts.jsonl").write_text(cli("facts", str(NODE0), "--host", "x", "-o", "-")[1])
    other = cli("facts", str(NODE1), "--host", "x", "-o", "-")[1]
    renamed = other.replace(str(NODE1), str(NODE0)).replace("worker_2.log", "worker_0.log")
    (tmp_path / "b.facts.jsonl").write_text(renamed)
    report = cli.json("triage", str(tmp_path))
    hosts = sorted(n["host"] for n in report["nodes"])
    assert hosts[0] == "x" and hosts[1].startswith("x~") and len(hosts) == 2
    assert any("two nodes call themselves 'x'" in w for w in report["warnings"])


def test_facts_of_a_newer_schema_merge_with_a_warning(cli: Cli, tmp_path: Path) -> None:
    node0, node1 = _two_nodes(cli, tmp_path)
    newer = [line.replace('"schema":1', '"schema":2', 1) for line in node1]
    (tmp_path / "node0.facts.jsonl").write_text("\n".join(node0) + "\n")
    (tmp_path / "node1.facts.jsonl").write_text("\n".join(newer) + "\n")
    report = cli.json("triage", str(tmp_path))
    assert report["outcome"] == "ok"
    assert any("facts of node1 use a newer schema" in w for w in report["warnings"])


def test_expected_hosts_name_the_silent_ones(cli: Cli, tmp_path: Path) -> None:
    """Node 1's facts alone and --expect-hosts naming both (and a port, and a comment):
    node0 is missing, so the run is never ok."""
    node1 = FIXTURES / "cpu_2nodes_no_node_rank_ok" / "node1" / "msrun_log"
    cli("facts", str(node1), "--host", "node1", "-o", str(tmp_path / "node1.facts.jsonl"))
    (tmp_path / "hosts.txt").write_text("# the job\nnode0:8118\nnode1\n")
    report = cli.json(
        "triage", str(tmp_path / "node1.facts.jsonl"), "--expect-hosts", str(tmp_path / "hosts.txt")
    )
    assert {n["host"]: n["state"] for n in report["nodes"]} == {
        "node1": "complete",
        "node0": "missing",
    }
    assert report["outcome"] == "unknown"
    assert any("node node0 (no ranks known): missing" in w for w in report["warnings"])


@pytest.mark.parametrize("content", [None, "# nobody\n\n"])
def test_an_expect_hosts_file_that_names_nobody_is_a_usage_error(
    cli: Cli, tmp_path: Path, content: str | None
) -> None:
    hosts = tmp_path / "hosts.txt"
    if content is not None:
        hosts.write_text(content)
    facts = tmp_path / "n.facts.jsonl"
    cli("facts", str(NODE0), "--host", "n", "-o", str(facts))
    code, _, err = cli("triage", str(facts), "--expect-hosts", str(hosts))
    assert code == 2 and err.count("\n") == 1 and "--expect-hosts" in err
