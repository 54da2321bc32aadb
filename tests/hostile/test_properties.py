"""Property tests: arbitrary lines and bytes, alone or mixed into real log lines, go through
triage, every output format and the live engine without an exception, and every output is
valid (strict JSON, SARIF against its schema, XML, one-line annotations, no raw controls)."""

from __future__ import annotations

import io
import json
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msrunwatch.core.errors import MsrunwatchError
from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Report
from msrunwatch.live.headless import Headless, HeadlessOptions
from msrunwatch.live.run import LiveRun
from msrunwatch.report import github, gitlab, jsonout, junit, lint, markdown, sarif, text
from msrunwatch.rules.loader import load_rules
from tests.hostile.support import strict_json
from tests.support import ROOT

RULES = load_rules()
SARIF = json.loads((ROOT / "tests/integration/schemas/sarif-schema-2.1.0.json").read_text())
RAW = re.compile("[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
"""Controls that must not reach a terminal (ESC is checked apart: colours use it)."""

NUMBER = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["inf", "-inf", "nan", "1e999", "9" * 500, "", "0x1f", "²", "1_0"]),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
NOISE = st.text(
    st.characters(codec="utf-8", exclude_characters="\n"), max_size=40
) | st.sampled_from(["\x1b]0;x\x07", "\x1b[2J", "\r", "<img src=x>", "[a](b)", "|", "\u202e"])


@st.composite
def log_line(draw: st.DrawFn) -> str:
    """A line shaped like one msrunwatch parses, with hostile fields."""
    n, noise = draw(NUMBER), draw(NOISE)
    date = draw(st.sampled_from(["2026-11-21", "9999-12-31", "2026-11-99", "0000-00-00"]))
    shapes = [
        f"[ERROR] ME({n},7f,python):{date}-05:34:25.600.374 [a.cc:1] F] {noise}",
        f"[WARNING] ME(1,7f,python):{date}-05:34:25.600.374 [a.cc:1] F] This node x rank id: {n}",
        f"Device MOC memory size: {n}M",
        f"Actual peak memory usage (with fragments): {n}M",
        f"epoch: {n} step: {n}, loss is {n}",
        f"epoch time: 1 ms, per step time: {n} ms",
        f"[PROF]compile_graph costs {n} msec",
        f" iteration {n}/ 10 | elapsed time per iteration (ms): {n} | lm loss: {n}",
        f"{{ Epoch:[{n}/ 2], step:[ {n}/ {n}], loss: {n}, per_step_time: {n}ms",
        "Traceback (most recent call last):",
        f"RuntimeError: {noise}",
        f"[ERROR] RUNTIME(1,7f,python):{date}-05:34:25.600.374 [m.cc:1] F] Memory isn't enough "
        f"and alloc failed, kernel name: {noise}, alloc size: {n}B",
        noise,
    ]
    return draw(st.sampled_from(shapes))


LOG = st.one_of(
    st.lists(log_line(), max_size=12).map(
        lambda lines: "\n".join(lines).encode("utf-8", "replace")
    ),
    st.binary(max_size=600),
)


def check_formats(report: Report) -> None:
    """Every format renders, and each is valid in its own terms."""
    strict_json(jsonout.render(report))
    log = json.loads(sarif.render(report, RULES))
    jsonschema.validate(log, SARIF)
    ET.fromstring(junit.render(report, RULES))
    assert isinstance(strict_json(gitlab.render(report, RULES)), list)
    annotations = github.render(report, RULES)
    assert all(line.startswith("::") for line in annotations.splitlines())
    for out in (
        annotations,
        lint.render(report, RULES),
        text.render(report, color=False),
        markdown.render(report),
        github.summary(report, RULES),
    ):
        assert RAW.search(out) is None and "\x1b" not in out
    coloured = re.sub("\x1b\\[[0-9;]*m", "", text.render(report, color=True))
    assert "\x1b" not in coloured and RAW.search(coloured) is None


def write_run(root: Path, logs: list[bytes]) -> Path:
    directory = root / "msrun_log"
    directory.mkdir()
    for rank, data in enumerate(logs):
        (directory / f"worker_{rank}.log").write_bytes(data)
    return directory


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs=st.lists(LOG, min_size=1, max_size=3))
def test_any_log_triages_and_renders_in_every_format(logs: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = write_run(Path(tmp), logs)
        try:
            report = triage([str(directory)], RULES)
        except MsrunwatchError as exc:  # nothing an msrun log: one line, exit 2
            assert "\n" not in str(exc)
            return
        check_formats(report)


def events_of(out: io.StringIO) -> list[dict[str, Any]]:
    return [strict_json(line) for line in out.getvalue().splitlines()]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=LOG, more=st.lists(LOG, max_size=3), restart=st.booleans())
def test_the_live_engine_follows_any_bytes(first: bytes, more: list[bytes], restart: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = write_run(Path(tmp), [first])
        live = LiveRun([str(directory)], RULES)
        out, err = io.StringIO(), io.StringIO()
        headless = Headless(live, HeadlessOptions(), out=out, err=err, tick_s=0.01)
        try:
            headless.step()
            log = directory / "worker_0.log"
            for data in more:
                if restart:
                    log.write_bytes(b"")
                    headless.step()
                with log.open("ab") as fh:
                    fh.write(data)
                headless.step()
            check_formats(live.tick().report)
        finally:
            headless.close()
            live.close()
        events = events_of(out)
        assert events[0]["event"] == "start"
        assert RAW.search(err.getvalue()) is None
