"""The view honours --on-finding, --events FILE and --metrics-port as headless does.

GIVEN a copy of a run where rank 1 ran out of memory and rank 0 then timed out, WHEN the
view follows it with a hook, an events file and a metrics port, THEN the hook runs once (the
OOM, not the timeout it caused), the events file holds the same events headless writes,
ending with `done` once the view is quit, and /metrics names rank 1 as the root cause while
the view is up. A hook that fails is a notification in the view, and stays on stderr once
it closed. An output the view cannot honour is refused (exit 2), never ignored.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.commands import watch
from msrunwatch.live.headless import HeadlessOptions
from msrunwatch.live.run import LiveRun
from msrunwatch.rules.loader import load_rules
from msrunwatch.tui.launch import done_event, view
from tests.support import HANG_S
from tests.tui.test_tui_feed import until
from tests.tui.tui_scenarios import FIXTURES

OOM = "cpu_dp2_oom_alloc_failed"


@pytest.fixture
def oom_copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / OOM, run)
    return run


def events_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
async def test_the_view_runs_the_hook_once_writes_events_and_serves_metrics(
    oom_copy: Path, tmp_path: Path
) -> None:
    events, ran = tmp_path / "events.jsonl", tmp_path / "hook.jsonl"
    hook = f'echo "to stdout"; echo "to stderr" >&2; cat >> "{ran}"'
    options = HeadlessOptions(events=str(events), metrics_port=0, on_finding=hook)
    live = LiveRun([str(oom_copy)], load_rules(), stall_after_s=10 * HANG_S)
    target, feed, outputs = view(live, 0.05, outputs=options)
    assert outputs is not None
    try:
        async with target.run_test(size=(120, 40)) as pilot:
            await until(lambda: target.last is not None and target.last.caught_up)
            await until(lambda: "rank 1 failed first: oom" in str(target.header.render()))
            fired = outputs.outputs.hook
            assert fired is not None
            await until(lambda: bool(fired.futures) and all(f.done() for f in fired.futures))
            url = outputs.outputs.metrics_url
            assert url is not None
            metrics = await asyncio.to_thread(lambda: urllib.request.urlopen(url).read().decode())
            await pilot.press("q")
        feed.stop()
        assert feed.join(HANG_S)
        outputs.end(*done_event(target, target.return_value), feed_stopped=True)
    finally:
        live.close()

    assert 'msrunwatch_root_cause_rank{category="oom",rank="1"} 1.0' in metrics
    assert len(fired.futures) == 1, "one OOM: one hook run, not one more for the timeout"
    [stdin] = [json.loads(line) for line in ran.read_text().splitlines()]
    assert (stdin["event"], stdin["rule"], stdin["role"]) == (
        "finding",
        "oom-memory-not-enough",
        "root-cause",
    )
    written = events_of(events)
    kinds = [e["event"] for e in written]
    assert kinds[0] == "start" and written[0]["metrics"] == url
    assert {"rank_status", "finding", "root_cause", "caught_up"} <= set(kinds)
    assert kinds[-1] == "done"
    assert {k: written[-1][k] for k in ("exit_code", "reason", "outcome")} == {
        "exit_code": 1,
        "reason": "quit",
        "outcome": "failed",
    }


@pytest.mark.slow
async def test_a_failing_hook_is_a_notification_then_a_line_on_stderr(
    oom_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = HeadlessOptions(on_finding="echo 'no [b]route[/b]' >&2; exit 3")
    live = LiveRun([str(oom_copy)], load_rules(), stall_after_s=10 * HANG_S)
    target, feed, outputs = view(live, 0.05, outputs=options)
    assert outputs is not None
    shown: list[tuple[str, object]] = []
    said = (
        "msrunwatch: warning: --on-finding for oom-memory-not-enough: exit code 3: no [b]route[/b]"
    )
    try:
        async with target.run_test(size=(120, 40)) as pilot:
            target.notify = lambda message, **kw: shown.append((message, kw["markup"]))  # type: ignore[method-assign]
            await until(lambda: (said, False) in shown)  # as written: `[b]` is no markup
            await pilot.press("q")
        feed.stop()
        assert feed.join(HANG_S)
        assert said not in capsys.readouterr().err, "nothing written under the view"
        outputs.end(*done_event(target, target.return_value), feed_stopped=True)
    finally:
        live.close()
    assert capsys.readouterr().err.splitlines() == [said]


def test_without_a_terminal_an_output_is_refused(
    oom_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", str(oom_copy), "--on-finding", "true"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("msrunwatch: error: --on-finding needs the run followed")
    assert "--headless" in err and len(err.splitlines()) == 1


def test_the_view_refuses_events_on_its_own_stdout(
    oom_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "_terminal", lambda: True)
    assert main(["watch", str(oom_copy), "--events", "-"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "msrunwatch: error: --events -: standard output is the live view; give a FILE, "
        "or --headless to write the events to standard output\n"
    )


def test_the_view_refuses_a_port_in_use_before_taking_the_screen(
    oom_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setattr(watch, "_terminal", lambda: True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["watch", str(oom_copy), "--metrics-port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"msrunwatch: error: cannot serve metrics on 127.0.0.1:{port}")


@pytest.mark.parametrize("mode", [["--headless"], []])
def test_on_every_finding_alone_is_refused(
    oom_copy: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    assert main(["watch", str(oom_copy), "--on-every-finding", *mode]) == 2
    assert capsys.readouterr().err == (
        "msrunwatch: error: --on-every-finding says when --on-finding CMD runs: "
        "give --on-finding too\n"
    )
