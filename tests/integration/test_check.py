"""`msrunwatch check` for CI: exit codes by --fail-on, formats, settings, a fast cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from msrunwatch.cli import main
from tests.support import FIXTURES, ROOT

SARIF_SCHEMA = json.loads((Path(__file__).parent / "schemas/sarif-schema-2.1.0.json").read_text())

FAILING = {
    "cpu_dp2_exception_rank1": {"python-exception", "node-timeout"},
    "cpu_dp2_oom_alloc_failed": {"oom", "node-timeout"},
    "cpu_cluster_timeout_missing_node": {"cluster-init-timeout"},
    "dryrun_sim1_strategy_product_16_on_8": {"strategy-mismatch"},
    "dryrun_sim1_pipeline_stages_3_on_8": {"pipeline-stage-mismatch"},
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("scenario", sorted(FAILING))
def test_failing_scenarios_exit_1_with_the_right_categories(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    code, out = run(capsys, str(FIXTURES / scenario), "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    results = sarif["runs"][0]["results"]
    errors = {r["properties"]["category"] for r in results if r["level"] == "error"}
    assert FAILING[scenario] <= errors


@pytest.mark.parametrize("scenario", ["cpu_dp2_success_glog1", "dryrun_sim1_8p_nojoin_glog2"])
def test_healthy_scenarios_exit_0_and_validate(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    code, out = run(capsys, str(FIXTURES / scenario), "--format", "sarif")
    assert code == 0
    jsonschema.validate(json.loads(out), SARIF_SCHEMA)


def test_fail_on_thresholds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "worker_0.log"
    log.write_text(
        "[WARNING] ME(1,7f,python):2026-11-21-05:34:25.600.324 [mindspore/ccsrc/runtime/"
        "hardware_abstract/device_context/device_context.cc:113] AllocateMemory] "
        "Allocate memory failed for size: 1024\n"
    )
    snapshot = ("--now", "last-line")  # a fragment of a run still going: a warning alone
    assert run(capsys, str(tmp_path), *snapshot)[0] == 0
    assert run(capsys, str(tmp_path), *snapshot, "--fail-on", "warning")[0] == 1
    assert run(capsys, str(tmp_path))[0] == 1  # read post mortem: stopped mid-run, no end
    assert run(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed"), "--fail-on", "never")[0] == 0


def test_text_format_lines_are_path_line_severity_rule(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log"))
    first = out.splitlines()[0]
    assert first.startswith(
        f"{FIXTURES}/cpu_dp2_oom_alloc_failed/msrun_log/worker_1.log:20: error oom-memory-not-enough:"
    )
    assert out.splitlines()[-1].startswith("2 errors, 1 warning")  # node timeouts folded


def test_github_writes_a_step_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = run(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed"), "--format", "github")
    assert code == 1
    assert out.startswith("::error file=")
    assert "oom-memory-not-enough" in summary.read_text()


def test_output_file_and_unknown_target(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "out.xml"
    code, out = run(
        capsys, str(FIXTURES / "cpu_dp2_exception_rank1"), "--format", "junit", "-o", str(report)
    )
    assert code == 1 and out == ""
    assert report.read_text().startswith("<?xml")
    assert main(["check", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_settings_file_selects_and_overrides(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "msrunwatch.yaml").write_text(
        "ignore: [node-timeout, python-exception]\nseverity:\n  oom-memory-not-enough: warning\nfail-on: error\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out = run(
        capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log"), "--format", "json"
    )
    report = json.loads(out)
    categories = {f["category"] for f in report["findings"]}
    assert "node-timeout" not in categories
    assert {f["severity"] for f in report["findings"] if f["category"] == "oom"} == {"warning"}
    assert code == 0  # nothing at error severity is left


def test_a_severity_override_changes_what_fails_not_the_root_cause(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Trial A8: `--severity oom=info` made the scheduler's `node-timeout` (about node 0,
    a victim) the root cause on rank 1. It changes the OOM's severity, the counts and the
    exit code only; --ignore takes the rule out of the judgement, so it may change the cause."""
    oom = str(FIXTURES / "cpu_dp2_oom_alloc_failed")
    _, plain = run(capsys, oom, "--format", "json")
    code, demoted = run(capsys, oom, "--severity", "oom=info", "--format", "json")
    before, after = json.loads(plain), json.loads(demoted)
    assert after["root_cause"] == before["root_cause"]
    assert (after["root_cause"]["category"], after["root_cause"]["ranks"]) == ("oom", [1])
    assert {f["severity"] for f in after["findings"] if f["category"] == "oom"} == {"info"}
    assert code == 1  # the scheduler's node-timeout is still an error
    quiet = ("--severity", "oom=info", "--severity", "node-timeout=info")
    code, text = run(capsys, oom, *quiet)
    assert code == 0 and text.endswith("root cause: oom on rank 1)\n"), text
    _, ignored = run(capsys, oom, "--ignore", "oom", "--format", "json")
    assert json.loads(ignored)["root_cause"]["category"] != "oom"


def test_pyproject_settings_and_bad_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.msrunwatch]\nselect = ["oom"]\n')
    monkeypatch.chdir(tmp_path)
    _, out = run(capsys, str(FIXTURES / "cpu_dp2_oom_alloc_failed/msrun_log"), "--format", "json")
    assert {f["category"] for f in json.loads(out)["findings"]} == {"oom"}
    (tmp_path / "msrunwatch.yaml").write_text("ignroe: [oom]\n")
    assert main(["check", str(FIXTURES / "cpu_dp2_oom_alloc_failed")]) == 2
    assert "unknown key 'ignroe'" in capsys.readouterr().err


def test_check_and_rules_check_do_not_import_textual() -> None:
    code = (
        "import sys\n"
        "from msrunwatch.cli import main\n"
        "main(['check', 'fixtures/cpu_dp2_oom_alloc_failed', '--format', 'sarif', '-o', '/dev/null'])\n"
        "main(['rules', 'list'])\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_config_alone_counts_and_names_the_config_rules_it_applied(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Trial A7: `check CONFIG --devices 8` ended `(252 rules, outcome ok)` where only the
    config rules can apply, and -v had no `applied` line for a config."""
    from msrunwatch.rules.loader import load_rules
    from msrunwatch.rules.model import Scope

    rules = load_rules()
    configs = sum(1 for r in rules if r.scope is Scope.CONFIG)
    config = str(FIXTURES / "configs/mf_qwen25_7b_finetune_8k.yaml")
    assert main(["check", config, "--devices", "8", "-v"]) == 0
    out, err = capsys.readouterr()
    assert out.rstrip().endswith(f"({configs} rules, outcome ok)"), out
    logs = len(rules) - configs
    assert f"rules: {configs} applied (no log among the targets: the {logs} log rules" in err
    assert main(["check", config, str(FIXTURES / "cpu_dp2_oom_alloc_failed"), "-v"]) == 1
    out, err = capsys.readouterr()
    assert f"({len(rules)} rules, outcome failed" in out
    assert f"rules: {len(rules)} applied ({logs} log rules, {configs} config rules)" in err
