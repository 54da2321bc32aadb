"""Headlines that agree with their own counts, and a `why:` that says who said it: the
trial found `rank 1 failed first: worker-killed (2 killed)` (no rank counted failed) in 7
fixtures, and `the earliest fault a rank logged about itself` over msrun's console line."""

from __future__ import annotations

import pytest

from msrunwatch.drivers.triage import triage
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule
from tests.support import FIXTURES

HEADLINES = {
    "cpu_kill9_rank1": ("rank 1 was killed first: worker-killed (2 killed)", "msrun reported"),
    "synth_sigkill_console": ("rank 2 was killed first: worker-killed (4 killed)", "msrun"),
    "cpu_2nodes_node1_killed": ("ranks 2-3 failed: node-timeout (2 killed, 2 failed)", ""),
    "cpu_wrong_master_addr_all_nodes": ("ranks 0-1 timed out: network-error (2 timed-out)", ""),
    "cpu_rank1_never_registers": (
        "rank 1 hung first: stalled (1 timed-out, 1 stalled)",
        "rank 1's process ran (its log has lines) but never called init()",
    ),
    "cpu_cluster_timeout_missing_node": (
        "ranks 2-3 left no log: cluster-init-timeout",
        "the scheduler waited for rank(s) 2-3 until the cluster timed out",
    ),
    "cpu_dp2_oom_alloc_failed": ("rank 1 failed first: oom (2 failed)", "logged about itself"),
    "cpu_early_exit_rank1_sysexit0": (  # trial A5: `rank 1 finished, with: early-exit`
        "rank 1 ended before the others: early-exit (1 timed-out, 1 finished)",
        "ended normally while the others still needed it",
    ),
}


@pytest.mark.parametrize("scenario", sorted(HEADLINES))
def test_the_headline_verb_is_the_root_ranks_status(scenario: str, rules: list[Rule]) -> None:
    headline, why = HEADLINES[scenario]
    report = triage([str(FIXTURES / scenario)], rules)
    assert fmt.headline(report).startswith(headline)
    assert report.root_cause is not None and why in report.root_cause.reason


def test_the_job_failed_when_the_cause_names_no_rank(rules: list[Rule]) -> None:
    report = triage([str(FIXTURES / "cpu_scheduler_killed")], rules)
    assert fmt.headline(report).startswith("the job failed: job-stopped")
