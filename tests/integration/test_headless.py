"""Headless mode: JSON-lines events, Prometheus metrics, --on-finding, --exit-when-done.

Each test drives `Headless.step()` over a LiveRun with a fake clock, so nothing sleeps:
the clock jumps past the engine's rescan and sweep periods between two steps.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from msrunwatch.cli import UsageError, main
from msrunwatch.drivers.triage import triage
from msrunwatch.live.headless import SCHEMA, Headless, HeadlessOptions
from msrunwatch.live.run import SETTLED_S, LiveRun
from msrunwatch.report import jsonout
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES, HANG_S, before_shutdown

FAILING = "cpu_dp2_oom_alloc_failed"
HEALTHY = "cpu_dp2_success_glog2"
MEMORY = "synth_ascend_glog1_pp2_memory_8p"
T0 = 2_000_000_000.0
"""The fake wall clock's start (2033): far from any real file's mtime."""


class Clock:
    """A wall clock a test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def options(**given: Any) -> HeadlessOptions:
    return HeadlessOptions(**{"metrics_addr": "127.0.0.1", **given})


class Rig:
    """A LiveRun on a temp dir, a Headless over it, and its event lines."""

    def __init__(
        self, log_dir: Path, rules: list[Rule], hook_timeout_s: float = 60.0, **args: Any
    ) -> None:
        self.dir = log_dir
        self.clock = Clock()
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.live = LiveRun([str(log_dir)], rules, clock=self.clock)
        self.headless = Headless(
            self.live,
            options(**args),
            out=self.out,
            err=self.err,
            tick_s=0.01,
            hook_timeout_s=hook_timeout_s,
        )
        self._read = 0

    def step(self, advance: float = 2.5) -> int | None:
        """One iteration, the clock moved past the rescan period first."""
        self.clock.now += advance
        return self.headless.step()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]

    def new_events(self) -> list[dict[str, Any]]:
        """Events since the last call."""
        lines = self.out.getvalue().splitlines()
        fresh, self._read = lines[self._read :], len(lines)
        return [json.loads(line) for line in fresh]

    def close(self) -> None:
        self.headless.close()
        self.live.close()


@pytest.fixture
def make_rig(rules: list[Rule]) -> Iterator[Callable[..., Rig]]:
    rigs: list[Rig] = []

    def make(log_dir: Path, **args: Any) -> Rig:
        rig = Rig(log_dir, rules, **args)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


def copy_run(tmp_path: Path, scenario: str) -> Path:
    """A fixture's msrun_log copied, its files dated 10 s before the fake clock."""
    target = tmp_path / scenario / "msrun_log"
    shutil.copytree(FIXTURES / scenario / "msrun_log", target)
    for path in target.iterdir():
        os.utime(path, (T0 - 10, T0 - 10))
    return target


def lines_of(scenario: str, name: str) -> list[bytes]:
    return (FIXTURES / scenario / "msrun_log" / name).read_bytes().splitlines(keepends=True)


def by_event(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == name]


# -- events -----------------------------------------------------------------------------


def test_failing_run_events(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(copy_run(tmp_path, FAILING))
    assert rig.step() is None  # --exit-when-done not given
    events = rig.events()
    assert events[0]["event"] == "start"
    assert events[0]["targets"] == [str(rig.dir)]
    assert events[0]["version"]
    assert events[0]["metrics"] is None
    for e in events:
        assert e["schema"] == SCHEMA
        assert datetime.fromisoformat(e["time"]).tzinfo is not None
    statuses = {e["rank"]: (e["status"], e["previous"]) for e in by_event(events, "rank_status")}
    assert statuses == {0: ("failed", None), 1: ("failed", None)}
    assert by_event(events, "rank_status")[1]["reason"] == "oom at worker_1.log:20"

    report = triage([str(rig.dir)], rig.live.rules)
    expected = [jsonout.finding(f) for f in report.findings]
    findings = by_event(events, "finding")
    assert [f["rule"] for f in findings] == [f["rule"] for f in expected]
    oom = next(f for f in findings if f["rule"] == "oom-memory-not-enough")
    want = next(f for f in expected if f["rule"] == "oom-memory-not-enough")
    assert oom["log_time"] == want["time"]
    assert {
        k: v for k, v in oom.items() if k not in ("event", "time", "schema", "log_time", "spread")
    } == {k: v for k, v in want.items() if k != "time"}
    assert oom["spread"] is False

    (cause,) = by_event(events, "root_cause")
    assert (cause["ranks"], cause["category"], cause["rule"]) == (
        [1],
        "oom",
        "oom-memory-not-enough",
    )
    assert cause["cleared"] is False
    assert cause["log_time"] == jsonout.root_cause(report.root_cause)["time"]  # type: ignore[index]
    assert len(by_event(events, "caught_up")) == 1
    assert by_event(events, "caught_up")[0]["ranks"] == 2

    rig.new_events()
    rig.step()
    rig.step()
    assert rig.new_events() == []  # nothing changed, nothing said


def test_every_event_is_one_json_line(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(copy_run(tmp_path, FAILING), exit_when_done=True)
    assert rig.headless.run() == 1
    text = rig.out.getvalue()
    assert text.endswith("\n")
    for line in text.splitlines():
        record = json.loads(line)
        assert list(record)[:3] == ["event", "time", "schema"]
    assert rig.events()[-1]["event"] == "done"


def test_exit_when_done_failing_run(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(copy_run(tmp_path, FAILING), exit_when_done=True)
    assert rig.headless.run() == 1
    done = rig.events()[-1]
    assert done["event"] == "done"
    assert (done["outcome"], done["exit_code"], done["reason"]) == ("failed", 1, "done")
    assert done["statuses"] == {"failed": 2}


def test_exit_when_done_healthy_run(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(copy_run(tmp_path, HEALTHY), exit_when_done=True)
    assert rig.headless.run() == 0
    events = rig.events()
    assert [e["event"] for e in events][-2:] == ["caught_up", "done"]
    assert (events[-1]["outcome"], events[-1]["exit_code"]) == ("ok", 0)
    assert by_event(events, "root_cause") == []
    assert [e for e in by_event(events, "finding") if e["severity"] == "error"] == []
    assert {e["status"] for e in by_event(events, "rank_status")} == {"finished"}


def test_live_run_status_changes_and_exit(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    """A run written as the test goes: starting, training, finished; done only at the end."""
    log_dir = tmp_path / "msrun_log"
    log_dir.mkdir()
    logs = {n: lines_of(HEALTHY, n) for n in ("scheduler.log", "worker_0.log", "worker_1.log")}
    cut = {"scheduler.log": 10, "worker_0.log": 10, "worker_1.log": 10}
    for name, lines in logs.items():
        (log_dir / name).write_bytes(b"".join(lines[: cut[name]]))
    rig = make_rig(log_dir, exit_when_done=True)
    for path in log_dir.iterdir():  # just written, on the fake clock: nobody is silent yet
        os.utime(path, (rig.clock.now, rig.clock.now))
    assert rig.step() is None
    first = rig.new_events()
    assert {(e["rank"], e["status"]) for e in by_event(first, "rank_status")} == {
        (0, "starting"),
        (1, "starting"),
    }
    assert by_event(first, "caught_up")
    for k, code in ((30, None), (45, None), (60, None)):
        for name in ("worker_0.log", "worker_1.log"):
            with (log_dir / name).open("ab") as fh:
                fh.write(b"".join(logs[name][cut[name] : k]))
            os.utime(log_dir / name, (rig.clock.now, rig.clock.now))
            cut[name] = min(k, len(logs[name]))
        assert rig.step() == code  # both workers logged their end: the files still settle
    assert rig.step(advance=SETTLED_S) == 0  # done once nothing grew for SETTLED_S
    changes = [
        (e["rank"], e["previous"], e["status"]) for e in by_event(rig.new_events(), "rank_status")
    ]
    assert (0, "starting", "training") in changes
    assert (0, "training", "finished") in changes
    assert (1, "training", "finished") in changes
    assert len(by_event(rig.events(), "caught_up")) == 1


def test_restart_root_cause_change_and_spread(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    """msrun reuses the directory: worker_1.log truncated, then the same fault again. (The
    scheduler's log is the first run's before its shutdown, which says the job is over.)"""
    log_dir = copy_run(tmp_path, FAILING)
    before_shutdown(log_dir / "scheduler.log")
    rig = make_rig(log_dir)
    rig.step()
    rig.new_events()
    worker_1 = log_dir / "worker_1.log"
    old = worker_1.read_bytes()
    worker_1.write_bytes(b"".join(old.splitlines(keepends=True)[:5]))
    rig.step()
    events = rig.new_events()
    assert by_event(events, "restarted") == [
        {**by_event(events, "restarted")[0], "file": "worker_1.log"}
    ]
    assert events[0]["event"] == "restarted"
    (change,) = by_event(events, "rank_status")
    assert (change["rank"], change["previous"]) == (1, "failed")
    assert change["status"] != "failed"  # no fault in its new log (yet)
    # rank 0 still has its OOM: it is the root cause now
    (cause,) = by_event(events, "root_cause")
    assert (cause["ranks"], cause["category"]) == ([0], "oom")
    # fewer ranks is not news: no finding event for the OOM on rank 0 alone; and the truncated
    # rank 1 is waiting, not "killed" (nothing confirmed a kill): no killed-by-msrun finding
    assert [e["category"] for e in by_event(events, "finding")] == []

    worker_1.write_bytes(old)
    rig.step()
    events = rig.new_events()
    oom = [e for e in by_event(events, "finding") if e["rule"] == "oom-memory-not-enough"]
    assert [(e["ranks"], e["spread"]) for e in oom] == [([0, 1], True)]
    (cause,) = by_event(events, "root_cause")
    assert cause["ranks"] == [1]


def test_root_cause_cleared_when_the_run_restarts(
    tmp_path: Path, make_rig: Callable[..., Rig]
) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    rig = make_rig(log_dir)
    rig.step()
    rig.new_events()
    for path in log_dir.iterdir():
        path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))
        os.utime(path, (rig.clock.now, rig.clock.now))  # just written: nobody is stalled
    rig.step()
    events = rig.new_events()
    assert sorted(e["file"] for e in by_event(events, "restarted")) == [
        "scheduler.log",
        "worker_0.log",
        "worker_1.log",
    ]
    (cause,) = by_event(events, "root_cause")
    assert cause["cleared"] is True
    assert "rule" not in cause


def test_events_file_is_appended(tmp_path: Path, rules: list[Rule]) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    events = tmp_path / "out" / "events.jsonl"
    events.parent.mkdir()
    events.write_text('{"event": "older"}\n')
    live = LiveRun([str(log_dir)], rules)
    headless = Headless(live, options(events=str(events), exit_when_done=True))
    assert headless.run() == 1
    live.close()
    lines = events.read_text().splitlines()
    assert json.loads(lines[0]) == {"event": "older"}
    assert json.loads(lines[1])["event"] == "start"
    assert json.loads(lines[-1])["event"] == "done"


def test_events_file_inside_the_watched_directory_is_refused(
    tmp_path: Path, rules: list[Rule]
) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    live = LiveRun([str(log_dir)], rules)
    headless = Headless(live, options(events=str(log_dir / "ev.jsonl")))
    with pytest.raises(UsageError, match="inside the watched directory"):
        headless.run()
    live.close()
    assert not (log_dir / "ev.jsonl").exists()


class BrokenPipe(io.StringIO):
    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def write(self, text: str) -> int:
        if self.after <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.after -= 1
        return super().write(text)


def test_broken_pipe_ends_quietly(tmp_path: Path, rules: list[Rule]) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    live = LiveRun([str(log_dir)], rules)
    out = BrokenPipe(after=2)
    headless = Headless(live, options(), out=out, tick_s=0.01)
    assert headless.run() == 141  # 128 + SIGPIPE: the events were cut short
    live.close()
    assert len(out.getvalue().splitlines()) == 2


def test_ctrl_c_ends_with_a_done_event(
    tmp_path: Path, make_rig: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = make_rig(copy_run(tmp_path, FAILING))
    ticks = 0
    real_tick = rig.live.tick

    def tick() -> Any:
        nonlocal ticks
        ticks += 1
        if ticks == 3:
            raise KeyboardInterrupt
        return real_tick()

    monkeypatch.setattr(rig.live, "tick", tick)
    assert rig.headless.run() == 130
    done = rig.events()[-1]
    assert (done["event"], done["exit_code"], done["reason"]) == ("done", 130, "interrupted")
    assert done["outcome"] == "failed"


def test_sigterm_ends_with_a_done_event(
    tmp_path: Path, make_rig: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = make_rig(copy_run(tmp_path, HEALTHY))
    ticks = 0
    real_tick = rig.live.tick

    def tick() -> Any:
        nonlocal ticks
        ticks += 1
        if ticks == 2:
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # never kill pytest
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGTERM)
        return real_tick()

    monkeypatch.setattr(rig.live, "tick", tick)
    assert rig.headless.run() == 128 + signal.SIGTERM
    done = rig.events()[-1]
    assert (done["reason"], done["outcome"], done["exit_code"]) == ("terminated", "ok", 143)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# -- metrics ----------------------------------------------------------------------------


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=HANG_S) as response:
        assert response.status == 200
        return str(response.read().decode())


def test_metrics_are_served(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    rig = make_rig(log_dir, metrics_port=0, metrics_addr="127.0.0.1")
    rig.step()
    url = rig.events()[0]["metrics"]
    assert url == rig.headless.metrics_url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics")
    got = samples(scrape(url))

    def value(name: str, **labels: str) -> float:
        return got[(name, tuple(sorted(labels.items())))]

    assert value("msrunwatch_rank_status", rank="1", status="failed") == 1
    assert value("msrunwatch_rank_status", rank="1", status="training") == 0
    assert value("msrunwatch_run_outcome", outcome="failed") == 1
    assert value("msrunwatch_run_outcome", outcome="running") == 0
    assert value("msrunwatch_findings", category="oom", severity="error") == 1
    assert value("msrunwatch_findings", category="node-timeout", severity="error") == 1
    assert value("msrunwatch_findings", category="segfault", severity="error") == 0
    assert value("msrunwatch_root_cause_rank", rank="1", category="oom") == 1
    assert ("msrunwatch_root_cause_rank", (("category", "oom"), ("rank", "0"))) not in got
    total = sum(p.stat().st_size for p in log_dir.iterdir())
    assert value("msrunwatch_bytes_read_total") == total
    assert value("msrunwatch_files") == 3
    assert value("msrunwatch_caught_up") == 1
    # files dated 10 s before the clock, which moved 2.5 s for the step
    assert value("msrunwatch_rank_last_line_age_seconds", rank="0") == pytest.approx(12.5)
    rig.clock.now += 7  # no tick: the age still grows
    again = samples(scrape(url))
    assert again[("msrunwatch_rank_last_line_age_seconds", (("rank", "0"),))] == pytest.approx(19.5)


def test_metrics_progress_memory_and_compile(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    log_dir = copy_run(tmp_path, MEMORY)
    rig = make_rig(log_dir, metrics_port=0)
    for _ in range(3):
        rig.step()
    got = samples(scrape(rig.headless.metrics_url or ""))
    report = rig.headless.report
    assert report is not None and len(report.ranks) == 8
    for r in report.ranks:
        label = (("rank", str(r.rank)),)
        assert r.progress is not None and r.memory is not None and r.compile is not None
        assert got[("msrunwatch_rank_step", label)] == r.progress.step
        if r.progress.loss is not None:
            assert got[("msrunwatch_rank_loss", label)] == pytest.approx(r.progress.loss)
        else:
            assert ("msrunwatch_rank_loss", label) not in got
        assert got[("msrunwatch_rank_compile_seconds", label)] == pytest.approx(
            r.compile.total_ms / 1000
        )
        kinds = {
            "used": r.memory.peak_used_mb,
            "actual": r.memory.peak_actual_mb,
            "device": r.memory.device_mb,
            "limit": r.memory.used_mb,
        }
        for kind, mb in kinds.items():
            assert (
                got[("msrunwatch_rank_peak_memory_mb", (("kind", kind), ("rank", str(r.rank))))]
                == mb
            )
    assert got[("msrunwatch_rank_peak_memory_mb", (("kind", "used"), ("rank", "4")))] == 52036


def test_metrics_use_their_own_registry(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    from prometheus_client import REGISTRY, generate_latest

    rig = make_rig(copy_run(tmp_path, HEALTHY))
    rig.step()
    assert b"msrunwatch_" not in generate_latest(REGISTRY)
    text = generate_latest(rig.headless.registry).decode()
    assert "python_gc" not in text and "process_cpu" not in text
    assert 'msrunwatch_rank_status{rank="0",status="finished"} 1.0' in text


def test_metrics_port_in_use_is_a_usage_error(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    first = make_rig(copy_run(tmp_path, HEALTHY), metrics_port=0)
    first.step()
    port = int((first.headless.metrics_url or "").rsplit(":", 1)[1].split("/")[0])
    second = make_rig(tmp_path / HEALTHY / "msrun_log", metrics_port=port)
    with pytest.raises(UsageError, match="cannot serve metrics"):
        second.headless.start()


# -- --on-finding -----------------------------------------------------------------------


def wait_for(condition: Callable[[], bool], timeout: float = HANG_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize("every", [False, True])
def test_on_finding_runs_once_per_cause(
    tmp_path: Path, make_rig: Callable[..., Rig], every: bool
) -> None:
    """Once per cause: the OOM runs the command, its symptoms (the scheduler's timeouts) do
    not; with --on-every-finding, every error finding runs it once."""
    log_dir = copy_run(tmp_path, FAILING)
    sink = tmp_path / "hook.jsonl"
    rig = make_rig(
        log_dir,
        on_finding=f"cat >> '{sink}'; echo >> '{sink}.env' \"$MSRUNWATCH_RULE\"",
        on_every_finding=every,
    )
    rig.step()
    # the same findings again on a restarted rank: a spread, not a new key
    worker_1 = log_dir / "worker_1.log"
    old = worker_1.read_bytes()
    worker_1.write_bytes(b"")
    rig.step()
    worker_1.write_bytes(old)
    rig.step()
    hook = rig.headless.hook
    assert hook is not None
    hook.close(wait=True)
    records = [json.loads(line) for line in sink.read_text().splitlines()]
    errors = [e for e in by_event(rig.events(), "finding") if e["severity"] == "error"]
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for e in errors:
        if every or e["role"] in ("root-cause", "cause"):
            first.setdefault((e["rule"], e["fingerprint"]), e)
    assert len(first) == (2 if every else 1)
    assert len(errors) > len(first)  # the OOM spread again after the restart
    assert len(records) == len(first)
    assert sorted(records, key=lambda r: r["rule"]) == sorted(
        first.values(), key=lambda r: r["rule"]
    )  # once per key, with the event's JSON on stdin
    assert "allocate-memory-failed" not in {r["rule"] for r in records}  # a warning
    assert sorted((tmp_path / "hook.jsonl.env").read_text().split()) == sorted(
        r["rule"] for r in records
    )
    assert rig.err.getvalue() == ""


def test_on_finding_failure_is_one_warning(tmp_path: Path, make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(copy_run(tmp_path, FAILING), on_finding="echo no webhook >&2; exit 7")
    rig.step()
    assert rig.headless.hook is not None
    rig.headless.hook.close(wait=True)
    warnings = rig.err.getvalue().splitlines()
    assert len(warnings) == 1  # once for the cause (the OOM), not for its symptoms
    assert all(w.startswith("msrunwatch: warning: --on-finding for ") for w in warnings)
    assert any("oom-memory-not-enough: exit code 7: no webhook" in w for w in warnings)


def test_slow_on_finding_never_blocks_a_tick(tmp_path: Path, rules: list[Rule]) -> None:
    """The commands wait for a file only the test creates: a tick that waited for them
    could not return, whatever the machine's speed."""
    log_dir = copy_run(tmp_path, FAILING)
    gate = tmp_path / "gate"
    live = LiveRun([str(log_dir)], rules)
    headless = Headless(
        live,
        options(on_finding=f"while [ ! -e {gate} ]; do sleep 0.05; done"),
        out=io.StringIO(),
        err=io.StringIO(),
        hook_timeout_s=3600,
    )
    headless.step()
    headless.step()
    assert headless.hook is not None
    assert len(headless.hook.futures) == 1  # once per cause (the OOM), not its symptom
    assert not any(future.done() for future in headless.hook.futures)
    gate.touch()  # now the commands end
    headless.hook.close(wait=True)
    assert all(future.done() for future in headless.hook.futures)
    headless.close()
    live.close()


def test_an_on_finding_command_over_its_time_is_killed(tmp_path: Path, rules: list[Rule]) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    err = io.StringIO()
    live = LiveRun([str(log_dir)], rules)
    headless = Headless(
        live, options(on_finding="sleep 600"), out=io.StringIO(), err=err, hook_timeout_s=0.5
    )
    headless.step()
    assert headless.hook is not None
    headless.hook.close(wait=True)  # returns once it is killed, not after 600 s
    assert err.getvalue().count("killed after 0.5 s") == 1  # once per cause: the OOM
    headless.close()
    live.close()


# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize("poll", [False, True], ids=["native", "poll"])
def test_cli_headless_exit_when_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], poll: bool
) -> None:
    log_dir = copy_run(tmp_path, FAILING)
    argv = ["watch", str(log_dir), "--headless", "--exit-when-done"] + (["--poll"] if poll else [])
    assert main(argv) == 1
    out = capsys.readouterr().out
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0]["event"] == "start" and events[0]["poll"] is poll
    assert events[-1] == {**events[-1], "event": "done", "exit_code": 1, "outcome": "failed"}


def test_cli_healthy_run_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log_dir = copy_run(tmp_path, HEALTHY)
    events = tmp_path / "events.jsonl"
    assert (
        main(["watch", str(log_dir), "--headless", "--exit-when-done", "--events", str(events)])
        == 0
    )
    assert capsys.readouterr().out == ""
    assert json.loads(events.read_text().splitlines()[-1])["exit_code"] == 0
