"""Encodings detected, never silently healthy (issue 21, defect 12): a log in UTF-16 or
UTF-32, with or without a byte-order mark, is read as the same log in UTF-8 would be, with a
warning saying so. Before, its fault was missed: outcome unknown, exit 0, no warning."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.hostile.support import cli, strict_json
from tests.support import FIXTURES

OOM = FIXTURES / "cpu_dp2_oom_alloc_failed" / "msrun_log"
HANG = FIXTURES / "cpu_dp4_hang_rank2_allreduce_timeout" / "msrun_log"
CODECS = {
    "utf-16": "UTF-16",  # Python writes a byte-order mark
    "utf-16-le": "UTF-16LE",
    "utf-16-be": "UTF-16BE",
    "utf-32": "UTF-32",
    "utf-32-le": "UTF-32LE",
}


def encoded_copy(source: Path, directory: Path, codec: str) -> Path:
    directory.mkdir(parents=True)
    for path in source.iterdir():
        text = path.read_bytes().decode("utf-8")
        (directory / path.name).write_bytes(text.encode(codec))
    return directory


def verdict(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, dict[str, object]]:
    code, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    report = strict_json(out)
    return code, {
        k: v for k, v in report.items() if k in ("outcome", "root_cause", "ranks", "findings")
    }


@pytest.mark.parametrize("source", [OOM, HANG], ids=["oom", "hang"])
@pytest.mark.parametrize("codec", list(CODECS))
def test_a_utf16_or_utf32_log_is_read_as_its_utf8_twin(
    codec: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = encoded_copy(source, tmp_path / codec / "msrun_log", codec)
    code, seen = verdict(capsys, directory)
    twin_code, twin = verdict(capsys, source)
    assert code == twin_code == 1
    assert _relabelled(seen, str(directory), str(source)) == twin
    _, out, _ = cli(capsys, "triage", str(directory), "--format", "json")
    notes = strict_json(out)["warnings"]
    assert notes == [
        f"{directory / p.name}: {CODECS[codec]} text, read as such (converted to UTF-8)"
        for p in sorted(source.iterdir())
    ]


def _relabelled(value: object, old: str, new: str) -> object:
    """The report with one log directory's name for another's."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _relabelled(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_relabelled(v, old, new) for v in value]
    return value


def test_the_watcher_reads_utf16_in_reads_of_any_size(tmp_path: Path, rules: list[Rule]) -> None:
    directory = encoded_copy(OOM, tmp_path / "msrun_log", "utf-16-le")
    live = LiveRun([str(directory)], rules, per_tick=1001)  # odd: code units cut in two
    try:
        update = live.tick()
        while not update.caught_up:
            update = live.tick()
    finally:
        live.close()
    cause = update.report.root_cause
    assert cause is not None and cause.ranks == (1,) and cause.category == "oom"
    assert any("UTF-16LE text" in w for w in update.report.warnings)


def test_decoding_in_blocks_of_any_size_gives_the_same_bytes() -> None:
    from msrunwatch.read.encoding import Transcoder

    text = (OOM / "worker_1.log").read_text(encoding="utf-8") + "内存不足 \U0001f4a5 end\n"
    rng = random.Random(21)
    for codec in CODECS:
        data = text.encode(codec)
        for _ in range(20):
            transcoder, out, at = Transcoder(codec), b"", 0
            while at < len(data):
                step = rng.randrange(1, 64)
                out += transcoder.feed(data[at : at + step])
                at += step
            assert out + transcoder.close() == text.encode("utf-8")


@pytest.mark.parametrize(
    "head",
    [
        b"\0" * 8192 + b"[ERROR] ME(1,7f,python):2026-11-21-05:34:25.600.374 [a.cc:1] F] x\n",
        "内存不足\n".encode("gb18030") * 100,
        "[ERROR] 内存不足\n".encode() * 100,
        bytes(range(256)) * 16,
    ],
    ids=["sparse-head", "gb18030", "utf-8", "binary"],
)
def test_what_is_not_utf16_is_read_as_bytes(head: bytes) -> None:
    from msrunwatch.read.encoding import detect

    assert detect(head) is None


def _by_unit_count(head: bytes) -> str | None:
    """detect() without its shortcut: the byte-order marks, then the unit count."""
    from msrunwatch.read import encoding

    for bom, codec in encoding._BOMS:
        if head.startswith(bom):
            return codec
    probe = head[: encoding.PROBE]
    for width, codec in ((4, "utf-32"), (2, "utf-16")):
        if order := encoding._order(probe, width):
            return f"{codec}-{order}"
    return None


def test_detect_returns_early_on_a_head_without_nul_as_the_unit_count_would() -> None:
    """detect() returns at once when the probe holds no NUL (every log of bytes: 100,000
    files read their heads through it); on random heads with and without NULs, and on real
    logs, it answers as the unit count does."""
    from msrunwatch.read import encoding

    pick = random.Random(12)
    heads = [pick.randbytes(pick.randrange(0, 300)) for _ in range(300)]
    heads += [h.replace(b"\0", b"") for h in heads]
    heads += [p.read_bytes()[:4096] for p in sorted(FIXTURES.glob("*/msrun_log/*.log"))[:20]]
    heads += ["worker log line\n".encode(c) * 4 for c in ("utf-16-le", "utf-32-be")]
    assert [encoding.detect(h) for h in heads] == [_by_unit_count(h) for h in heads]
    assert encoding.detect("worker log line\n".encode("utf-16-le") * 4) == "utf-16-le"
