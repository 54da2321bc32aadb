"""The facts format (read.nodefacts): written, read back, checked against its schema.

The round trip is the contract: what `msrunwatch facts` writes on a node, `triage` reads
back as the very FileFacts the node's own triage had, whatever order, prefixes or
duplicates the lines came in.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import random
from pathlib import Path

import jsonschema
import pytest

from msrunwatch.drivers.triage import find_logs, scan_all
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.nodefacts import reader as reader_module
from msrunwatch.read.nodefacts import write as write_module
from msrunwatch.read.nodefacts.encode import LEFT_OUT
from msrunwatch.read.nodefacts.nodes import COMPLETE, PARTIAL, collect
from msrunwatch.read.nodefacts.reader import FactsReader
from msrunwatch.read.nodefacts.validate import Invalid, record_check
from msrunwatch.read.nodefacts.write import NodeInfo, Stream
from msrunwatch.rules.model import Rule
from msrunwatch.schemas import files
from tests.support import FIXTURES

SCENARIOS = sorted(
    p.parent for p in FIXTURES.glob("*/expected.yaml") if not p.parent.name.startswith("public")
)
NODE = NodeInfo("node-7", ("logs",), "test", "digest")


def facts_of(folder: Path, rules: list[Rule]) -> list[FileFacts]:
    return scan_all(find_logs([str(folder)]), rules)


def lines_of(facts: list[FileFacts], node: NodeInfo = NODE, stream: str = "s1") -> list[str]:
    return list(Stream(node, stream).lines(facts))


def read_back(lines: list[str]) -> list[FileFacts]:
    reader = FactsReader()
    for line in lines:
        reader.line(line.encode())
    assert not reader.problems, reader.problems.lines()
    (node,) = collect(reader.streams.values()).nodes
    assert node.state == COMPLETE
    return list(node.files)


def same(a: FileFacts, b: FileFacts) -> list[str]:
    """Fields that differ (as text: a NaN loss equals a NaN loss here)."""
    return [n for n in a.__dataclass_fields__ if repr(getattr(a, n)) != repr(getattr(b, n))]


def key(f: FileFacts) -> tuple[str, str]:
    return f.log_dir, f.path


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: p.name)
def test_every_fixture_reads_back_as_it_was_read(folder: Path, rules: list[Rule]) -> None:
    """FileFacts -> records -> FileFacts is the identity (the node's host added)."""
    original = {key(f): dataclasses.replace(f, host="node-7") for f in facts_of(folder, rules)}
    back = {key(f): f for f in read_back(lines_of(list(original.values())))}
    assert back.keys() == original.keys()
    for k, f in original.items():
        assert not same(f, back[k]), (k, same(f, back[k]))


def test_hits_and_tables_split_over_records_read_back_whole(
    rules: list[Rule], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose hits do not fit one record, a scheduler table in many parts."""
    monkeypatch.setattr(write_module, "MAX_RECORD", 3000)
    monkeypatch.setattr(write_module, "HIT_BUDGET", 600)
    monkeypatch.setattr(write_module, "TABLE_BUDGET", 100)
    facts = facts_of(FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout", rules)
    lines = lines_of(facts)
    kinds = [json.loads(line)["kind"] for line in lines]
    # four registrations a part, the first part holding the nodes the scheduler timed out too
    assert kinds.count("hits") > 3 and kinds.count("scheduler") == 5
    assert any(f.timed_out_nodes for f in facts)
    back = {key(f): f for f in read_back(lines)}
    for f in facts:
        assert not same(dataclasses.replace(f, host="node-7"), back[key(f)])


def test_every_filefacts_field_is_written_or_said_not_to_be() -> None:
    schema = json.loads(files.read("facts.schema.json"))
    written = set(schema["$defs"]["filefacts"]["properties"])
    fields = {f.name for f in dataclasses.fields(FileFacts)}
    assert fields - written == LEFT_OUT - {"hits"}


def test_no_record_is_over_64_kib_and_each_cut_is_counted(rules: list[Rule]) -> None:
    facts = facts_of(FIXTURES / "cpu_dp2_oom_alloc_failed", rules)
    huge = dataclasses.replace(
        facts[-1],
        warnings=tuple("w" * 5000 for _ in range(100)),
        unregistered_nodes=tuple(str(i) for i in range(10_000)),
    )
    lines = lines_of([huge])
    assert max(len(line.encode()) for line in lines) < 64 << 10
    end = json.loads(lines[-1])
    assert end["kind"] == "end" and sum(end["cut"].values()) > 0


# -- the schema, and the validator compiled from it -----------------------------------


def records(rules: list[Rule]) -> list[dict[str, object]]:
    facts = facts_of(FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout", rules)
    return [json.loads(line) for line in lines_of(facts)]


def mutations(record: dict[str, object], rng: random.Random) -> list[dict[str, object]]:
    """The record with one value somewhere replaced, a field removed or one added."""
    out = []
    values = [None, True, -1, 0, 2**70, 1.5, 1e300, "", "x" * 5000, [], {}, [1, 2], "nan"]
    paths: list[list[object]] = []

    def walk(value: object, path: list[object]) -> None:
        paths.append(path)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, [*path, k])
        elif isinstance(value, list):
            for i, v in enumerate(value[:3]):
                walk(v, [*path, i])

    walk(record, [])
    for path in rng.sample(paths[1:], min(40, len(paths) - 1)):
        for new in rng.sample(values, 3):
            changed = copy.deepcopy(record)
            target = changed
            for step in path[:-1]:
                target = target[step]  # type: ignore[index]
            target[path[-1]] = new  # type: ignore[index]
            out.append(changed)
        if isinstance(path[-1], str):
            dropped = copy.deepcopy(record)
            target = dropped
            for step in path[:-1]:
                target = target[step]  # type: ignore[index]
            del target[path[-1]]  # type: ignore[arg-type]
            out.append(dropped)
    return out


def test_the_compiled_validator_agrees_with_jsonschema(rules: list[Rule]) -> None:
    """Every record written, and hundreds of mutations of them: the reader's checks accept
    exactly what the published schema accepts."""
    schema = json.loads(files.read("facts.schema.json"))
    reference = jsonschema.Draft202012Validator(schema)
    check = record_check()
    rng = random.Random(7)
    tried = 0
    for record in records(rules):
        assert reference.is_valid(record)
        check(record)
        for changed in mutations(record, rng):
            tried += 1
            try:
                check(changed)
                ours = True
            except Invalid:
                ours = False
            assert ours == reference.is_valid(changed), changed
    assert tried > 500


# -- reading: prefixes, order, duplicates, caps ---------------------------------------


@pytest.fixture(scope="module")
def two_streams(rules: list[Rule]) -> list[str]:
    a = facts_of(FIXTURES / "cpu_2nodes_noderank_ok" / "node0", rules)
    b = facts_of(FIXTURES / "cpu_2nodes_noderank_ok" / "node1", rules)
    node_b = dataclasses.replace(NODE, host="node-8")
    return lines_of(a, NODE, "sa") + lines_of(b, node_b, "sb")


def summary(lines: list[bytes]) -> list[tuple[str, str, tuple[str, ...]]]:
    reader = FactsReader()
    for line in lines:
        reader.line(line)
    got = collect(reader.streams.values())
    return [(n.name, n.state, tuple(repr(f) for f in n.files)) for n in got.nodes]


def test_prefixed_interleaved_duplicated_in_any_order_reads_the_same(
    two_streams: list[str],
) -> None:
    expected = summary([line.encode() for line in two_streams])
    prefixes = ["12: ", "node-012: ", "[pod/trainer-3/main] ", ""]
    rng = random.Random(1)
    for _ in range(20):
        lines = [rng.choice(prefixes).encode() + line.encode() for line in two_streams]
        lines += rng.sample(lines, len(lines) // 3)  # duplicates
        rng.shuffle(lines)
        assert summary(lines) == expected


def test_a_stream_cut_short_is_partial_and_says_what_came(two_streams: list[str]) -> None:
    reader = FactsReader()
    for line in two_streams[:-3]:
        reader.line(line.encode())
    states = {n.name: (n.state, n.why) for n in collect(reader.streams.values()).nodes}
    assert states["node-7"][0] == COMPLETE
    assert states["node-8"][0] == PARTIAL and "no end record" in states["node-8"][1]


def test_a_record_that_went_missing_makes_its_node_partial(two_streams: list[str]) -> None:
    reader = FactsReader()
    for line in two_streams[:2] + two_streams[3:]:
        reader.line(line.encode())
    states = {n.name: (n.state, n.why) for n in collect(reader.streams.values()).nodes}
    assert states["node-7"] == (PARTIAL, "6 of 7 records came")


def test_bad_lines_are_counted_and_named_never_fatal(two_streams: list[str]) -> None:
    reader = FactsReader()
    bad = [
        b"srun: error: node-3: task 3: Exited with exit code 1",
        b'{"kind":"file", "torn',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"kind": ' * 20_000,
        b'{"kind":"end","schema":1,"host":"x","stream":"s","seq":1}',
        b"\xff\xfe{\x00garbage",
        b'{"kind":"file","schema":1,"host":"x","stream":"s","seq":2,"fid":0,"parts":0,'
        b'"facts":{"path":"w","log_dir":"d","role":"worker","first_time":1e300}}',
    ]
    for line in [*bad, *(x.encode() for x in two_streams)]:
        reader.line(line)
    text = " ".join(reader.problems.lines())
    assert "not facts records" in text and "not valid JSON" in text
    assert "schema refuses" in text and "out of range" in text
    assert [n.state for n in collect(reader.streams.values()).nodes if n.name != "x"] == [
        COMPLETE,
        COMPLETE,
    ]


def test_a_line_over_1_mib_is_passed_over(tmp_path: Path, two_streams: list[str]) -> None:
    path = tmp_path / "f.facts.jsonl"
    path.write_text('{"kind":"node","x":"' + "a" * (3 << 20) + '"}\n' + "\n".join(two_streams))
    reader = FactsReader()
    reader.read_path(str(path))
    assert any("over 1 MiB" in p for p in reader.problems.lines())
    assert len(collect(reader.streams.values()).nodes) == 2


def test_gzip_facts_are_read(tmp_path: Path, two_streams: list[str]) -> None:
    path = tmp_path / "f.facts.jsonl.gz"
    path.write_bytes(gzip.compress("\n".join(two_streams).encode()))
    reader = FactsReader()
    reader.read_path(str(path))
    assert not reader.problems and len(collect(reader.streams.values()).nodes) == 2


def test_a_flood_of_records_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "MAX_STREAM_RECORDS", 100)
    reader = FactsReader()
    head = '{"kind":"group","schema":1,"host":"h","stream":"f","seq":'
    for i in range(5000):
        reader.line(f'{head}{i},"name":"g","digest":"{i}","members":[[0,1]]}}'.encode())
    assert len(reader.streams["f"].seen) == 100
    assert reader.problems.lines() == ["4,900 records beyond 100 in one stream (first: h)"]


def test_conflicting_copies_of_a_record_resolve_the_same_in_any_order(
    two_streams: list[str],
) -> None:
    line = two_streams[1]
    other = line.replace('"lines":', '"lines":1', 1)
    a = summary([x.encode() for x in [*two_streams, other]])
    b = summary([x.encode() for x in [other, *two_streams]])
    assert a == b


def test_a_worker_log_role_survives_the_trip(rules: list[Rule]) -> None:
    facts = facts_of(FIXTURES / "cpu_2nodes_noderank_ok", rules)
    roles = sorted(f.role.value for f in read_back(lines_of(facts)))
    assert roles == sorted(f.role.value for f in facts)
    assert FileRole.SCHEDULER.value in roles
