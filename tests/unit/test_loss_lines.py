"""LossMonitor lines no rule can fire on are passed over on their bytes (read.lossonly): the
facts are those of reading every line whole, whatever the loss and wherever the line falls;
a loss that is not a number written in digits (`nan`, `inf`) is still read by the rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.read import patterns as P
from msrunwatch.read import shortcuts
from msrunwatch.read.extract import Extractor
from msrunwatch.read.lossonly import loss_only
from msrunwatch.rules.matcher import LineMatcher
from tests.unit.test_stage_lines import scan_bytes

STEP = "[INFO] ME(4242,7f3a9c,python):2026-11-21-05:{m:02d}:{s:02d}.000.100 [a/b.cc:1] F] Run graph"
"""A dated INFO line before each step: the cadence reads the dates, and only the lines back
to its 16th interval are parsed; the others are the ones passed over."""
LOSSES = [
    "0.38",
    "2.302585",
    "-1.5",
    "1e+30",
    "7.25E-3",
    "1E5000",  # cann-tbe-compile-error's code E5000, digits masked: read
    "nan",
    "NaN",
    "inf",
    "-inf",
    "0.38 nan",
    "[0.38]",
    "0.38\r",
]
OTHERS = [
    "Traceback (most recent call last):",
    '  File "/home/u/train.py", line 3, in main',
    "RuntimeError:",
    "the body says what",
    "a quiet print",
    "[ERROR] ME(4242,7f,python):2026-11-21-05:14:08.000.000 [a.cc:1] F] boom",
    "epoch: 1, step: 5, loss is 0.5",
]


def steps(losses: list[str], others: dict[int, str]) -> bytes:
    lines = []
    for i, loss in enumerate(losses):
        lines.append(STEP.format(m=i // 60, s=i % 60))
        lines.append(f"epoch: 1 step: {i + 1}, loss is {loss}")
        if i in others:
            lines.append(others[i])
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(LOSSES), min_size=18, max_size=60),
    st.dictionaries(st.integers(0, 59), st.sampled_from(OTHERS), max_size=6),
    st.sampled_from([97, 1 << 12, 1 << 20]),
)
def test_loss_lines_passed_over_give_what_reading_every_line_gives(
    losses: list[str], others: dict[int, str], chunk: int
) -> None:
    data = steps(losses, others)
    fast = scan_bytes(data, chunk)
    with shortcuts.off():
        slow = scan_bytes(data, chunk)
    assert repr(fast) == repr(slow)  # a NaN loss is not equal to itself


def test_finite_losses_are_passed_over_and_nan_ones_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above compares something: plain losses take the fast path (those parsed for
    progress too, without the rules), and a NaN among them is still a finding."""
    passed: list[int] = []
    real = Extractor.progress_passed

    def counting(self: Extractor, around: object) -> None:
        passed.append(1)
        real(self, around)  # type: ignore[arg-type]

    matched: list[str] = []
    rules = Extractor._rules

    def matching(self: Extractor, text: str, *args: Any, **kwargs: Any) -> None:
        matched.append(text)
        rules(self, text, *args, **kwargs)

    monkeypatch.setattr(Extractor, "progress_passed", counting)
    monkeypatch.setattr(Extractor, "_rules", matching)
    losses = ["0.5"] * 40
    losses[3] = "nan"
    facts = scan_bytes(steps(losses, {}), 1 << 20)
    assert len(passed) == 40 - 17 - 1  # the last 17 are parsed, the NaN one is read
    assert [t for t in matched if t.startswith("epoch")] == ["epoch: 1 step: 4, loss is nan"]
    assert [(h.rule, h.line) for h in facts.hits] == [("loss-nan-logged", 8)]


def test_what_the_pattern_passes_over(matcher: LineMatcher) -> None:
    pattern = loss_only(matcher)
    assert pattern is not None
    passed = [b"epoch: 1 step: 3, loss is 0.38", b"epoch: 10, step: 3, loss is 1.5e+30"]
    read = [
        b"epoch: 1 step: 3, loss is nan",
        b"epoch: 1 step: 3, loss is -INF",
        b"epoch: 1 step: 3, loss is 0.38 x",
        b"epoch: 1 step: 3, loss is 1E5000",
        b"xepoch: 1 step: 3, loss is 0.38",
    ]
    assert all(pattern.match(b"\n" + line + b"\n") for line in passed)
    assert not any(pattern.match(b"\n" + line + b"\n") for line in read)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(P.LOSS_SHAPE, fullmatch=True))
def test_the_alphabet_holds_every_character_of_the_shape(line: bytes) -> None:
    """read.lossonly leaves out the rules such a line cannot meet by LOSS_ALPHABET."""
    assert set(line.decode()) <= set(P.LOSS_ALPHABET)
