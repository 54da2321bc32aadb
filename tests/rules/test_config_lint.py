"""The config lint's "Done when" points, on the real configs of fixtures/configs.

* every real public config lints with no error finding, given the card count its own file
  (or its documentation) implies;
* each broken variant gives the right rule at the line fixtures/configs/README.md lists;
* the seed 001 job (TP=2, PP=2) passes on its 4 cards and fails on 6 with the topology
  finding and a hint that names working values;
* `check --format sarif` on a broken config validates and points at the right line;
* `estimate` prints per-stage figures and assumptions, stage 0 within 5% of the seed's
  measured peaks (55405 MiB without recompute, 35073 MiB with full recompute).

The rules themselves are data (rules/config-*.yaml); their own cases run in
tests/test_rule_cases.py. Here they meet the real files.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from msrunwatch.cli import main
from msrunwatch.drivers.configs import read_all
from msrunwatch.drivers.rulecases import _config_runner, _write_case, all_cases
from msrunwatch.judge.config.lint import lint
from msrunwatch.judge.config.versions import parse
from msrunwatch.judge.model import Finding
from msrunwatch.rules import variables
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import check_template
from msrunwatch.rules.vocab import Severity
from tests.support import ROOT

CONFIGS = "fixtures/configs"
SARIF_SCHEMA = json.loads((ROOT / "tests/integration/schemas/sarif-schema-2.1.0.json").read_text())
SEED = f"{CONFIGS}/seed001_qwen25_7b_tp2_pp2.sh"
SEED_RECOMPUTE = f"{CONFIGS}/seed001_qwen25_7b_tp2_pp2_recompute.sh"

REAL: dict[str, int | None] = {
    # "# default parallel of device num = 8 910B" above its parallel_config (dp4 mp1 pp2)
    "mf_qwen25_7b_finetune_8k.yaml": 8,
    # data_parallel 1 x model_parallel 4 x pipeline_stage 4: the YAML is written for 16 cards
    "mf_qwen3_32b_pretrain_4k.yaml": 16,
    # the scripts say it: WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES)) = 8, 16, 128 and 4
    "ms_qwen25_7b_32k.sh": None,
    "ms_qwen3_30b_a3b_4k.sh": None,
    "pt_qwen25_72b_32k_torchrun.sh": None,
    # Llama-3.1 128K with ring-attention CP 4, listed as passing (70B: 164%, a warning only)
    "pt_llama31_8b_128k_cp.sh": None,
    "pt_llama31_50b_128k_cp.sh": None,
    "pt_llama31_70b_128k_cp.sh": None,
    "seed001_qwen25_7b_tp2_pp2.sh": None,
    "seed001_qwen25_7b_tp2_pp2_recompute.sh": None,
    # NNODES=${#IPs[@]} cannot be evaluated; TP1 x PP1 x CP16 on NPUS_PER_NODE=8 is 2 nodes
    "ms_chatglm3_6b_64k.sh": 16,
}

E, W = Severity.ERROR, Severity.WARNING

VERSIONS = {"ms_qwen25_layers_not_divisible_pp.sh": "mindspeed-llm=master"}
"""--framework-version for the fixtures whose check depends on it (the upstream script's)."""

BROKEN: list[tuple[str, int | None, str, int, Severity]] = [
    # file, --devices (the world README.md names), rule, line (README.md), severity
    ("mf_qwen25_dp_mismatch.yaml", 8, "config-parallel-product-mismatch", 107, E),
    ("mf_qwen25_heads_not_divisible.yaml", 16, "config-heads-not-divisible-by-tp", 109, E),
    ("mf_qwen25_heads_not_divisible.yaml", 16, "config-kv-heads-not-divisible-by-tp", 109, E),
    ("mf_qwen25_micro_batch_lt_pp.yaml", 8, "config-micro-batches-below-pp", 111, W),
    ("mf_qwen3_offset_sum.yaml", 16, "config-offset-sum", 160, E),
    ("ms_qwen25_gbs_not_divisible.sh", None, "config-gbs-not-divisible", 10, E),
    ("ms_qwen25_layers_not_divisible_pp.sh", None, "config-layers-not-divisible-by-pp", 22, E),
    ("ms_qwen25_sp_without_tp.sh", None, "config-seq-parallel-without-tp", 21, W),
    # MindSpeed-LLM turns flash attention on for CP > 1 (_validate_cp_args): a warning
    ("ms_qwen25_cp_without_fa.sh", None, "config-cp-flash-attention-forced", 24, W),
    ("ms_qwen25_comment_inside_args.sh", None, "config-stray-args", 94, E),
    # values msrunwatch cannot resolve are said to be unchecked, never guessed
    ("ms_qwen25_unset_variable.sh", None, "config-unresolved-value", 21, W),
    ("ms_qwen25_sim_level_not_exported.sh", None, "config-unresolved-value", 21, W),
]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a CI job would, from the repository root with relative paths."""
    monkeypatch.chdir(ROOT)


def findings(name: str, rules: list[Rule], devices: int | None = None) -> list[Finding]:
    return lint(read_all([f"{CONFIGS}/{name}"]), rules, devices, parse(VERSIONS.get(name)))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def config_rules(rules: list[Rule]) -> list[Rule]:
    return [r for r in rules if r.scope is Scope.CONFIG]


# Real public configs lint clean


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_configs_have_no_error_finding(rules: list[Rule], name: str) -> None:
    errors = [
        f"{f.rule} (line {f.first.line if f.first else '?'}): {f.message}"
        for f in findings(name, rules, REAL[name])
        if f.severity is Severity.ERROR
    ]
    assert errors == []


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_configs_pass_check(capsys: pytest.CaptureFixture[str], name: str) -> None:
    devices = REAL[name]
    extra = ["--devices", str(devices)] if devices else []
    code, out = cli(capsys, "check", f"{CONFIGS}/{name}", *extra, "--format", "json")
    assert code == 0, out
    assert json.loads(out)["outcome"] == "ok"


# Broken variants


@pytest.mark.parametrize(
    ("name", "devices", "rule", "line", "severity"),
    BROKEN,
    ids=[f"{b[0]}-{b[2]}" for b in BROKEN],
)
def test_broken_variant_gives_the_rule_at_the_line(
    rules: list[Rule], name: str, devices: int | None, rule: str, line: int, severity: Severity
) -> None:
    found = [f for f in findings(name, rules, devices) if f.rule == rule]
    assert len(found) == 1, [f"{f.rule}@{f.first.line if f.first else None}" for f in found]
    (finding,) = found
    assert finding.first is not None
    assert finding.first.line == line
    assert Path(finding.first.file or "").name == name
    assert finding.severity is severity
    assert finding.hint, "every config finding says what to do"


def test_broken_variants_with_an_error_fail_check(capsys: pytest.CaptureFixture[str]) -> None:
    for name, devices, _rule, _line, severity in BROKEN:
        if severity is not Severity.ERROR:
            continue
        extra = ["--devices", str(devices)] if devices else []
        if name in VERSIONS:
            extra += ["--framework-version", VERSIONS[name]]
        code, _ = cli(capsys, "check", f"{CONFIGS}/{name}", *extra, "--format", "json")
        assert code == 1, name


def test_a_version_dependent_check_follows_the_version(rules: list[Rule]) -> None:
    """28 layers on PP 8: Megatron core 0.12 refuses it, core 0.8 (MindSpeed-LLM 2.1.0) starts
    and silently drops 4 layers; wrong in every version, so without one it is an error."""
    configs = read_all([f"{CONFIGS}/ms_qwen25_layers_not_divisible_pp.sh"])
    unknown = {f.rule: f.severity for f in lint(configs, rules)}
    assert unknown["config-layers-not-divisible-by-pp"] is Severity.ERROR
    old = {f.rule: f.severity for f in lint(configs, rules, None, parse("mindspeed-llm=2.1.0"))}
    assert "config-layers-not-divisible-by-pp" not in old
    assert old["config-layers-not-divisible-by-pp-unchecked"] is Severity.WARNING


def test_the_rules_do_not_fire_on_guesses(rules: list[Rule]) -> None:
    """A MindFormers YAML alone does not say the card count: no topology verdict without it."""
    assert not [
        f
        for f in findings("mf_qwen25_dp_mismatch.yaml", rules)
        if f.category == "device-num-mismatch"
    ]


# Seed 001: TP=2, PP=2 on 4 cards, and on 6


def test_seed001_passes_on_its_four_cards(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "check", SEED)
    assert code == 0, out


def test_seed001_passes_from_the_installed_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "msrunwatch", "check", SEED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_seed001_fails_on_six_cards_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "check", SEED, "--devices", "6", "--format", "json")
    assert code == 1
    report = json.loads(out)
    topology = [f for f in report["findings"] if f["rule"] == "config-world-not-divisible"]
    assert len(topology) == 1
    (finding,) = topology
    assert finding["severity"] == "error"
    assert finding["category"] == "device-num-mismatch"
    assert "6 cards are not divisible by TP x PP x CP = 2 x 2 x 1 = 4" in finding["message"]
    # the WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES)) line of the script
    assert finding["occurrences"][0]["line"] == 16
    # working card counts for TP=2, PP=2: 4 or 8
    assert re.search(r"\b4 or 8\b", finding["hint"]), finding["hint"]


def test_seed001_six_cards_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "check", SEED, "--devices", "6")
    assert code == 1
    assert (
        f"{SEED}:16: error config-world-not-divisible: "
        "6 cards are not divisible by TP x PP x CP = 2 x 2 x 1 = 4"
    ) in out
    assert "hint: With 6 cards, use a card count that is a multiple of 4 (4 or 8)" in out


# SARIF


@pytest.mark.parametrize(
    ("name", "devices", "rule", "line"),
    [
        ("mf_qwen25_dp_mismatch.yaml", 8, "config-parallel-product-mismatch", 107),
        ("ms_qwen25_layers_not_divisible_pp.sh", None, "config-layers-not-divisible-by-pp", 22),
    ],
)
def test_sarif_validates_and_points_at_the_line(
    capsys: pytest.CaptureFixture[str], name: str, devices: int | None, rule: str, line: int
) -> None:
    extra = ["--devices", str(devices)] if devices else []
    if name in VERSIONS:
        extra += ["--framework-version", VERSIONS[name]]
    code, out = cli(capsys, "check", f"{CONFIGS}/{name}", *extra, "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SCHEMA)
    (run,) = log["runs"]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = [r for r in run["results"] if r["ruleId"] == rule]
    assert len(results) == 1
    (result,) = results
    assert ids[result["ruleIndex"]] == rule
    assert result["level"] == "error"
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == f"{CONFIGS}/{name}"
    assert physical["region"]["startLine"] == line


# estimate


def estimate_json(capsys: pytest.CaptureFixture[str], path: str) -> dict[str, Any]:
    code, out = cli(capsys, "estimate", path, "--format", "json")
    assert code == 0, out
    (result,) = json.loads(out)
    return dict(result)


def test_estimate_prints_stages_and_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "estimate", SEED)
    assert code == 0
    rows = {int(m[1]): m[0] for m in re.finditer(r"^\s+(\d+)\s+14\s+\d+\s+[\d.]+B\s.*$", out, re.M)}
    assert sorted(rows) == [0, 1], out
    assert "Assumptions:" in out
    assert "dp derived: world 4 / (tp*pp*cp) = 1" in out
    assert re.search(r"^peak: stage 0,", out, re.M)


def test_estimate_summary_uses_the_sizes_every_other_output_uses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The one line to act on reads `34.6 GiB`, not `35,438.9 MiB` (the table keeps MiB)."""
    path = f"{CONFIGS}/mf_qwen25_7b_finetune_8k.yaml"
    code, out = cli(capsys, "estimate", path, "--devices", "8")
    assert code == 0, out
    (peak,) = (line for line in out.splitlines() if line.startswith("peak: "))
    assert peak.startswith(
        "peak: stage 1, 34.6 GiB actual (33.3 GiB used x 1.04), 59.7% of 58.0 GiB: ok"
    ), peak


@pytest.mark.parametrize(("path", "measured"), [(SEED, 55405), (SEED_RECOMPUTE, 35073)])
def test_estimate_stage0_matches_the_seed(
    capsys: pytest.CaptureFixture[str], path: str, measured: int
) -> None:
    result = estimate_json(capsys, path)
    assert result["complete"]
    assert result["assumptions"]
    stage0 = next(s for s in result["stages"] if s["stage"] == 0)
    assert abs(stage0["used_mib"] - measured) <= 0.05 * measured, stage0["used_mib"]


# The rule pack itself


ALLOWED = {
    "device-num-mismatch",
    "strategy-mismatch",
    "pipeline-stage-mismatch",
    "shape-mismatch",
    "memory-over-budget",
    "config-error",
}


def test_config_rules_are_complete(rules: list[Rule]) -> None:
    mine = config_rules(rules)
    assert len(mine) >= 50
    names = set(variables.SCOPES["config"])
    for rule in mine:
        assert rule.id.startswith("config-"), rule.id
        assert Path(rule.path).stem == rule.id
        assert rule.category in ALLOWED, rule.id
        assert rule.at, rule.id
        assert rule.hint and rule.doc and rule.references, rule.id
        assert check_template(rule.hint, names) is None, rule.id


def test_every_firing_case_renders_message_and_hint(rules: list[Rule]) -> None:
    """A placeholder that fails renders as nothing; catch that for every firing case."""
    cases, errors = all_cases(config_rules(rules))
    assert not errors
    checked = 0
    for case in cases:
        if not case.fires or "config" not in case.data:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            _write_case(case, Path(tmp))
            report = _config_runner(Path(tmp), case, rules)
        for finding in (f for f in report.findings if f.rule == case.rule):
            checked += 1
            assert finding.hint.strip(), case.id
            assert "None" not in finding.message and "None" not in finding.hint, case.id
            assert "()" not in finding.hint and "  " not in finding.hint, case.id
    assert checked >= 60


# Hints and messages as a new user reads them (the trial of issue 20)


def _script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "pretrain.sh"
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)


def test_below_one_multiple_the_hint_offers_only_the_next(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --num-layers 28"
    script = _script(tmp_path, f"torchrun pretrain_gpt.py {args}")
    code, out = cli(capsys, "check", script, "--devices", "2")
    assert code == 1
    assert "use a card count that is a multiple of 4 (4), or change" in out
    code, out = cli(capsys, "check", script, "--devices", "6")
    assert code == 1 and "a multiple of 4 (4 or 8)" in out


def test_the_worker_count_says_where_it_came_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    launch = "--master_port 6000 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 28"
    script = _script(tmp_path, f"msrun --worker_num 8 --local_worker_num 8 {launch}")
    code, out = cli(capsys, "check", script, "--devices", "16")
    assert code == 1
    assert "16 workers (--devices) but 1 node(s) x 8 workers per node start 8" in out
    logs = tmp_path / "msrun_log"
    logs.mkdir()
    for rank in (0, 1):
        (logs / f"worker_{rank}.log").write_text(
            f"[WARNING] DISTRIBUTED(21189{rank},ffffb0b63020,python):2025-09-16-10:02:40.118.315 "
            "[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] "
            f"This node {rank} rank id: {rank}\n",
            encoding="utf-8",
        )
    shell = "NPUS_PER_NODE=4\nNNODES=1\nWORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))\n"
    script = _script(
        tmp_path, f"{shell}msrun --worker_num $WORLD_SIZE --local_worker_num 4 {launch}"
    )
    code, out = cli(capsys, "check", script, str(logs))
    assert code == 1
    assert "2 workers (seen in the logs) but 1 node(s) x 4 workers per node start 4" in out
