"""`check` and `triage FACTS` judge a run's end as `triage DIR` does (drivers.postmortem):
the real SIGTERMed run fails `check` as `job-stopped` once it is over, and its facts are
judged as a snapshot taken when they were collected (they carry no file times), each node
measuring its quiet on its own clock. A new-user trial found `check` green and the facts
`running` on a job stopped hours before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers import postmortem
from msrunwatch.drivers.facts import stream_lines
from msrunwatch.drivers.options import PostMortem
from msrunwatch.drivers.triage import triage
from msrunwatch.read.timestamps import iso, parse_iso
from msrunwatch.rules.loader import load_rules
from tests.support import FIXTURES

RULES = load_rules()
SIGTERMED = FIXTURES / "cpu_sigterm_whole_job"
LINE = parse_iso("2026-11-25T19:05:35.552") or 0.0
"""The newest line of the SIGTERMed run's logs (rank 1's)."""


def _later(monkeypatch: pytest.MonkeyPatch) -> None:
    """This host's clock years after the run, as a user reads it post mortem."""
    monkeypatch.setattr(postmortem, "host_clock", lambda: LINE + 3 * 365 * 86400.0)


def test_check_fails_a_job_stopped_from_outside(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _later(monkeypatch)
    code = main(["check", str(SIGTERMED), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["outcome"] == "failed"
    assert report["root_cause"]["category"] == "job-stopped"


def test_check_of_a_snapshot_inside_the_stall_window_still_passes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _later(monkeypatch)
    code = main(["check", str(SIGTERMED), "--now", "last-line", "--format", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "running"


def _facts(tmp_path: Path, collected: float | None, zone: int | None = 0) -> Path:
    """The run's facts as `msrunwatch facts` writes them, collected at `collected` on the
    logs' scale (None: by an older writer that did not say when)."""
    lines, _, _ = stream_lines([str(SIGTERMED / "msrun_log")], RULES, "node0", None, ())
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("kind") == "node":
            stamp = iso(collected) if collected is not None else ""
            record["collected_at_utc"] = (stamp or "")[:19] + "+00:00" if stamp else ""
            record["tz_offset_s"] = zone
        out.append(json.dumps(record))
    target = tmp_path / "facts"
    target.mkdir()
    (target / "node0.facts.jsonl").write_text("".join(x + "\n" for x in out), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("quiet_s", "outcome", "category"),
    [(600.0, "failed", "job-stopped"), (30.0, "running", None)],
    ids=["collected-long-after-the-last-line", "collected-inside-the-stall-window"],
)
def test_facts_are_judged_as_at_their_collection(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quiet_s: float,
    outcome: str,
    category: str | None,
) -> None:
    _later(monkeypatch)
    facts = _facts(tmp_path, collected=LINE + quiet_s)
    report = triage([str(facts)], RULES, post=PostMortem())
    assert report.outcome == outcome
    assert (report.root_cause.category if report.root_cause else None) == category
    plain = triage([str(SIGTERMED)], RULES, post=PostMortem(now=LINE + quiet_s))
    assert plain.outcome == report.outcome  # the logs judged at the same instant agree


def test_collection_time_is_read_in_the_node_s_own_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Collected 30 s after the last line, on a node 8 h ahead of UTC: the UTC stamp is
    8 h behind the logs' local times, and the zone puts it back (else it would be
    hours before the newest line, or hours after it)."""
    _later(monkeypatch)
    facts = _facts(tmp_path, collected=LINE + 30.0 - 8 * 3600, zone=8 * 3600)
    assert triage([str(facts)], RULES, post=PostMortem()).outcome == "running"


def test_finished_and_now_hold_for_facts_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _later(monkeypatch)
    facts = _facts(tmp_path, collected=LINE + 30.0)
    assert triage([str(facts)], RULES, post=PostMortem(finished=True)).outcome == "failed"
    late = PostMortem(now=LINE + 600.0)
    assert triage([str(facts)], RULES, post=late).outcome == "failed"


def test_facts_that_do_not_say_when_they_were_collected_go_by_this_host_s_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older writer: no zone. Judged as logs whose mtimes were reset (the newest line
    against this host's clock, with the time-zone margin): years later, over."""
    _later(monkeypatch)
    facts = _facts(tmp_path, collected=LINE + 30.0, zone=None)
    assert triage([str(facts)], RULES, post=PostMortem()).outcome == "failed"
    monkeypatch.setattr(postmortem, "host_clock", lambda: LINE + 60.0)
    assert triage([str(facts)], RULES, post=PostMortem()).outcome == "running"


def test_triage_of_facts_on_the_command_line_goes_by_the_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _later(monkeypatch)
    facts = _facts(tmp_path, collected=LINE + 30.0)
    assert main(["triage", str(facts), "--format", "json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "running"
    assert main(["triage", str(facts), "--finished", "--format", "json", "-q"]) == 1
    assert os.listdir(facts) == ["node0.facts.jsonl"]  # nothing written beside the facts
