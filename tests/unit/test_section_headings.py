"""A rule `under` a heading (torchrun's failure table: the root cause's `rank` line has the
shape of every `rank` line under `Failures:`): it holds only below its heading, in the same
record, and the shortcuts (quiet lines, repeats read once) give what reading every line
with every rule gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from msrunwatch.core.errors import RuleError
from msrunwatch.drivers.triage import triage
from msrunwatch.read import shortcuts
from msrunwatch.read.facts import FileFacts
from msrunwatch.rules.loader import load_rule, load_rules
from tests.support import FIXTURES, ScanText

RULE = "torchrun-root-cause-rank"
SPECULATORS = FIXTURES / "public" / "dev" / "gh-speculators-1115"


def _table(others: list[int], root: int) -> str:
    """torchrun's ChildFailedError table (torch/distributed/elastic/multiprocessing/errors
    format_msg), with its field lines as they are printed."""

    def entry(idx: int, rank: int) -> str:
        return (
            f"[{idx}]:\n  time      : 2026-09-07_13:02:58\n  host      : localhost\n"
            f"  rank      : {rank} (local_rank: {rank})\n  exitcode  : 1 (pid: 1469{rank})\n"
            "  error_file: <N/A>\n"
        )

    failures = "".join(entry(i + 1, r) for i, r in enumerate(others)) or "  <NO_OTHER_FAILURES>\n"
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/bin/torchrun", line 8, in <module>\n'
        "    raise ChildFailedError(\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        + "=" * 60
        + "\ntrain.py FAILED\n"
        + "-" * 60
        + "\nFailures:\n"
        + failures
        + "-" * 60
        + "\nRoot Cause (first observed failure):\n"
        + entry(0, root)
        + "=" * 60
        + "\n"
    )


def _found(facts: FileFacts) -> list[tuple[str, int, str | None, str]]:
    return [(h.rule, h.line, h.subject, h.message) for h in facts.hits]


def _roots(facts: FileFacts) -> list[str | None]:
    return [h.subject for h in facts.hits if h.rule == RULE]


def test_only_the_rank_under_the_heading_is_read(scan_text: ScanText) -> None:
    facts = scan_text((SPECULATORS / "worker_0.log").read_text())
    assert _roots(facts) == ["1"]


@pytest.mark.parametrize("chunk", [None, 7])
def test_two_tables_give_what_every_rule_on_every_line_gives(
    scan_text: ScanText, chunk: int | None
) -> None:
    """The second table's root cause is a line seen before, word for word, under the first
    table's `Failures:`: the repeat must be read again (a heading changes what it says), and
    the heading line, with no literal of any rule's, must never be passed over as quiet."""
    filler = "".join(f"step {i} done\n" for i in range(5))
    text = filler + _table([0, 2], 1) + filler + _table([3], 0) + filler
    fast = scan_text(text, chunk=chunk)
    with shortcuts.off():
        slow = scan_text(text, chunk=chunk)
    assert _roots(fast) == ["1", "0"]  # not 3: the second table's Failures, in a new record
    assert _found(fast) == _found(slow)


def test_a_line_after_the_record_ends_is_not_under_the_heading(scan_text: ScanText) -> None:
    text = (
        "Root Cause (first observed failure):\n[0]:\n"
        "[ERROR] ME(4242,7f3a9c,python):2026-11-21-05:14:59.000.000 [a.cc:1] F] boom\n"
        "  rank      : 5 (local_rank: 1)\n"
    )
    assert _roots(scan_text(text)) == []


def test_the_named_rank_is_the_root_cause_though_the_table_is_in_rank_0s_log() -> None:
    report = triage([str(SPECULATORS)], load_rules())
    assert report.root_cause is not None
    assert report.root_cause.ranks == (1,)
    assert report.root_cause.rule == RULE
    assert "failure table names the rank that failed first" in report.root_cause.reason


def test_a_bad_heading_pattern_is_an_error_that_names_under(tmp_path: Path) -> None:
    path = tmp_path / "my-rule.yaml"
    path.write_text(
        "id: my-rule\ntitle: A rule\ncategory: oom\nseverity: error\n"
        "match: 'rank (?P<r>\\d+)'\nunder: 'Root ('\nmessage: 'rank {r}'\n"
    )
    with pytest.raises(RuleError) as info:
        load_rule(path)
    assert "under is not a valid regex" in str(info.value)
