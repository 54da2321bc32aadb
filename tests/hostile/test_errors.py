"""A bug is still one line and exit 2, never a traceback read as exit 1 ("faults found"), and
the headless watcher writes its done event before it goes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from msrunwatch.drivers import triage as triage_driver
from msrunwatch.live import run as live_run
from msrunwatch.live.headless import Headless, HeadlessOptions
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.model import Rule
from tests.hostile.support import cli
from tests.support import FIXTURES

OOM = str(FIXTURES / "cpu_dp2_oom_alloc_failed")


def boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("unexpected\nstate \x1b[2J")


def test_an_internal_error_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(triage_driver, "scan_all", boom)
    monkeypatch.delenv("MSRUNWATCH_DEBUG", raising=False)
    code, out, err = cli(capsys, "triage", OOM)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "internal error: RuntimeError: unexpected state" in err
    assert "\x1b" not in err


def test_the_watcher_says_done_when_a_bug_stops_it(
    tmp_path: Path, rules: list[Rule], monkeypatch: pytest.MonkeyPatch
) -> None:
    live = LiveRun([OOM], rules)
    out = io.StringIO()
    headless = Headless(live, HeadlessOptions(), out=out, err=io.StringIO(), tick_s=0.01)
    monkeypatch.setattr(live_run.LiveRun, "tick", boom)
    try:
        with pytest.raises(RuntimeError):
            headless.run()
    finally:
        live.close()
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last["event"] == "done" and last["reason"] == "error"
    assert "RuntimeError" in last["error"]
