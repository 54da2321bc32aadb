"""Fuzz msrunwatch's readers with hostile input, under a memory cap and a time cap.

    .venv/bin/python bench/fuzz.py                    # 60 s, all targets, seed 1
    .venv/bin/python bench/fuzz.py --short            # a few seconds: what CI runs
    .venv/bin/python bench/fuzz.py --seconds 600 --seed 7 --targets logs,rules
    .venv/bin/python bench/fuzz.py --replay rules:1:42 # one case again, by its id

Seven targets, each case built from a seeded random generator (so every failure can be
replayed by its id) out of real material made hostile:

* logs: a run directory of worker logs whose lines are the built-in rules' own case lines
  and every structural shape the readers parse (GLOG headers, memory block, LossMonitor,
  MindFormers, Megatron, [PROF], scheduler, msrun), with their numbers replaced by 5,000
  digits, `inf`, `nan`, `1e999`, dates on day 99 or in year 9999, escapes, HTML, bidi
  overrides, NULs, CR-only line ends, invalid UTF-8, GB18030, lines of up to a few MiB;
  UTF-16 and UTF-32 with and without a BOM; file names in GBK bytes (not UTF-8), with
  escape sequences, a bidi override or a line break;
  sometimes a FIFO, a symlink to /dev/zero or a symlink loop beside them. Triaged, then
  rendered in every format; the JSON must be strict, the SARIF and JUnit must parse, the
  terminal formats must carry no raw control character.
* scanner: the same bytes fed to one FileScanner in random-sized pieces.
* renames: logs listed, then renamed away, removed, cut, grown, or swapped for a FIFO, a
  link to /dev/zero, a link out of the directory or a directory, before they are read.
* facts: the facts streams `msrunwatch facts` writes for four real runs, lines dropped,
  doubled, torn, reordered, prefixed by a transport, nested up to 200,000 deep, megabytes long,
  values replaced by huge numbers, lone surrogates, escapes and wrong types; in one file,
  two, or a gzip cut anywhere. Triaged as `triage DIR` of facts does, then rendered.
* metrics: the metrics endpoint of a failed run sent garbage, huge and endless headers,
  pipelined, cut and binary requests; a scrape after them must be 200 and valid
  Prometheus text, and closing the server must leave no thread behind.
* rules: built-in rule files with their pattern, condition and message spliced with
  nested counted repeats, huge counts, catastrophic nesting, broken syntax, YAML alias
  bombs; loaded as `--rules` loads them (a RuleError of one line is a pass), then run on
  hostile lines.
* configs: the training configs in fixtures/configs/ with numbers made huge, negative or
  infinite, alias bombs, deep nesting, tags, broken quotes and arithmetic; read and linted
  (a ConfigError of one line is a pass).

A case fails when anything but msrunwatch's own one-line error escapes, when an output is
invalid, when it runs past --case-seconds (SIGALRM), or when it needs more memory than
--memory-mib (RLIMIT_AS on this process: MemoryError). The input of each failure is kept
in bench/out/fuzz/ for replay. Exit status 1 when any case failed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "fuzz"
RAW = re.compile(
    "[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
"""Control characters (but tab, line feed and ESC, tested apart) and bidi marks and overrides."""

NUMBERS = [
    "9" * 5000, "9" * 400, "inf", "-inf", "nan", "NaN", "1e999", "-1", "0", "²", "٣",
    "0x10", "", "18446744073709551617", "1_000", "1e-999", "+7", "4294967296",
]  # fmt: skip
TEXTS = [
    "\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\r", "\x00", "\u202e", "\u2028", "<img src=x>",
    "[x](https://e.example)", "| a |", "%s%n", "$(id)", "`id`", "${HOME}", "\\", "'\"",
    "内存不足", "\ufeff", "A" * 300,
]  # fmt: skip
ENCODINGS = ["utf-8", "utf-8", "utf-8", "gb18030", "latin-1", "utf-16", "utf-16-be", "utf-32"]
"""A log's encoding: UTF-16 and UTF-32 with a BOM (utf-16, utf-32) or without (utf-16-be)."""
NAMES = [
    b"worker_%d.log", b"worker_%d.log", b"rank_%d/worker_0.log",
    b"worker_%d_\xd7\xf7\xd2\xb5.log", b"worker_%d\x1b]0;owned\x07.log",
    "worker_%d\u202egol.log".encode(), b"worker_%d\n[ERROR] forged.log", b"\xff\xfe%d.log",
]  # fmt: skip
"""File names: GBK bytes (not UTF-8), escape sequences, a bidi override, a line break."""
DATES = ["2026-11-21", "9999-12-31", "2026-11-99", "2026-13-01", "0000-00-00", "1970-01-01"]
SHAPES = [
    "[{level}] ME({n},7f,python):{date}-05:34:25.600.374 [a.cc:1] F] {t}",
    "[WARNING] ME(1,7f,python):{date}-05:34:21.000.{n} [a.cc:1] F] This node {t} rank id: {n}",
    "[INFO] DISTRIBUTED(1,7f,python):{date}-05:34:21.000.000 [meta_server_node.cc:1] x] "
    "The new node: {t}(role: MS_WORKER), rank id: {n}, device id: 0, hostname: {t}, ip: 1 is "
    "registered successfully. Currently registered node number: 1, expected node number: {n}",
    "Device MOC memory size: {n}M", "MindSpore Used memory size: {n}M",
    "Used peak memory usage (without fragments): {n}M",
    "Actual peak memory usage (with fragments): {n}M",
    "epoch: {n} step: {n}, loss is {n}", "epoch time: 1 ms, per step time: {n} ms",
    "[PROF]compile_graph costs {n} msec", "[PROF]{t} costs {n} msec",
    " iteration {n}/ 10 | elapsed time per iteration (ms): {n} | lm loss: {n}",
    "{{ Epoch:[{n}/ 2], step:[ {n}/ {n}], loss: {n}, per_step_time: {n}ms",
    "Traceback (most recent call last):", "{t}Error: {t}",
    "Worker process {n} exit with exception. Error code: {n}.",
    "Start worker process with rank id:{n}, log file:{t}. Environment variable [RANK_ID={n}]",
    "[before the start of training step] datetime: {date} 07:17:08",
]  # fmt: skip
REGEX_BITS = [
    "(?:a{1000}){1000}", "a{4294967294}", "(a+)+$", r"(\w*\s?)*x", "(?:x{65535}){65535}",
    "(?<=a{1,99})b", r"\p{Nope}", "(?P<n>", "[z-a]", "(?i)(?:[a-z]{2,}\\w*){5000}", "*",
    "(?:(?:(?:a{99}){99}){99})", "\\", "(?P<size>\\d+)", "{e<=3}", "(?|a|b)", "x" * 5000,
]  # fmt: skip
WHEN_BITS = [
    "size * size * size * size", "'x' * size", "1 / 0", "(" * 300 + "1" + ")" * 300,
    "size > 1e999", "int('9' * 99)", "__import__('os')", "len(text) > 0 and text in text",
]  # fmt: skip


def bomb(levels: int = 10) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@dataclass
class Material:
    """Real lines and files to start from: the rules' own cases and the config fixtures."""

    lines: list[str] = field(default_factory=list)
    rule_files: list[Path] = field(default_factory=list)
    configs: list[Path] = field(default_factory=list)
    facts: list[list[str]] = field(default_factory=list)
    """The facts lines `msrunwatch facts` writes for a few real runs, one list per node."""

    @classmethod
    def load(cls) -> Material:
        import yaml

        found = cls()
        for path in sorted((ROOT / "rules").rglob("*.cases.yaml")):
            cases = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("cases", {})
            for case in cases.values():
                logs = [case.get("log") or "", *(case.get("logs") or {}).values()]
                found.lines += [line for text in logs for line in str(text).splitlines()]
        found.rule_files = [
            p for p in sorted((ROOT / "rules").rglob("*.yaml")) if ".cases." not in p.name
        ]
        found.configs = sorted((ROOT / "fixtures" / "configs").glob("*.*[hl]"))
        found.facts = facts_of(FACTS_RUNS)
        return found


FACTS_RUNS = (
    "cpu_dp2_oom_alloc_failed/msrun_log",
    "cpu_2nodes_noderank_ok/node0",
    "cpu_2nodes_noderank_ok/node1",
    "cpu_dp4_hang_rank2_allreduce_timeout/msrun_log",
)


def facts_of(runs: tuple[str, ...]) -> list[list[str]]:
    """Each run's facts lines, as its node wrote them."""
    from msrunwatch.drivers.facts import stream_lines
    from msrunwatch.rules.loader import load_rules

    rules = load_rules()
    found = []
    for n, run in enumerate(runs):
        lines, _, _ = stream_lines(
            [str(ROOT / "fixtures" / run)], rules, f"node-{n}", None, (), True
        )
        found.append(list(lines))
    return found


def hostile_line(rng: random.Random, material: Material) -> str:
    """A real or structural line with hostile fields spliced in."""
    if rng.random() < 0.5 and material.lines:
        line = rng.choice(material.lines)
        line = re.sub(r"\d+", lambda m: rng.choice(NUMBERS) if rng.random() < 0.3 else m[0], line)
        if rng.random() < 0.3:
            at = rng.randrange(len(line) + 1)
            line = line[:at] + rng.choice(TEXTS) + line[at:]
        return line
    return rng.choice(SHAPES).format(
        level=rng.choice(["ERROR", "WARNING", "INFO", "CRITICAL", "V9"]),
        n=rng.choice(NUMBERS) if rng.random() < 0.6 else str(rng.randrange(100)),
        date=rng.choice(DATES),
        t=rng.choice(TEXTS) if rng.random() < 0.6 else "x",
    )


def hostile_bytes(rng: random.Random, material: Material, scale: int) -> bytes:
    """A log file's bytes: hostile lines, joined and encoded in hostile ways."""
    lines = [hostile_line(rng, material) for _ in range(rng.randrange(1, 40))]
    end = rng.choice(["\n", "\n", "\r\n", "\r"])
    text = end.join(lines) + (end if rng.random() < 0.8 else "")
    data = text.encode(rng.choice(ENCODINGS), "replace")
    if rng.random() < 0.2:
        data += os.urandom(rng.randrange(1, 512))
    if rng.random() < 0.1:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + b"y" * rng.randrange(scale) + data[at:]  # a very long line
    return data


def oddities(rng: random.Random, directory: Path) -> None:
    """Sometimes a FIFO, a device link or a symlink loop beside the logs."""
    roll = rng.random()
    if roll < 0.1:
        os.mkfifo(directory / "worker_97.log")
    elif roll < 0.2:
        (directory / "worker_98.log").symlink_to("/dev/zero")
    elif roll < 0.3:
        (directory / "worker_99.log").symlink_to("worker_99.log")


PENDING = {
    "msrunwatch/judge/config/": "huge config values (float overflow, a list per stage): "
    "judge/config, owned by the config work",
    "msrunwatch/read/config/shell": "launch-script expansion: owned by the config work",
}
"""Failures whose innermost msrunwatch frame is in these files are known and owned by other
work: they are listed as PENDING, with the owner, and do not fail the run."""


def pending(exc: BaseException) -> str | None:
    """The owner of a known failure, or None."""
    frames = [f.filename for f in traceback.extract_tb(exc.__traceback__)]
    ours = [name for name in frames if "/msrunwatch/" in name]
    innermost = ours[-1] if ours else ""
    return next((why for path, why in PENDING.items() if path in innermost), None)


class CaseTimeout(Exception):
    """Not an OSError, so code that swallows OSError cannot hide it."""


@dataclass
class Fuzz:
    material: Material
    rules: list[object]
    scale: int
    work: Path
    verbose: bool = False

    def triaged(self, target: str) -> None:
        """Triaged: a one-line error, or a report valid in every format."""
        from msrunwatch.core.errors import MsrunwatchError
        from msrunwatch.drivers.triage import triage

        try:
            report = triage([target], self.rules)  # type: ignore[arg-type]
        except MsrunwatchError as exc:
            one_line(str(exc))
            return
        check_formats(report, self.rules)

    def logs(self, rng: random.Random) -> None:
        directory = self.work / "msrun_log"
        directory.mkdir()
        for rank in range(rng.randrange(1, 4)):
            path = os.path.join(os.fsencode(directory), rng.choice(NAMES) % rank)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(hostile_bytes(rng, self.material, self.scale))
        oddities(rng, directory)
        self.triaged(str(directory))

    def scanner(self, rng: random.Random) -> None:
        from msrunwatch.read.facts import FileRole
        from msrunwatch.read.scan import FileScanner
        from msrunwatch.rules.matcher import LineMatcher

        data = hostile_bytes(rng, self.material, self.scale)
        role = rng.choice(list(FileRole))
        scanner = FileScanner("worker_0.log", "d", role, LineMatcher(self.rules), 0)  # type: ignore[arg-type]
        at = 0
        while at < len(data):
            step = rng.randrange(1, 4096)
            scanner.feed(data[at : at + step])
            at += step
        scanner.close()
        scanner.facts()

    def renames(self, rng: random.Random) -> None:
        """Logs listed, then renamed away, removed, cut, grown, or swapped for a FIFO, a
        link to /dev/zero or a link out of the directory before they are read."""
        from msrunwatch.drivers import triage as driver

        directory = self.work / "msrun_log"
        directory.mkdir()
        logs = [directory / f"worker_{rank}.log" for rank in range(rng.randrange(1, 4))]
        for path in logs:
            path.write_bytes(hostile_bytes(rng, self.material, self.scale))
        real = driver.scan_all

        def scan_all(files: list[object], *args: object) -> object:
            for path in logs:
                if rng.random() < 0.6:
                    swap(rng, path, self.work)
            return real(files, *args)  # type: ignore[arg-type]

        driver.scan_all = scan_all  # type: ignore[assignment]
        try:
            self.triaged(str(directory))
        finally:
            driver.scan_all = real

    def facts(self, rng: random.Random) -> None:
        """Facts streams of real runs, torn, duplicated, reordered, forged, prefixed and
        spliced with hostile values, in one file, several or a gzip."""
        nodes = rng.sample(self.material.facts, rng.randrange(1, len(self.material.facts) + 1))
        lines = [hostile_facts_line(rng, line) for node in nodes for line in node]
        lines = [line for line in lines if line is not None]
        if rng.random() < 0.3:
            rng.shuffle(lines)
        data = "".join(lines).encode("utf-8", "surrogatepass")  # a lone surrogate: not UTF-8
        folder = self.work / "facts"
        folder.mkdir()
        roll = rng.random()
        if roll < 0.2:
            import gzip

            packed = gzip.compress(data)
            (folder / "all.facts.jsonl.gz").write_bytes(packed[: rng.randrange(len(packed) + 1)])
        elif roll < 0.4:
            half = rng.randrange(len(data) + 1)
            (folder / "a.facts.jsonl").write_bytes(data[:half])
            (folder / "b.facts.jsonl").write_bytes(data[half:])
        else:
            (folder / "all.facts.jsonl").write_bytes(data)
        self.triaged(str(folder))

    def metrics(self, rng: random.Random) -> None:
        """The metrics endpoint of a failed run, sent hostile requests; a scrape after them
        is whole and valid, and closing the server leaves no thread behind."""
        import threading

        from prometheus_client import CollectorRegistry

        from msrunwatch.live.headless.metrics import RunCollector, Snapshot, serve

        threads = threading.active_count()
        collector = RunCollector(time.time)
        collector.snapshot = Snapshot(report=self.failed_report(), files=2, caught_up=True)
        registry = CollectorRegistry()
        registry.register(collector)
        server, _ = serve(registry, "127.0.0.1", 0)
        try:
            for _ in range(rng.randrange(1, 6)):
                hostile_request(rng, server.server_port, self.scale)
            check_scrape(server.server_port)
        finally:
            server.shutdown()
            server.server_close()
        deadline = time.monotonic() + 5
        while threading.active_count() > threads and time.monotonic() < deadline:
            time.sleep(0.01)
        assert threading.active_count() <= threads, "the metrics server left threads behind"

    def failed_report(self) -> object:
        if not hasattr(self, "_failed"):
            from msrunwatch.drivers.triage import triage

            failed = ROOT / "fixtures" / "cpu_dp2_oom_alloc_failed" / "msrun_log"
            self._failed = triage([str(failed)], self.rules)  # type: ignore[arg-type]
        return self._failed

    def rules_(self, rng: random.Random) -> None:
        from msrunwatch.core.errors import RuleError
        from msrunwatch.rules.loader import load_rule
        from msrunwatch.rules.matcher import LineMatcher

        source = rng.choice(self.material.rule_files)
        text = source.read_text(encoding="utf-8")
        text = mutate_rule(rng, text)
        path = self.work / source.name
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        try:
            rule = load_rule(path)
        except RuleError as exc:
            one_line(str(exc))
            return
        matcher = LineMatcher([rule])
        for _ in range(20):
            matcher.match(hostile_line(rng, self.material))

    def configs(self, rng: random.Random) -> None:
        from msrunwatch.core.errors import ConfigError
        from msrunwatch.drivers.configs import lint_configs
        from msrunwatch.drivers.options import Launch

        source = rng.choice(self.material.configs)
        text = mutate_config(rng, source.read_text(encoding="utf-8"), source.suffix)
        path = self.work / source.name
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        try:
            report = lint_configs([str(path)], self.rules, Launch(rng.choice([None, 8, 0, 7])))  # type: ignore[arg-type]
        except ConfigError as exc:
            one_line(str(exc))
            return
        check_formats(report, self.rules)


def swap(rng: random.Random, path: Path, work: Path) -> None:
    """One change to a listed log before it is read."""
    roll = rng.random()
    if roll < 0.15:
        path.rename(work / "rotated.log")
    elif roll < 0.3:
        path.unlink()
    elif roll < 0.45:
        os.truncate(path, rng.randrange(path.stat().st_size + 1))
    elif roll < 0.6:
        with path.open("ab") as fh:
            fh.write(b"[ERROR] ME(1,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] grown\n")
    elif roll < 0.7:
        path.unlink()
        os.mkfifo(path)
    elif roll < 0.8:
        path.unlink()
        path.symlink_to("/dev/zero")
    elif roll < 0.9:
        outside = work / "outside.log"
        path.rename(outside)
        path.symlink_to(outside)
    else:
        path.unlink()
        path.mkdir()


PREFIXES = ["", "", "", "3: ", "node-007: ", "[pod/trainer-3/main] ", "\x1b[31m", "{"]


def hostile_facts_line(rng: random.Random, line: str) -> str | None:
    """A facts line kept, dropped, doubled, torn, reshaped or spliced with hostile values."""
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return line + line
    if roll < 0.15:
        return line[: rng.randrange(len(line))] + "\n"
    if roll < 0.18:
        return '{"kind":"node","stream":"s","a":' + "[" * rng.randrange(1, 200_000) + "\n"
    if roll < 0.2:
        return '{"kind":"node","x":"' + "a" * rng.randrange(1 << 20, 3 << 20) + '"}\n'  # over 1 MiB
    if roll < 0.4:
        record = json.loads(line)
        splice(rng, record)
        line = json.dumps(record, ensure_ascii=rng.random() < 0.5) + "\n"
    return rng.choice(PREFIXES) + line


def splice(rng: random.Random, record: object, depth: int = 0) -> None:
    """Hostile values in place of some of a record's own (numbers, texts, lists)."""
    items = (
        list(record.items()) if isinstance(record, dict)
        else list(enumerate(record)) if isinstance(record, list) else []
    )  # fmt: skip
    for key, value in items:
        if isinstance(value, (dict, list)) and depth < 6:
            splice(rng, value, depth + 1)
        elif rng.random() < 0.2:
            record[key] = rng.choice(HOSTILE_VALUES)  # type: ignore[index]
        elif isinstance(value, str) and rng.random() < 0.2:
            record[key] = value + rng.choice(TEXTS)  # type: ignore[index]


HOSTILE_VALUES: list[object] = [
    None, True, -1, 0, 2**63, -(2**63), 10**400, 1e308, -1e308, 9e15, "", "x" * 5000,
    [], {}, [[[[]]]], {"kind": "node"}, "\ud800", 0.5,
]  # fmt: skip


def hostile_request(rng: random.Random, port: int, scale: int) -> None:
    """One hostile HTTP client: garbage, huge or endless headers, a slow or cut request."""
    import socket

    choices = [
        b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * scale + b"\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * (scale // 8),
        os.urandom(rng.randrange(1, 2048)),
        b"GET /" + b"../" * 100 + b"etc/passwd HTTP/1.0\r\n\r\n",
        b"GET /metrics\x00\x1b[2J HTTP/1.1\r\n\r\n",
        b"POST /metrics HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\nxx",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50,
        b"GET /metrics HTTP/1.1\r\n",  # never ends its headers
        b"GET /%ff%fe%00 HTTP/1.1\r\n\r\n",
        b"\r\n" * 1000,
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        try:
            sock.sendall(rng.choice(choices))
            if rng.random() < 0.5:
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):
                    pass
        except OSError:
            pass  # the server hung up on it: that is its right


def check_scrape(port: int) -> None:
    """A plain scrape: 200, and Prometheus text that parses, with the run's outcome."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.status == 200, answer.status
        body = answer.read().decode("utf-8")
    names = {family.name for family in text_string_to_metric_families(body)}
    assert "msrunwatch_run_outcome" in names, sorted(names)


def mutate_rule(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.1:
        return text + bomb()
    if roll < 0.15:
        return "".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randrange(200)))
    bit = rng.choice(REGEX_BITS)
    if roll < 0.6 and "match:" in text:
        return re.sub(r"^match: .*$", lambda m: f"match: '{bit}'", text, count=1, flags=re.M)
    if roll < 0.8:
        return text + f"when: '{rng.choice(WHEN_BITS)}'\n"
    return re.sub(r"^message: .*$", "message: '{nope} {" + "x" * 5000 + "}'", text, flags=re.M)


def mutate_config(rng: random.Random, text: str, suffix: str) -> str:
    roll = rng.random()
    if roll < 0.1 and suffix in (".yaml", ".yml"):
        return text + bomb()
    if roll < 0.15:
        return "a: " + "[" * rng.randrange(100, 3000) + "\n"
    if roll < 0.2:
        return text + "\nobj: !!python/object/apply:os.system ['id']\n"
    if roll < 0.3 and suffix == ".sh":
        return text + '\nX=$((2**62 * 2**62 * 2**62))\nY=$(( (((((1))))) / 0 ))\nZ="unterminated\n'
    return re.sub(r"\b\d+\b", lambda m: rng.choice(NUMBERS) if rng.random() < 0.3 else m[0], text)


def one_line(message: str) -> None:
    assert "\n" not in message, f"error message of several lines: {message!r}"


def check_formats(report: object, rules: list[object]) -> None:
    """Every format renders and is valid: strict JSON, parsable SARIF and XML, no raw
    control characters in what a terminal or a CI log shows."""
    from msrunwatch.report import github, gitlab, jsonout, junit, lint, markdown, sarif, text

    def strict(data: str) -> object:
        return json.loads(data, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))

    strict(jsonout.render(report))  # type: ignore[arg-type]
    strict(sarif.render(report, rules))  # type: ignore[arg-type]
    strict(gitlab.render(report, rules))  # type: ignore[arg-type]
    ET.fromstring(junit.render(report, rules))  # type: ignore[arg-type]
    for out in (
        github.render(report, rules),  # type: ignore[arg-type]
        lint.render(report, rules),  # type: ignore[arg-type]
        text.render(report),  # type: ignore[arg-type]
        markdown.render(report),  # type: ignore[arg-type]
    ):
        assert RAW.search(out) is None and "\x1b" not in out, "a raw control character"


def _expired(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout("the case ran past its time cap")


@dataclass
class Tally:
    cases: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)


def run_case(fuzz: Fuzz, target: str, seed: int, index: int, case_s: float, tally: Tally) -> None:
    """One case in a fresh directory; a failure keeps its input for replay."""
    rng = random.Random(f"{target}:{seed}:{index}")
    work = Path(tempfile.mkdtemp(prefix="msrunwatch-fuzz-"))
    fuzz.work = work
    method: Callable[[random.Random], None] = getattr(
        fuzz, "rules_" if target == "rules" else target
    )
    signal.setitimer(signal.ITIMER_REAL, case_s, 1.0)
    try:
        method(rng)
    except BaseException as exc:  # every escape is a finding of the harness
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(exc, KeyboardInterrupt):
            raise
        kept = OUT / f"{target}-{seed}-{index}"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(work, kept, symlinks=True, ignore_dangling_symlinks=True)
        head = "".join(traceback.format_exception_only(type(exc), exc)).strip()[:300]
        if fuzz.verbose:
            traceback.print_exc()
        owner = pending(exc)
        entry = f"{target}:{seed}:{index}: {head} (input: {kept})"
        (tally.pending if owner else tally.failures).append(
            entry + (f" [{owner}]" if owner else "")
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        shutil.rmtree(work, ignore_errors=True)
    tally.cases[target] = tally.cases.get(target, 0) + 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", action="store_true", help="a few seconds, small inputs (CI)")
    parser.add_argument("--seconds", type=float, default=60.0, help="time for all cases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default="logs,scanner,renames,facts,metrics,rules,configs")
    parser.add_argument("--case-seconds", type=float, default=20.0, help="time cap of one case")
    parser.add_argument("--memory-mib", type=int, default=1024, help="RLIMIT_AS of this process")
    parser.add_argument("--replay", metavar="TARGET:SEED:INDEX", help="run one case again")
    args = parser.parse_args()
    cap = args.memory_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    signal.signal(signal.SIGALRM, _expired)

    from msrunwatch.rules.loader import load_rules

    seconds = 6.0 if args.short else args.seconds
    fuzz = Fuzz(Material.load(), list(load_rules()), 64 << 10 if args.short else 4 << 20, Path())
    targets = args.targets.split(",")
    tally = Tally()
    began = time.monotonic()
    if args.replay:
        target, seed, index = args.replay.split(":")
        fuzz.verbose = True
        run_case(fuzz, target, int(seed), int(index), args.case_seconds, tally)
    else:
        index = 0
        while time.monotonic() - began < seconds:
            for target in targets:
                run_case(fuzz, target, args.seed, index, args.case_seconds, tally)
            index += 1
    took = time.monotonic() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    done = ", ".join(f"{n} {t}" for t, n in tally.cases.items())
    print(f"fuzz: {sum(tally.cases.values())} cases ({done}) in {took:.1f} s, peak RSS {peak} MiB, "
          f"memory cap {args.memory_mib} MiB, {len(tally.failures)} failed, "
          f"{len(tally.pending)} pending elsewhere")  # fmt: skip
    for failure in tally.failures:
        print(f"  FAIL {failure}")
    for known in tally.pending:
        print(f"  PENDING {known}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="backslashreplace")
    sys.exit(main())
