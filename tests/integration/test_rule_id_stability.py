"""A rule's id is what users' settings and CI filters name: the same fault is reported under
the same id whatever the layout of the log it came in.

CANN writes an EZ9999 as a bare header (`EZ9999: Inner Error!`) and, since CANN 8, a detail
line under it; older MindSpore logs put the detail in indented lines no rule reads. Both are
`cann-ez9999` (the header's match yields to the detail's on the same record), so
`ignore: [cann-ez9999]` hides the finding in both layouts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from msrunwatch.cli import main
from tests.support import ROOT

CASES = ROOT / "rules/log/device/cann-ez9999.cases.yaml"
LAYOUTS = {
    "old": "fires-on-the-old-layout-with-indented-lines",  # ms-docs cann_error_cases.md
    "cann8": "fires-on-the-detail-under-the-header",  # vllm-project/vllm-ascend#6359
}


def _log_dir(tmp_path: Path, layout: str) -> Path:
    """A run directory holding the rule case's real excerpt as rank 0's log."""
    cases = yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"]
    run = tmp_path / layout
    run.mkdir()
    (run / "worker_0.log").write_text(cases[LAYOUTS[layout]]["log"], encoding="utf-8")
    return run


def _check(capsys: pytest.CaptureFixture[str], run: Path) -> list[dict[str, str]]:
    main(["check", str(run), "--format", "json"])
    findings: list[dict[str, str]] = json.loads(capsys.readouterr().out)["findings"]
    return findings


def _ez9999(findings: list[dict[str, str]]) -> list[dict[str, str]]:
    return [f for f in findings if "EZ9999" in f["message"]]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_ez9999_finding_is_cann_ez9999_in_every_layout(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _log_dir(tmp_path, layout)
    monkeypatch.chdir(tmp_path)
    found = _ez9999(_check(capsys, run))
    assert [f["rule"] for f in found] == ["cann-ez9999"]


@pytest.mark.parametrize("name", ["cann-ez9999", "cann-ez9999-header"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ignoring_cann_ez9999_hides_it_in_every_layout(
    layout: str,
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The id, or the one the old layout's finding had for a while (an alias now)."""
    run = _log_dir(tmp_path, layout)
    (tmp_path / "msrunwatch.yaml").write_text(f"ignore: [{name}]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _ez9999(_check(capsys, run)) == []
