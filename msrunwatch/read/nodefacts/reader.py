"""Facts lines, from anywhere, back into the streams they were written as.

Input is hostile: lines may be prefixed by a transport (`12: `, `node-012: `,
`[pod/trainer-3/main] `), interleaved, duplicated, torn, out of order, or forged. Each
line is cut to what starts at its first `{`, parsed, checked against the schema and filed
under its stream and place (`seq`): a duplicate is a no-op, so reading the same facts twice
or in any order gives the same result. Memory and time are bounded by caps, and every line
or record left out is counted and named.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from msrunwatch.core.fileio import open_regular
from msrunwatch.read.cluster import Group
from msrunwatch.read.facts import FileFacts, Hit, Registration
from msrunwatch.read.nodefacts import decode
from msrunwatch.read.nodefacts.validate import Invalid, record_check
from msrunwatch.read.nodefacts.write import SCHEMA

MAX_LINE = 1 << 20
"""Bytes of one line; a longer one is not parsed (a writer keeps records under 64 KiB)."""
MAX_RECORDS = 1 << 18
"""Records kept in all (a 2,048-rank job writes about 2,100); past it, a stream still gets
records up to its fair share (this cap over the streams there are), up to twice this cap:
streams that flood first never leave the others' facts out."""
MAX_FILES = 1 << 16
"""File records kept in all: eight files for each of 8,192 ranks."""
MAX_STREAM_RECORDS = 1 << 16
MAX_STREAMS = 1 << 16
"""Streams kept; past it, the oldest stream that has sent no log facts yet (no `file` or
`scheduler` record: a forged node, or one that only said hello) makes room for a new one."""
MAX_UNZIPPED = 1 << 30
"""Bytes read out of one gzip file (a small file can unpack to any size)."""
_STREAM = re.compile(rb'"stream"\s*:\s*"([^"\\]{1,64})"')
"""A record's stream, found without parsing it (JSON allows spaces around the colon: a
flood written with them was parsed and checked line by line, 4 x 10^6 lines 78 CPU-s)."""
SAMPLES = 3
"""Examples kept of each kind of problem, for the warnings."""


@runtime_checkable
class Readable(Protocol):
    """A binary stream read line by line (a file, a pipe, a gzip stream)."""

    def readline(self, size: int = -1, /) -> bytes: ...


@dataclass
class FileEntry:
    """A `file` record, its hits and (for a scheduler) its table, as they arrive."""

    facts: FileFacts
    parts: int
    groups: tuple[tuple[str, str], ...]
    more_hits: dict[int, tuple[Hit, ...]] = field(default_factory=dict)
    grew: float | None = None
    """A live snapshot's: when the file last grew, on the node's clock."""


@dataclass
class Stream:
    """One stream's records, by place."""

    stream: str
    host: str
    schema: int = SCHEMA
    node: dict[str, Any] | None = None
    files: dict[int, FileEntry] = field(default_factory=dict)
    early_hits: dict[tuple[int, int], tuple[Hit, ...]] = field(default_factory=dict)
    """`hits` records that came before their `file` record."""
    tables: dict[int, dict[int, tuple[int, tuple[Registration, ...]]]] = field(default_factory=dict)
    """fid -> part -> (parts, registrations)."""
    groups: dict[str, Group] = field(default_factory=dict)
    timed_out: dict[int, tuple[tuple[str, float | None], ...]] = field(default_factory=dict)
    """fid -> the nodes the scheduler timed out (its table's first part says)."""
    end: dict[str, Any] | None = None
    seen: dict[int, int] = field(default_factory=dict)
    """seq -> hash of the line: a repeat is a duplicate, a different line a conflict."""

    @property
    def complete(self) -> bool:
        """Its `end` came, and every record before it."""
        return self.end is not None and len(self.seen) == int(self.end["records"]) + 1

    def hits_of(self, fid: int, entry: FileEntry) -> tuple[Hit, ...]:
        hits = list(entry.facts.hits)
        for part in range(1, entry.parts + 1):
            hits.extend(entry.more_hits.get(part, self.early_hits.get((fid, part), ())))
        return tuple(hits)


class Problems(Counter[str]):
    """What was left out, by why, with a few examples of each."""

    def __init__(self) -> None:
        super().__init__()
        self.samples: dict[str, list[str]] = {}

    def add(self, why: str, example: str = "") -> None:
        self[why] += 1
        kept = self.samples.setdefault(why, [])
        if example and len(kept) < SAMPLES:
            kept.append(example[:200])

    def lines(self) -> list[str]:
        out = []
        for why, count in self.items():
            examples = self.samples.get(why)
            shown = f" (first: {'; '.join(examples)})" if examples else ""
            out.append(f"{count:,} {why}{shown}")
        return out


class FactsReader:
    """Reads facts lines from any number of inputs into streams."""

    def __init__(self) -> None:
        self.streams: dict[str, Stream] = {}
        self.problems = Problems()
        self.records = 0
        self.file_records = 0
        self._check = record_check()
        self._full_streams: set[bytes] = set()
        self._beyond = f"records beyond {MAX_STREAM_RECORDS:,} in one stream"
        self._bare: OrderedDict[str, None] = OrderedDict()
        """Streams with no log facts yet, oldest first: the ones dropped at the streams cap
        (an OrderedDict: taking a plain dict's first key over and over rescans the keys
        deleted before it, which made 10^6 forged streams cost three times the CPU)."""

    # -- inputs -----------------------------------------------------------------------

    def read_path(self, path: str, label: str | None = None) -> None:
        """A facts file (`.gz` too); OSError when it cannot be opened."""
        fd = open_regular(path)
        with os.fdopen(fd, "rb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw) as unzipped:
                    self.read_lines(_capped(unzipped, MAX_UNZIPPED, self.problems), label or path)
            else:
                self.read_lines(raw, label or path)

    def read_lines(self, source: Iterable[bytes] | Readable, label: str) -> None:
        """Every line of a binary stream (a file, a pipe)."""
        try:
            for raw in _lines(source, self.problems):
                self.line(raw, label)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            self.problems.add("inputs that ended in an error", f"{label}: {exc}")

    # -- one line ---------------------------------------------------------------------

    def line(self, raw: bytes, label: str = "") -> None:
        """One line: prefix cut, parsed, checked, filed (or counted as left out)."""
        start = raw.find(b"{")
        if start < 0:
            if raw.strip():
                self.problems.add("lines that are not facts records", f"{label}: {_shown(raw)}")
            return
        if self.records >= 2 * MAX_RECORDS:
            self.problems.add(f"records beyond the cap of {MAX_RECORDS:,}")
            return
        text = raw[start:].rstrip(b"\r\n")
        if self._full_streams and self._full(_STREAM.search(text, 0, 512)):
            return
        try:
            record = json.loads(text.decode("utf-8", "surrogateescape"))
        except (ValueError, RecursionError):
            self.problems.add(
                "lines that are not valid JSON (torn, or not facts)", f"{label}: {_shown(raw)}"
            )
            return
        try:
            self._check(record)
        except Invalid as exc:
            self.problems.add("records the facts schema refuses", f"{label}: {exc}")
            return
        except RecursionError:
            self.problems.add("records nested too deeply", label)
            return
        self._file(record, _digest(text))

    def _drop_bare(self) -> bool:
        """Room for one more stream: the oldest that sent no log facts is left out (and
        counted); False when every stream kept has sent some."""
        if not self._bare:
            return False
        key, _ = self._bare.popitem(last=False)
        dropped = self.streams.pop(key)
        self.records -= len(dropped.seen)
        self.problems.add(
            f"streams with no log facts left out past the cap of {MAX_STREAMS:,} streams",
            dropped.host,
        )
        return True

    def _full(self, found: re.Match[bytes] | None) -> bool:
        """The line's stream already holds its cap of records: counted, not parsed."""
        if found is None or found[1] not in self._full_streams:
            return False
        self.problems[self._beyond] += 1
        return True

    def _file(self, record: dict[str, Any], digest: int) -> None:
        stream = self._stream(record)
        if stream is None:
            return
        seq = int(record["seq"])
        previous = stream.seen.get(seq)
        if previous is not None:
            if previous == digest:
                return
            self.problems.add(
                "records that differ from another with the same place", f"{stream.host} #{seq}"
            )
            if previous < digest:
                return  # the same one wins whatever the order: the smaller line hash
            stream.seen[seq] = digest
            _FILERS.get(record["kind"], _unknown)(self, stream, record)
            return
        if len(stream.seen) >= MAX_STREAM_RECORDS:
            self.problems.add(self._beyond, stream.host)
            self._full_streams.add(stream.stream.encode())
            return
        if self.records >= MAX_RECORDS and len(stream.seen) >= MAX_RECORDS // len(self.streams):
            self.problems.add(f"records beyond the cap of {MAX_RECORDS:,}", stream.host)
            return
        kind = record["kind"]
        if kind == "file" and self.file_records >= MAX_FILES:
            self.problems.add(f"file records beyond the cap of {MAX_FILES:,}")
            return
        stream.seen[seq] = digest
        self.records += 1
        if kind in ("file", "scheduler"):
            self._bare.pop(stream.stream, None)
        _FILERS.get(kind, _unknown)(self, stream, record)

    def _stream(self, record: dict[str, Any]) -> Stream | None:
        key = record["stream"]
        stream = self.streams.get(key)
        if stream is None:
            if len(self.streams) >= MAX_STREAMS and not self._drop_bare():
                self.problems.add(f"streams beyond the cap of {MAX_STREAMS:,}")
                return None
            stream = self.streams[key] = Stream(key, record["host"])
            self._bare[key] = None
        elif stream.host != record["host"]:
            self.problems.add(
                "records whose host differs from their stream's",
                f"{record['host']} in {stream.host}'s stream",
            )
            return None
        stream.schema = max(stream.schema, int(record["schema"]))
        return stream


def _node(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    stream.node = record


def _file_record(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    reader.file_records += 1
    body = record["facts"]
    entry = FileEntry(
        decode.file_facts(body, stream.host),
        int(record["parts"]),
        decode.group_refs(body),
        grew=record.get("grew"),
    )
    stream.files[int(record["fid"])] = entry


def _hits(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    hits = tuple(decode.hit(h) for h in record["hits"])
    fid, part = int(record["fid"]), int(record["part"])
    entry = stream.files.get(fid)
    if entry is not None:
        entry.more_hits[part] = hits
    else:
        stream.early_hits[(fid, part)] = hits


def _table(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    table = tuple(decode.registration(r) for r in record["registered"])
    parts = stream.tables.setdefault(int(record["fid"]), {})
    parts[int(record["part"])] = (int(record["parts"]), table)
    if record.get("timed_out"):
        stream.timed_out[int(record["fid"])] = decode.timed_out(record["timed_out"])


def _group(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    stream.groups[record["digest"]] = decode.group(record)


def _end(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    stream.end = record


def _ignored(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    """Evidence lines are for the views that show text; the verdict needs none."""


def _unknown(reader: FactsReader, stream: Stream, record: dict[str, Any]) -> None:
    reader.problems.add(
        "records of a kind this msrunwatch does not know (a newer writer?)", record["kind"]
    )


_FILERS = {
    "node": _node,
    "file": _file_record,
    "hits": _hits,
    "scheduler": _table,
    "group": _group,
    "evidence": _ignored,
    "end": _end,
}


def _lines(source: Iterable[bytes] | Readable, problems: Problems) -> Iterator[bytes]:
    """Lines of at most MAX_LINE bytes; the rest of a longer one is passed over."""
    if not isinstance(source, Readable):
        yield from source
        return
    reader = source.readline
    while True:
        line = reader(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            problems.add(f"lines over {MAX_LINE >> 20} MiB (not read)")
            while (rest := reader(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            continue
        yield line


def _capped(source: Readable, cap: int, problems: Problems) -> Iterator[bytes]:
    """Lines of an unpacked stream, up to cap bytes in all."""
    total = 0
    for line in _lines(source, problems):
        total += len(line)
        if total > cap:
            problems.add(f"gzip input beyond {cap >> 30} GiB unpacked (not read)")
            return
        yield line


def _digest(text: bytes) -> int:
    """A stable hash of a record line (the same in every process, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def _shown(raw: bytes) -> str:
    return raw[:80].decode("utf-8", "replace").strip()


def is_facts(head: bytes) -> bool:
    """Whether the first bytes of an input are facts records (after any transport prefix)."""
    for raw in head.splitlines()[:8]:
        start = raw.find(b"{")
        if start >= 0 and b'"kind"' in raw and b'"stream"' in raw:
            try:
                record = json.loads(raw[start:])
            except (ValueError, RecursionError):  # torn, or nested past the parser's depth
                continue
            return isinstance(record, dict) and "schema" in record and "host" in record
    return False
