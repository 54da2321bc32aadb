"""Golden triage reports (text and JSON) for every scenario in fixtures/.

Run `pytest tests/integration/test_golden.py --update-golden` after an intended change and read the
diff of tests/integration/golden/ like code. Public excerpts (fixtures/public) are checked
by bench/accuracy.py against their expected.yaml instead.
"""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest

from msrunwatch.cli import main
from msrunwatch.drivers import postmortem
from tests.support import FIXTURES, ROOT

GOLDEN = Path(__file__).parent / "golden"
LATER = calendar.timegm((2030, 1, 1, 0, 0, 0))
"""This host's clock in the golden runs: long after every fixture was made, as a user
reads a run's logs post mortem (a checkout resets the files' mtimes to its own time; a
fixture younger than a day would otherwise read as a run still going just after one)."""
SNAPSHOTS = {"synth_megatron_mindspeed_2p"}
"""Copies of a job still running (their README says so): judged, as bench/accuracy.py
judges excerpts, as a snapshot taken at their newest line (`--now last-line`)."""
SEVERAL_RUNS = {"cpu_port_in_use_second_job"}
"""Directories holding two runs (a first job kept beside the scenario's): triage refuses to
judge them as one, so the scenario's own run is given, as bench/accuracy.py gives it."""
SCENARIOS = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("configs", "public")
)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(args)
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["txt", "json"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_golden_report(
    scenario: str,
    fmt: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(postmortem, "host_clock", lambda: float(LATER))
    target = f"fixtures/{scenario}"
    args = ["triage", target, "--color", "never"]
    if scenario in SEVERAL_RUNS:
        args[1:2] = [f"{target}/msrun_log", "--console", f"{target}/msrun_console.txt"]
    if scenario in SNAPSHOTS:
        args += ["--now", "last-line"]
    out = _run([*args, "--format", "json"] if fmt == "json" else args, capsys)
    golden = GOLDEN / f"{scenario}.{fmt}"
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(out, encoding="utf-8")
    assert golden.exists(), f"no golden file; run pytest {__file__} --update-golden"
    assert out == golden.read_text(encoding="utf-8")
