"""What a CI user relies on in the SARIF, JUnit, GitHub Actions and GitLab Code Quality output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import jsonschema
import pytest

from msrunwatch.drivers.triage import triage
from msrunwatch.judge.model import Finding, Occurrence, Report
from msrunwatch.report import github, gitlab, junit, sarif
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity
from tests.support import ROOT

SCHEMA = json.loads((ROOT / "tests/integration/schemas/sarif-schema-2.1.0.json").read_text())
OOM = "cpu_dp2_oom_alloc_failed"
HEALTHY = "cpu_dp2_success_glog1"
MISSING_NODE = "cpu_cluster_timeout_missing_node"

Triage = Callable[[str], Report]
"""Triage a fixture by name."""


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, rules: list[Rule]) -> Triage:
    """Triage a fixture by its relative path, as a CI job would from the repository root."""
    monkeypatch.chdir(ROOT)

    def triage_fixture(name: str) -> Report:
        return triage([f"fixtures/{name}"], rules)

    return triage_fixture


def sarif_log(report: Report, rules: list[Rule]) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(sarif.render(report, rules))
    jsonschema.validate(log, SCHEMA)
    return log


def with_finding(report: Report, finding: Finding) -> Report:
    return replace(report, findings=(finding,))


def occurrence(rank: int, line: int, text: str = "[ERROR] boom") -> Occurrence:
    return Occurrence(rank, "logs", f"worker_{rank}.log", line, None, False, text)


# SARIF


@pytest.mark.parametrize("scenario", [OOM, HEALTHY, MISSING_NODE, "cpu_dp2_exception_rank1"])
def test_sarif_validates_and_has_one_result_per_finding(
    run: Triage, rules: list[Rule], scenario: str
) -> None:
    report = run(scenario)
    log = sarif_log(report, rules)
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "msrunwatch"
    results = sarif_run["results"]
    assert len(results) == len(report.findings)
    ids = [r["id"] for r in driver["rules"]]
    assert sorted(ids) == sorted({f.rule for f in report.findings})
    for result in results:
        assert ids[result["ruleIndex"]] == result["ruleId"]
        assert result["locations"]


def test_sarif_healthy_run_has_no_results(run: Triage, rules: list[Rule]) -> None:
    (sarif_run,) = sarif_log(run(HEALTHY), rules)["runs"]
    assert sarif_run["results"] == []
    assert sarif_run["tool"]["driver"]["rules"] == []


def test_sarif_root_cause_points_at_the_line_that_failed_first(
    run: Triage, rules: list[Rule]
) -> None:
    (sarif_run,) = sarif_log(run(OOM), rules)["runs"]
    result = next(r for r in sarif_run["results"] if r["properties"]["role"] == "root-cause")
    assert result["ruleId"] == "oom-memory-not-enough"
    assert result["level"] == "error"
    assert result["message"]["text"].endswith(" (ranks 0-1)")
    assert "could not allocate 64.0 GiB" in result["message"]["text"]  # as every view says
    first = result["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == f"fixtures/{OOM}/msrun_log/worker_1.log"
    assert first["region"] == {"startLine": 20}
    assert result["properties"]["ranks"] == [0, 1]
    warning = next(r for r in sarif_run["results"] if r["ruleId"] == "allocate-memory-failed")
    assert warning["level"] == "warning"


def test_sarif_rule_metadata_comes_from_the_rule(run: Triage, rules: list[Rule]) -> None:
    (sarif_run,) = sarif_log(run(OOM), rules)["runs"]
    rule = next(r for r in rules if r.id == "oom-memory-not-enough")
    (desc,) = [d for d in sarif_run["tool"]["driver"]["rules"] if d["id"] == rule.id]
    assert desc["shortDescription"]["text"] == rule.title
    assert desc["help"]["text"] == rule.hint
    assert desc["defaultConfiguration"]["level"] == "error"
    assert desc["properties"]["category"] == "oom"


def test_sarif_run_level_finding_points_at_the_log_directory(
    run: Triage, rules: list[Rule]
) -> None:
    (sarif_run,) = sarif_log(run(MISSING_NODE), rules)["runs"]
    result = next(r for r in sarif_run["results"] if r["ruleId"] == "ranks-never-registered")
    (location,) = result["locations"]
    assert location["physicalLocation"] == {"artifactLocation": {"uri": f"fixtures/{MISSING_NODE}"}}
    assert result["message"]["text"].endswith("(ranks 2-3)")


def test_sarif_fingerprints_are_stable_and_distinct(run: Triage, rules: list[Rule]) -> None:
    def prints() -> list[str]:
        (sarif_run,) = sarif_log(run(MISSING_NODE), rules)["runs"]
        return [r["partialFingerprints"]["msrunwatch/v1"] for r in sarif_run["results"]]

    first = prints()
    assert first == prints()
    assert len(set(first)) == len(first)


def test_sarif_caps_locations_and_encodes_paths(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    many = tuple(
        Occurrence(r, "/abs/my logs", f"worker_{r}.log", 7, None, False, "") for r in range(1200)
    )
    finding = replace(report.findings[0], ranks=tuple(range(1200)), occurrences=many)
    (sarif_run,) = sarif_log(with_finding(report, finding), rules)["runs"]
    (result,) = sarif_run["results"]
    assert len(result["locations"]) == sarif.MAX_LOCATIONS
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file:///abs/my%20logs/worker_0.log"


# JUnit


def test_junit_has_one_testcase_per_rule_and_fails_only_those_that_fired(
    run: Triage, rules: list[Rule]
) -> None:
    report = run(OOM)
    root = ET.fromstring(junit.render(report, rules))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r.id for r in rules]
    fired = {f.rule for f in report.findings}
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == fired
    for element in (root, suite):
        assert element.get("tests") == str(len(rules))
        assert element.get("failures") == str(len(fired))
    oom = next(c for c in cases if c.get("name") == "oom-memory-not-enough")
    assert oom.get("classname") == "msrunwatch.oom"
    failure = oom.find("failure")
    assert failure is not None
    assert failure.get("type") == "error"
    assert failure.get("message") == (  # sizes as a person reads them, as in every text
        "Out of memory: 0_Default/BroadcastTo-op0 could not allocate 64.0 GiB"
    )
    assert f"fixtures/{OOM}/msrun_log/worker_1.log:20 (rank 1)" in (failure.text or "")
    assert "BroadcastTo-op0" in (failure.text or "")
    warning = next(c for c in cases if c.get("name") == "allocate-memory-failed")
    assert warning.find("failure") is not None
    assert warning.find("failure").get("type") == "warning"  # type: ignore[union-attr]


def test_junit_lists_every_finding_of_a_rule_in_one_failure(run: Triage, rules: list[Rule]) -> None:
    root = ET.fromstring(junit.render(run(MISSING_NODE), rules))
    case = next(c for c in root.iter("testcase") if c.get("name") == "cluster-networking-failed")
    (failure,) = case.findall("failure")
    text = failure.text or ""
    assert "MS_SCHED failed" in text and "MS_WORKER failed" in text


def test_junit_healthy_run_passes_every_test(run: Triage, rules: list[Rule]) -> None:
    text = junit.render(run(HEALTHY), rules)
    assert text.startswith("<?xml version=")
    root = ET.fromstring(text)
    assert root.get("failures") == "0"
    assert list(root.iter("failure")) == []


def test_junit_survives_log_text_xml_cannot_hold(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    nasty = 'Out of <memory> & "quotes"\x1b[31m\x00'
    finding = replace(
        report.findings[0], message=nasty, occurrences=(occurrence(1, 20, nasty + "\nnext"),)
    )
    root = ET.fromstring(junit.render(with_finding(report, finding), rules))
    failure = next(root.iter("failure"))
    assert failure.get("message") == 'Out of <memory> & "quotes"\\x1b[31m\\x00'
    assert "logs/worker_1.log:20 (rank 1)" in (failure.text or "")


def test_junit_keeps_findings_of_rules_not_given(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    root = ET.fromstring(junit.render(report, []))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == list(dict.fromkeys(f.rule for f in report.findings))
    assert root.get("tests") == root.get("failures") == str(len(names))


# GitHub Actions


def test_github_annotations_one_per_finding(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    lines = github.render(report, rules).splitlines()
    assert len(lines) == len(report.findings)
    assert lines[0] == (
        f"::error file=fixtures/{OOM}/msrun_log/worker_1.log,line=20,"
        "title=oom-memory-not-enough%3A A kernel's memory allocation failed (memory pool exhausted)"
        "::Out of memory: 0_Default/BroadcastTo-op0 could not allocate 64.0 GiB (ranks 0-1)"
    )
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["::error"] * 2 + ["::warning"] + ["::notice"] * 2


def test_github_escapes_data_and_properties(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    finding = replace(
        report.findings[0],
        rule="odd,rule",
        title="50%: done, mostly\r\n",
        message="100% used,\nthen: died",
        severity=Severity.INFO,
        ranks=(3,),
        occurrences=(Occurrence(3, "a,b:c", "w%.log", 9, None, False, ""),),
    )
    (line,) = github.render(with_finding(report, finding), rules).splitlines()
    assert line == (
        "::notice file=a%2Cb%3Ac/w%25.log,line=9,title=odd%2Crule%3A 50%25%3A done%2C mostly\\x0d%0A"
        "::100%25 used,%0Athen: died (rank 3)"
    )


def test_github_run_level_finding_has_no_file(run: Triage, rules: list[Rule]) -> None:
    lines = github.render(run(MISSING_NODE), rules).splitlines()
    line = next(x for x in lines if "ranks-never-registered" in x)
    assert line.startswith("::error title=ranks-never-registered%3A ")
    assert line.endswith("(ranks 2-3)")


def test_github_summary_lists_every_finding(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    text = github.summary(report, rules)
    assert text.startswith("# msrunwatch check: ")
    assert "2 errors, 1 warning, 2 notices" in text.splitlines()[0]
    for f in report.findings:
        assert f"`{f.rule}`" in text


def test_github_summary_says_when_annotations_are_hidden(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    finding = report.findings[0]
    many = replace(report, findings=tuple(replace(finding, rule=f"r{i}") for i in range(11)))
    assert "GitHub shows only 10 error" in github.summary(many, rules)
    assert "GitHub shows only" not in github.summary(report, rules)


# GitLab Code Quality


def quality(report: Report, rules: list[Rule]) -> list[dict[str, Any]]:
    issues: list[dict[str, Any]] = json.loads(gitlab.render(report, rules))
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert isinstance(issue["location"]["path"], str)
        assert isinstance(issue["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    return issues


def test_gitlab_one_issue_per_occurrence_with_severities(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    issues = quality(report, rules)
    assert len(issues) == sum(len(f.occurrences) for f in report.findings)
    severities = {i["check_name"]: i["severity"] for i in issues}
    assert severities["oom-memory-not-enough"] == "critical"
    assert severities["node-timed-out"] == "major"
    assert severities["allocate-memory-failed"] == "minor"
    oom = [i for i in issues if i["check_name"] == "oom-memory-not-enough"]
    assert [(i["location"]["path"], i["location"]["lines"]["begin"]) for i in oom] == [
        (f"fixtures/{OOM}/msrun_log/worker_1.log", 20),
        (f"fixtures/{OOM}/msrun_log/worker_0.log", 21),
    ]
    assert oom[0]["description"].endswith("(rank 1)")


def test_gitlab_info_findings_are_info(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    finding = replace(report.findings[-1], severity=Severity.INFO)
    issues = quality(with_finding(report, finding), rules)
    assert {i["severity"] for i in issues} == {"info"}


def test_gitlab_fingerprints_are_stable(run: Triage, rules: list[Rule]) -> None:
    first = quality(run(MISSING_NODE), rules)
    assert first == quality(run(MISSING_NODE), rules)


def test_gitlab_run_level_finding_uses_the_log_directory(run: Triage, rules: list[Rule]) -> None:
    issues = quality(run(MISSING_NODE), rules)
    (issue,) = [i for i in issues if i["check_name"] == "ranks-never-registered"]
    assert issue["location"] == {"path": f"fixtures/{MISSING_NODE}", "lines": {"begin": 1}}
    assert issue["severity"] == "critical"


def test_gitlab_caps_occurrences_per_finding(run: Triage, rules: list[Rule]) -> None:
    report = run(OOM)
    many = tuple(occurrence(r, 5) for r in range(80))
    issues = quality(with_finding(report, replace(report.findings[0], occurrences=many)), rules)
    assert len(issues) == gitlab.MAX_PER_FINDING


def test_gitlab_healthy_run_is_an_empty_array(run: Triage, rules: list[Rule]) -> None:
    assert gitlab.render(run(HEALTHY), rules) == "[]\n"


def test_check_of_logs_alone_lists_no_config_rule_as_a_test(
    rules: list[Rule], capsys: pytest.CaptureFixture[str]
) -> None:
    """The trial's N13: `check LOGDIR --format junit` had 78 config rules as green tests."""
    from msrunwatch.cli import main

    assert main(["check", str(ROOT / "fixtures" / OOM), "--format", "junit"]) == 1
    root = ET.fromstring(capsys.readouterr().out.split("\n", 1)[1])
    names = {c.get("name") for c in root.iter("testcase")}
    config = {r.id for r in rules if r.scope.value == "config"}
    assert config and not names & config
    assert "oom-memory-not-enough" in names and len(names) == len(rules) - len(config)


def test_markdown_ranks_table_has_the_text_reports_columns(run: Triage) -> None:
    """The trial's N14: compile/peak/actual/limit/device columns all `-` in Markdown."""
    from msrunwatch.report import markdown

    lines = markdown.render(run(OOM)).splitlines()
    header = next(line for line in lines if line.startswith("| rank"))
    assert header == "| rank | status | exit | last line | first error |"
    rows = [line for line in lines if line.startswith("| 1 |")]
    assert rows and rows[0].startswith("| 1 | failed | - |")
