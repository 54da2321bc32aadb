"""Issue 21, defect 8: a flood of one ERROR message cost 3.5-4x the CPU per line it cost at
8db4df1 (1M identical ERROR lines: 70.9 CPU-s against 18.9), since the open-world rule
fires on every ERROR line: each was searched by every candidate rule and its finding worked
out again (condition, message, fingerprint), and its count raised by making a new finding.
These tests count that work, not time: a line met again is not searched again, a message
repeated with another time, pid or size is worked out once, and a repeat only counts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from msrunwatch.read.facts import FileFacts, FileRole, Hit
from msrunwatch.read.scan import FileScanner
from msrunwatch.rules import matcher as matcher_module
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule

LINES = 2000
ERROR = (
    "[ERROR] ME(31811,7f40af5fe6c0,python):2026-11-21-05:34:{s:02d}.{ms:03d}.695 "
    "[mindspore/ccsrc/foo.cc:12] Bar] Something went wrong in the thing we were doing\n"
)
OOM = (
    "[ERROR] RUNTIME_FRAMEWORK(31811,7f40af5fe6c0,python):2026-11-21-05:34:{s:02d}.{ms:03d}.695 "
    "[mindspore/ccsrc/runtime/memory_manager_actor.cc:515] SetOpContextMemoryAllocFail] "
    "#umsg#Memory not enough:#umsg#Memory isn't enough and alloc failed, kernel name: "
    "0_Default/BroadcastTo-op0, alloc size: 68719476736B.\n"
)


class Counted:
    """A fresh matcher (nothing remembered from other tests) and the work it does."""

    def __init__(self, rules: list[Rule]) -> None:
        self.matcher = LineMatcher(rules)
        self.rendered = 0
        self.findings = 0
        """Hit objects made: one per line a rule fired on, not another to count it."""

    def searches(self) -> int:
        """Pattern searches made, over every rule (each is charged to the rule's budget)."""
        return sum(self.matcher.budget.rule(rule.id).lines for rule in self.matcher.rules)

    def scan(self, text: str) -> FileFacts:
        scanner = FileScanner("worker_0.log", "logs", FileRole.WORKER, self.matcher, 0)
        scanner.feed(text.encode())
        scanner.close()
        return scanner.facts()


@pytest.fixture
def counted(rules: list[Rule], monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    found = Counted(rules)
    render = matcher_module.render

    def counting(*args: object) -> str:
        found.rendered += 1
        return render(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(matcher_module, "render", counting)
    made = Hit.__init__

    def making(self: Hit, *args: object, **kwargs: object) -> None:
        found.findings += 1
        made(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Hit, "__init__", making)
    yield found


def flood(template: str, same_time: bool) -> str:
    return "".join(
        template.format(s=0 if same_time else i // 1000 % 60, ms=0 if same_time else i % 1000)
        for i in range(LINES)
    )


@pytest.mark.parametrize("template", [ERROR, OOM], ids=["error-line", "oom"])
def test_a_line_met_again_is_not_searched_again(counted: Counted, template: str) -> None:
    facts = counted.scan(flood(template, same_time=True))
    assert sum(h.count for h in facts.hits) == LINES * len(facts.hits)  # every line counted
    assert counted.searches() <= 3, "each candidate rule searches the line once"
    assert counted.rendered <= 3


@pytest.mark.parametrize("template", [ERROR, OOM], ids=["error-line", "oom"])
def test_a_message_repeated_at_other_times_is_worked_out_once(
    counted: Counted, template: str
) -> None:
    facts = counted.scan(flood(template, same_time=False))
    assert [h.line for h in facts.hits] == [1] * len(facts.hits)
    assert all(h.count == LINES for h in facts.hits)
    assert counted.rendered <= 3, "the finding of one message is worked out once"
    assert counted.searches() <= 2 * LINES, "the line's own rules only, once each"
    assert counted.findings <= LINES + 10, "a repeat is counted, not made again"
