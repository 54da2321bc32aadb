"""One node's facts as a stream of JSON lines (schema 1): `node`, then a `file` record per
log file (with `hits` records for what does not fit), the scheduler's table in `scheduler`
records, each communicator group once, and `end`.

Every record is one self-contained line naming its host, stream and place, so streams may
be concatenated, interleaved line by line, prefixed by a transport (`srun -l`, `pdsh`) or
duplicated, and still be read back whole. No record exceeds MAX_RECORD bytes; what had to
be cut to keep that is counted in `end`. The live watcher publishes the same stream as its
snapshot, so the post-mortem and the live view read one format.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from msrunwatch.core.sanitize import json_document
from msrunwatch.read.cluster import Group
from msrunwatch.read.facts import FileFacts, FileRole
from msrunwatch.read.nodefacts import encode
from msrunwatch.read.nodefacts.validate import Invalid, record_check
from msrunwatch.rules.model import Rule, Scope

SCHEMA = 1
MAX_RECORD = 64 << 10
"""Bytes of one record line, newline included."""
HIT_BUDGET = 48 << 10
"""Bytes of hits kept inline in a `file` record (or in one `hits` record)."""
BODY_BUDGET = 16 << 10
"""Bytes a file's facts (without hits) may take before their lists and texts are cut."""
TABLE_BUDGET = 32 << 10
"""Bytes of registrations per `scheduler` record (about 250 of them)."""


@dataclass(frozen=True)
class NodeInfo:
    """Who collected the facts, and how (the `node` record)."""

    host: str
    log_dirs: tuple[str, ...]
    version: str
    rules_digest: str
    shard: tuple[int, int] | None = None
    collected_at_utc: str = ""
    tz_offset_s: int | None = None
    warnings: tuple[str, ...] = ()
    """What could not be read on the node (a directory without logs, an unreadable file)."""
    live: Mapping[str, Any] | None = None
    """A live watcher's snapshot: its number, whether it is the last, the node's clocks
    when it was taken (read.nodefacts.live)."""


def rules_digest(rules: Sequence[Rule]) -> str:
    """Names the rules that read the logs (what each line rule matches and says), so facts
    extracted with another rule set are told apart."""
    parts = sorted(
        f"{r.id}\t{r.pattern}\t{r.message}\t{r.fallback}\t{r.at}\t{r.subject}\t{r.lookup}"
        + (f"\t{r.fallback_when.source}" if r.fallback_when is not None else "")
        for r in rules
        if r.scope is Scope.LINE
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def new_stream() -> str:
    """A stream id: one run of `msrunwatch facts` (or one live snapshot)."""
    return secrets.token_hex(8)


def group_digest(group: Group) -> str:
    """Names a group's membership, so two groups of one name stay apart."""
    members = json.dumps([list(run) for run in group.members], separators=(",", ":"))
    return hashlib.sha1(members.encode()).hexdigest()[:16]


class Stream:
    """Builds the records of one stream, in order, each checked against the schema."""

    def __init__(self, node: NodeInfo, stream: str | None = None) -> None:
        self.node = node
        self.stream = stream or new_stream()
        self.cuts = encode.Cuts()
        self.count = 0
        self.bytes = 0
        self.files = 0
        self.started = time.monotonic()

    def _line(self, kind: str, body: dict[str, Any]) -> str | None:
        head = {"kind": kind, "schema": SCHEMA, "host": self.node.host, "stream": self.stream}
        record = {**head, "seq": self.count, **body}
        try:
            record_check()(record)
        except Invalid as exc:
            self.cuts[f"records the schema refuses ({kind}: {exc.why})"] += 1
            return None
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        text = json_document(text)  # a name that is not UTF-8: its bytes shown as \xNN
        if len(text.encode()) >= MAX_RECORD:
            self.cuts[f"{kind} records over {MAX_RECORD >> 10} KiB"] += 1
            return None
        self.count += 1
        self.bytes += len(text.encode()) + 1
        return text

    def lines(
        self,
        files: Sequence[FileFacts],
        evidence: Mapping[int, Sequence[tuple[int, str]]] | None = None,
        grew: Sequence[float | None] | None = None,
    ) -> Iterator[str]:
        """Every line of the stream (without newlines), `end` last; `evidence`: lines of
        some files (by their index in `files`), numbered, for views that show text; `grew`:
        when each file last grew (a live watcher's snapshot: the node's wall clock)."""
        yield from self._some(self._node())
        digests = {g: group_digest(g) for f in files for g in f.groups}
        for fid, facts in enumerate(files):
            self.files += 1
            yield from self._file(fid, facts, digests, grew[fid] if grew else None)
            if evidence and evidence.get(fid):
                shown = [[n, self.cuts.text(t, 400, "evidence line")] for n, t in evidence[fid]]
                yield from self._some(self._line("evidence", {"fid": fid, "lines": shown[:256]}))
        for group, digest in sorted(digests.items(), key=lambda item: item[1]):
            members = [list(run) for run in group.members]
            yield from self._some(
                self._line(
                    "group", {"name": group.name[:4096], "digest": digest, "members": members}
                )
            )
        yield from self._some(self._end())

    @staticmethod
    def _some(line: str | None) -> Iterator[str]:
        if line is not None:
            yield line

    def _node(self) -> str | None:
        n = self.node
        body = {
            "version": n.version,
            "rules_digest": n.rules_digest,
            "log_dirs": [self.cuts.text(d) for d in n.log_dirs[:256]],
            "collected_at_utc": n.collected_at_utc,
            "tz_offset_s": n.tz_offset_s,
            "shard": None if n.shard is None else list(n.shard),
            "warnings": [self.cuts.text(w) for w in n.warnings[:64]],
        }
        return self._line("node", body if n.live is None else {**body, "live": dict(n.live)})

    def _file(
        self, fid: int, facts: FileFacts, digests: dict[Group, str], grew: float | None = None
    ) -> Iterator[str]:
        body = encode.file_facts(facts, self.cuts, digests)
        if _size(body) > BODY_BUDGET:
            body = encode.shrunk(body, self.cuts)
        hits = [encode.hit(h, self.cuts) for h in facts.hits]
        parts = _split(hits, HIT_BUDGET, MAX_RECORD - _size(body) - 1024)
        inline = parts.pop(0) if parts else []
        record = {"fid": fid, "parts": len(parts), "facts": {**body, "hits": inline}}
        if grew is not None:
            record["grew"] = round(grew, 3)
        yield from self._some(self._line("file", record))
        for number, part in enumerate(parts, 1):
            yield from self._some(self._line("hits", {"fid": fid, "part": number, "hits": part}))
        if facts.role is FileRole.SCHEDULER and (facts.registrations or facts.timed_out_nodes):
            yield from self._table(fid, facts)

    def _table(self, fid: int, facts: FileFacts) -> Iterator[str]:
        table = [encode.registration(r, self.cuts) for r in facts.registrations]
        timed_out = encode.timed_out(facts.timed_out_nodes, self.cuts)
        first = TABLE_BUDGET - _size(timed_out)
        parts = _split(table, TABLE_BUDGET, max(first, 0)) or [[]]
        for number, part in enumerate(parts, 1):
            body: dict[str, Any] = {
                "fid": fid, "part": number, "parts": len(parts), "registered": part
            }  # fmt: skip
            if number == 1 and timed_out:
                body["timed_out"] = timed_out
            yield from self._some(self._line("scheduler", body))

    def _end(self) -> str | None:
        return self._line(
            "end",
            {
                "records": self.count,
                "bytes": self.bytes,
                "files": self.files,
                "elapsed_s": round(time.monotonic() - self.started, 3),
                "cut": dict(self.cuts),
            },
        )


def _size(value: Any) -> int:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(json_document(text).encode())


def _split(items: list[dict[str, Any]], budget: int, first: int) -> list[list[dict[str, Any]]]:
    """Items (hits, registrations) in parts: the first of at most `first` bytes of JSON
    (the room left in the record it goes in, maybe none), the others of at most `budget`."""
    parts: list[list[dict[str, Any]]] = [[]]
    room = first
    for item in items:
        weight = _size(item) + 1
        if weight > room and (parts[-1] or len(parts) == 1):
            parts.append([])
            room = budget
        parts[-1].append(item)
        room -= weight
    return parts if items else []
