"""Facts files are hostile input too (issue 21, facts): they come from shared storage,
from `srun`/`pdsh`/`kubectl` output and from every node. Each attack below gives the
verdict of what is readable, a named warning for what is not, and never an internal error.

The facts are those `msrunwatch facts` writes for a real failed run (rank 1 failed first
with an OOM), then damaged as a transport or an attacker would. Before (main f674301): a
file whose first line was over 64 KiB was "not an msrun or MindSpore log" (exit 2, its
facts never read), one whose first line was nested deeper than the JSON parser goes was an
internal error (RecursionError), and a file named `*.facts.jsonl` that did not start as
facts was skipped in silence beside good ones."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.read.nodefacts import reader
from tests.hostile.support import RAW_CONTROL, cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def facts(tmp_path: Path, capsys: Capsys) -> list[str]:
    """The facts lines of the OOM run, as node `n0` wrote them."""
    path = tmp_path / "n0.facts.jsonl"
    code, _, err = cli(capsys, "facts", str(OOM), "--host", "n0", "-o", str(path))
    assert code == 0, err
    return path.read_text().splitlines(keepends=True)


def triage(capsys: Capsys, *targets: Path) -> tuple[int, dict[str, Any], str]:
    """Exit code, JSON report and stderr of `triage --format json` over the targets."""
    code, out, err = cli(capsys, "triage", "--format", "json", *map(str, targets))
    return code, strict_json(out), err


def the_oom(report: dict[str, Any]) -> bool:
    cause = report["root_cause"]
    return bool(cause["category"] == "oom" and cause["ranks"] == [1])


def warned(report: dict[str, Any], words: str) -> bool:
    return any(words in w for w in report["warnings"])


def write(path: Path, *parts: str) -> Path:
    path.write_text("".join(parts))
    return path


@pytest.mark.parametrize(
    ("first", "named"),
    [
        ('{"kind":"node","x":"' + "a" * (2 << 20) + '"}\n', "lines over 1 MiB (not read)"),
        (
            '{"kind":"node","stream":"s","schema":1,"host":"h","a":' + "[" * 100_000 + "\n",
            "lines that are not valid JSON",  # nested past the parser: was an internal error
        ),
    ],
    ids=["2 MiB", "nested 100,000 deep"],
)
def test_a_bad_first_line_hides_none_of_the_facts(
    first: str, named: str, facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    code, report, err = triage(capsys, write(tmp_path / "x.jsonl", first, *facts))
    assert (code, err) == (1, "")
    assert the_oom(report) and warned(report, named)


def test_a_garbled_facts_file_beside_good_ones_is_named(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    directory = tmp_path / "facts"
    directory.mkdir()
    write(directory / "n0.facts.jsonl", *facts)
    (directory / "n1.facts.jsonl").write_bytes(bytes(range(256)) * 4)
    write(directory / "events.jsonl", '{"event": "start"}\n')  # another tool's: not facts
    code, report, err = triage(capsys, directory)
    assert (code, err) == (1, "")
    assert the_oom(report)
    assert [w for w in report["warnings"] if "n1.facts.jsonl" in w]
    assert not [w for w in report["warnings"] if "events.jsonl" in w]


def test_a_gzip_cut_short_is_partial_and_named(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    whole = gzip.compress("".join(facts).encode())
    cut = tmp_path / "n0.facts.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    code, report, err = triage(capsys, cut)
    assert code in (0, 1) and err == ""
    assert warned(report, "ended in an error") and warned(report, "partial")


def test_duplicated_and_reversed_streams_give_the_same_verdict(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    _, once, _ = triage(capsys, write(tmp_path / "once.jsonl", *facts))
    _, twice, _ = triage(capsys, write(tmp_path / "twice.jsonl", *facts, *facts))
    _, backwards, _ = triage(capsys, write(tmp_path / "back.jsonl", *reversed(facts)))
    assert the_oom(once)
    assert twice["root_cause"] == backwards["root_cause"] == once["root_cause"]
    assert twice["warnings"] == backwards["warnings"] == once["warnings"]


def test_a_record_cut_in_the_middle_makes_its_node_partial(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    text = "".join(facts)
    code, report, err = triage(capsys, write(tmp_path / "cut.jsonl", text[: len(text) // 2]))
    assert code in (0, 1) and err == ""
    assert warned(report, "not valid JSON") and warned(report, "partial")
    assert report["outcome"] != "ok"  # a node that did not say all is never healthy


def other_node(facts: list[str], host: str) -> list[str]:
    """The same facts as sent by another node (its own host and stream)."""
    return [
        line.replace('"host":"n0"', f'"host":"{host}"').replace('"stream":"', '"stream":"x', 1)
        for line in facts
    ]


def test_times_past_the_year_3000_are_refused_and_named(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    far = [line.replace('"first_time":', '"first_time":9e15,"was":', 1) for line in facts]
    code, report, err = triage(
        capsys,
        write(tmp_path / "n0.jsonl", *facts),
        write(tmp_path / "n7.jsonl", *other_node(far, "n7")),
    )
    assert (code, err) == (1, "")
    assert the_oom(report)  # the good node's verdict, beside the bad one
    assert warned(report, "out of range") and warned(report, "node n7")


def test_every_log_record_refused_is_exit_2_with_one_line(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    """Only the node's `node` and `end` records pass: no log is left to judge. Before,
    outcome unknown and exit 0, against the README's exit 2 when nothing readable is left."""
    far = [line.replace('"first_time":', '"first_time":9e15,"was":', 1) for line in facts]
    code, out, err = cli(capsys, "triage", str(write(tmp_path / "far.jsonl", *far)))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("msrunwatch: error: no facts could be read from")
    assert "out of range" in err


def test_one_bad_node_never_hides_the_others(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    refused = [line.replace('"seq":', '"seq":"x","was":', 1) for line in other_node(facts, "n7")]
    code, report, err = triage(
        capsys, write(tmp_path / "n7.jsonl", *refused), write(tmp_path / "n0.jsonl", *facts)
    )
    assert (code, err) == (1, "") and the_oom(report)
    assert warned(report, "records the facts schema refuses")


def test_many_nodes_without_all_their_facts_are_counted_not_listed(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    """Forged one-record nodes (a `node` record each, no `end`): 10^6 of them printed
    65,536 "partial" warnings, one per stream kept. A few are named; the rest are counted."""
    node = json.loads(facts[0])
    forged = []
    for k in range(200):
        node.update(host=f"forged-{k:03d}", stream=f"f{k:015d}")
        forged.append(json.dumps(node) + "\n")
    code, report, err = triage(
        capsys, write(tmp_path / "n0.jsonl", *facts), write(tmp_path / "forged.jsonl", *forged)
    )
    assert (code, err) == (1, "") and the_oom(report)
    assert len(report["nodes"]) == 201
    partial = [w for w in report["warnings"] if w.startswith("node forged-")]
    assert 0 < len(partial) <= 10
    counted = [w for w in report["warnings"] if "more nodes without all their facts" in w]
    assert len(counted) == 1
    assert counted[0].startswith(f"{200 - len(partial)} more nodes") and "partial" in counted[0]
    code, out, _ = cli(capsys, "triage", str(tmp_path / "n0.jsonl"), str(tmp_path / "forged.jsonl"))
    assert code == 1 and out.count("\n") < 60  # a screen, not a node per line


def test_a_node_claiming_another_nodes_ranks_is_named(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    impostor = [
        line.replace('"host":"n0"', '"host":"n9"').replace('"stream":"', '"stream":"1mp', 1)
        for line in facts
    ]
    code, report, err = triage(
        capsys, write(tmp_path / "n0.jsonl", *facts), write(tmp_path / "n9.jsonl", *impostor)
    )
    assert (code, err) == (1, "")
    assert the_oom(report)
    assert warned(report, "rank 1 has logs from two processes")


def test_hostile_strings_in_facts_reach_no_terminal_raw(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    evil = []
    for line in facts:
        record = json.loads(line)
        record["host"] = "n\x1b[2J\u202e0\x07"
        if record["kind"] == "file":
            record["facts"]["path"] = "worker_\x1b]0;owned\x07\u202e" + record["facts"]["path"]
        evil.append(json.dumps(record) + "\n")
    path = write(tmp_path / "evil.jsonl", *evil)
    code, out, err = cli(capsys, "triage", str(path))
    assert code == 1 and "failed first: oom" in out
    assert not RAW_CONTROL.search(out + err)
    assert "\\x1b" in out  # shown, escaped
    code, report, _ = triage(capsys, path)
    assert code == 1 and report["root_cause"]["category"] == "oom"


def flood(node: dict[str, Any], streams: int, records: int) -> list[str]:
    """Forged streams of `node` records, each `records` long, none with log facts."""
    lines = []
    for k in range(streams):
        for seq in range(records):
            forged = dict(node, host=f"flood-{k}", stream=f"flood{k:011d}", seq=seq)
            lines.append(json.dumps(forged) + "\n")
    return lines


@pytest.mark.parametrize(
    ("streams", "records", "named"),
    [
        (5, 40, "records beyond the cap of 64"),  # floods past the records cap first
        (40, 1, "streams with no log facts left out past the cap of 16 streams"),
    ],
    ids=["records", "streams"],
)
def test_floods_before_the_real_node_never_leave_it_out(
    streams: int,
    records: int,
    named: str,
    facts: list[str],
    tmp_path: Path,
    capsys: Capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caps made small, the floods read first: before, the real node's records came
    past a cap the forged streams had filled, and were left out (outcome unknown, exit 0,
    the real node not even named). Now a stream gets its fair share past the records cap,
    and a stream with no log facts makes room past the streams cap."""
    monkeypatch.setattr(reader, "MAX_RECORDS", 64)
    monkeypatch.setattr(reader, "MAX_STREAM_RECORDS", 32)
    monkeypatch.setattr(reader, "MAX_STREAMS", 16)
    forged = write(tmp_path / "a-flood.jsonl", *flood(json.loads(facts[0]), streams, records))
    code, report, err = triage(capsys, forged, write(tmp_path / "n0.jsonl", *facts))
    assert (code, err) == (1, "") and the_oom(report)
    assert warned(report, named)


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")], ids=["compact", "spaced"])
def test_a_full_streams_records_are_counted_without_being_parsed(
    separators: tuple[str, str], facts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its cap a stream's lines are only counted: a flood written with spaces after
    the colons (as json.dumps writes by default) was parsed and checked line by line."""
    monkeypatch.setattr(reader, "MAX_STREAM_RECORDS", 4)
    parsed = []
    real_loads = reader.json.loads
    monkeypatch.setattr(reader.json, "loads", lambda text: parsed.append(1) or real_loads(text))
    node = json.loads(facts[0])
    lines = [json.dumps(dict(node, seq=k), separators=separators).encode() for k in range(100)]
    target = reader.FactsReader()
    target.read_lines(lines, "flood")
    assert len(parsed) <= 6 and target.problems[target._beyond] == 96  # 4 kept


def test_nodes_that_name_no_log_are_exit_2_and_say_so(
    facts: list[str], tmp_path: Path, capsys: Capsys
) -> None:
    """Only the `node` and `end` records came, nothing refused: no log to judge."""
    bare = [line for line in facts if '"kind":"node"' in line or '"kind":"end"' in line]
    code, out, err = cli(capsys, "triage", str(write(tmp_path / "bare.jsonl", *bare)))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.endswith("n0 sent no facts of any log\n")
