"""The README's Prometheus alert recipes: every metric they use is one msrunwatch serves,
and `promtool test rules` passes on them with the README's own tests (when promtool is
installed; CI does not depend on it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from msrunwatch.live.cluster import metrics as cluster_metrics
from msrunwatch.live.headless import metrics as node_metrics
from tests.support import ROOT


def block(marker: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split(f"<!-- cluster:alerts {marker} -->\n```yaml\n", 1)[1]
    return after.split("\n```", 1)[0] + "\n"


def served() -> set[str]:
    found = set()
    for module in (node_metrics, cluster_metrics):
        found |= set(re.findall(r'"(msrunwatch_\w+)"', Path(module.__file__).read_text()))
    return found


def test_every_alert_uses_metrics_msrunwatch_serves() -> None:
    rules = yaml.safe_load(block("rules"))["groups"][0]["rules"]
    assert len(rules) == 5
    for rule in rules:
        used = set(re.findall(r"\b(msrunwatch_\w+)", rule["expr"]))
        assert used <= served(), (rule["alert"], used - served())


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_passes_the_readme_s_alert_tests(tmp_path: Path) -> None:
    (tmp_path / "msrunwatch.rules.yml").write_text(block("rules"))
    (tmp_path / "msrunwatch.rules.test.yml").write_text(block("tests"))
    done = subprocess.run(
        ["promtool", "test", "rules", "msrunwatch.rules.test.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
